/** `reins export`: a scope's events as a trace for `reins check`. */
import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import { traceHeader, traceLine } from "../../base/trace/trace.js";
import { noScope, policyFor } from "../../guard/people/scope-view.js";
import { type StoreContext, withStore } from "../store-access.js";
import { counted } from "../../base/text/plural.js";

/** Registers `reins export`. */
export function registerExportCommand(root: Command, ctx: StoreContext): void {
  const { io } = ctx;
  root
    .command("export")
    .description("write a scope's events and decisions as a trace that `reins check` replays")
    .argument("<scope>")
    .option("--out <file>", "write to a file instead of stdout")
    .action(async (scope: string, opts: { out?: string }) => {
      await withStore(ctx, async (store, policy) => {
        if ((await store.state(scope)) === null) throw noScope(scope);
        const lines = [
          traceHeader(policyFor(scope, policy), scope.startsWith("pool:") ? "pool" : "standard"),
        ];
        for (let from = 0; ; from += 1_000) {
          const page = await store.events(scope, { from, limit: 1_000 });
          for (const r of page) lines.push(traceLine(r.event, r.decision));
          if (page.length < 1_000) break;
        }
        const text = `${lines.join("\n")}\n`;
        if (opts.out === undefined) return io.stdout(text);
        writeFileSync(opts.out, text);
        io.stdout(`${counted(lines.length - 1, "event")} of ${scope} written to ${opts.out}\n`);
      });
    });
}
