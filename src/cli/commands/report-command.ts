/** `reins report`: a run's evidence report written and printed, or the runs listed. */
import { join } from "node:path";
import type { Command } from "commander";
import { ReinsError } from "../../base/core/errors.js";
import { checkpointFrom } from "../../run/drive/checkpoint.js";
import { buildReport, reportMarkdown, writeReportFiles } from "../../run/drive/report.js";
import { readRunTrace, runDir } from "../../run/drive/run-trace.js";
import { openStore } from "../../base/store/open.js";
import { table } from "../../base/text/table.js";
import { type RunContext } from "../run-setup.js";

/** Registers `reins report`. */
export function registerReportCommand(root: Command, ctx: RunContext): void {
  const { io } = ctx;
  root
    .command("report")
    .description(
      "write and print a run's evidence report (.reins/runs/<run>/report.md); without a run, list the runs",
    )
    .argument("[run]", "the run's id")
    .option("--json", "print report.json instead")
    .action(async (id: string | undefined, opts: { json?: boolean }) => {
      const loaded = ctx.loaded();
      const store = await openStore(loaded.storeSpec, loaded.root);
      try {
        if (id === undefined) {
          const runs = await store.runs();
          if (opts.json === true) {
            io.stdout(`${JSON.stringify(runs)}\n`);
            return;
          }
          if (runs.length === 0) {
            io.stdout("no runs yet: start one with `reins run`\n");
            return;
          }
          io.stdout(
            table(
              ["run", "status", "updated", "plan", "tasks"],
              runs.map((r) => [
                r.id,
                r.status,
                new Date(r.updatedAt).toISOString(),
                typeof r.summary.plan === "string" ? r.summary.plan : "",
                JSON.stringify(r.summary.counts ?? {}),
              ]),
            ),
          );
          return;
        }
        const stored = await store.run(id);
        if (stored === null) throw new ReinsError("usage", `no run ${id} in ${store.location}`);
        const checkpoint = checkpointFrom(stored);
        const dir = runDir(loaded.root, id);
        const report = buildReport(checkpoint.meta, checkpoint.state, readRunTrace(join(dir, "trace.jsonl")));
        writeReportFiles(dir, report);
        io.stdout(opts.json === true ? `${JSON.stringify(report, null, 2)}\n` : reportMarkdown(report));
      } finally {
        await store.close();
      }
    });
}
