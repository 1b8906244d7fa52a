/** `reins sessions`: every scope in the store, most recently active first. */
import type { Command } from "commander";
import { formatCount } from "../../base/core/format.js";
import { table } from "../../base/text/table.js";
import { type StoreContext, withStore, noStoreYet, summaryNow } from "../store-access.js";

/** Registers `reins sessions`. */
export function registerSessionsCommand(root: Command, ctx: StoreContext): void {
  const { io } = ctx;
  const json = (value: unknown) => io.stdout(`${JSON.stringify(value, null, 2)}\n`);
  root
    .command("sessions")
    .description("every scope in the store, most recently active first")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }) => {
      const none = noStoreYet(ctx);
      if (none !== null) return opts.json === true ? json([]) : io.stdout(none);
      await withStore(ctx, async (store, policy) => {
        const summaries = await Promise.all((await store.scopes()).map((s) => summaryNow(store, s, policy)));
        if (opts.json === true) return json(summaries);
        const rows = summaries.map((s) => {
          const tokens = s.budget.find((b) => b.resource === "tokens");
          return [
            s.scope,
            String(s.events),
            s.lastAt === null ? "-" : new Date(s.lastAt).toISOString().replace("T", " ").slice(0, 19),
            tokens === undefined ? "-" : `${formatCount(tokens.used)} / ${formatCount(tokens.limit)}`,
            s.status,
            s.breaker.status,
          ];
        });
        io.stdout(
          table(["scope", "events", "last activity (UTC)", "tokens", "budget", "breaker"], rows, [
            "left",
            "right",
          ]),
        );
      });
    });
}
