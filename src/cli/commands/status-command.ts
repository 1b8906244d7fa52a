/** `reins status`: budget bars, breaker state and open alerts of one scope, or of the latest sessions. */
import type { Command } from "commander";
import { REINS_BIN } from "../../base/config/package-info.js";
import {
  type StoreContext,
  withStore,
  noStoreYet,
  summaryNow,
  heldLine,
  renderSummary,
} from "../store-access.js";

/** Registers `reins status`. */
export function registerStatusCommand(root: Command, ctx: StoreContext): void {
  const { io } = ctx;
  const json = (value: unknown) => io.stdout(`${JSON.stringify(value, null, 2)}\n`);
  root
    .command("status")
    .description("budget bars, breaker state and open alerts of one scope, or of the latest sessions")
    .argument("[scope]", "e.g. session:abc; all recent scopes when left out")
    .option("--json", "print JSON")
    .option("--all", "every project of the user's: sessions, spend today, open breakers, alerts")
    .option(
      "--daemons",
      "the user's hook daemons and the projects each answers for (as `reins daemon status`)",
    )
    .action(async (scope: string | undefined, opts: { json?: boolean; daemons?: boolean; all?: boolean }) => {
      if (opts.all === true) return (await import("./status-all.js")).statusAll(io, opts.json === true);
      if (opts.daemons === true) {
        // Loaded only for --daemons: a plain `reins status` needs neither the socket probe nor node:http.
        const { listDaemons } = await import("../../guard/daemon/list.js");
        const { formatDaemons } = await import("./daemon-command.js");
        const entries = await listDaemons(io.env);
        return opts.json === true ? json(entries) : io.stdout(formatDaemons(entries, Date.now(), REINS_BIN));
      }
      const none = noStoreYet(ctx);
      if (none !== null) return opts.json === true ? json([]) : io.stdout(none);
      await withStore(ctx, async (store, policy) => {
        const scopes = scope === undefined ? (await store.scopes()).slice(0, 20) : [scope];
        const summaries = await Promise.all(scopes.map((s) => summaryNow(store, s, policy)));
        const alerts = await store.alerts({ acknowledged: false });
        if (opts.json === true)
          return json(
            summaries.map((s) => ({ ...s, openAlerts: alerts.filter((a) => a.scope === s.scope).length })),
          );
        const held = await heldLine(store);
        if (summaries.length === 0)
          return io.stdout(`no sessions yet: run an agent with reins hooks, or \`reins demo\`\n${held}`);
        io.stdout(
          summaries
            .map((s) => renderSummary(s, io, alerts.filter((a) => a.scope === s.scope).length))
            .join("\n") + `\n${held}`,
        );
      });
    });
}
