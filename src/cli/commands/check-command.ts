/** `reins check`: a trace replayed, failing on the first divergence from its recorded decisions. */
import type { Command } from "commander";
import { checkTrace, readTrace } from "../../base/trace/trace.js";
import type { AgentContext } from "../context.js";
import { EXIT } from "../exit-codes.js";
import { counted } from "../../base/text/plural.js";

/** Registers `reins check`. */
export function registerCheckCommand(root: Command, ctx: AgentContext): void {
  const { io, result } = ctx;
  const policyOf = () => ctx.loaded();
  root
    .command("check")
    .description(
      "replay a trace (JSON Lines of events with recorded decisions); fail on the first divergence",
    )
    .argument("<trace>", "trace file")
    .action((file: string) => {
      const trace = readTrace(file);
      const policy = trace.policy ?? policyOf().policy;
      const checked = checkTrace(trace, policy);
      const d = checked.divergence;
      if (d === null) {
        io.stdout(
          `ok: ${counted(checked.events, "event")} replayed, ${counted(checked.checked, "recorded decision")} ${checked.checked === 1 ? "matches" : "match"}\n`,
        );
        return;
      }
      const brief = (x: typeof d.now) =>
        `${x.verdict}${x.needsHuman ? " +human" : ""} [${x.results
          .filter((r) => r.verdict !== "allow")
          .map((r) => r.guard)
          .join(", ")}]`;
      io.stdout(
        `divergence at ${file}:${d.line} (${d.event.scope}, ${d.event.kind}): recorded ${brief(d.recorded)}, now ${brief(d.now)}\n` +
          `  recorded: ${JSON.stringify(d.recorded.instructions)}\n  now:      ${JSON.stringify(d.now.instructions)}\n`,
      );
      result.code = EXIT.failed;
    });
}
