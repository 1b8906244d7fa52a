/** The CLI command `tune`: a policy fitted to the user's own runs, with the evidence for each value. */
import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import { formatCount } from "../../base/core/format.js";
import { ReinsError } from "../../base/core/errors.js";
import { STUCK_BOUND } from "../../guard/evaluate/metamorphic.js";
import { policyForLogs } from "../../guard/evaluate/run-project.js";
import { pointCells, RUNAWAYS, tune, type Tuning } from "../../guard/evaluate/tune.js";
import { table } from "../../base/text/table.js";
import { readLogs, readOutcomes, type EvaluateContext } from "./evaluate-commands.js";
import { counted } from "../../base/text/plural.js";

const HEADS = [
  "productive stopped",
  "productive denied",
  `runaways stopped in bound (≤${STUCK_BOUND.calls} calls)`,
];

/** The evidence of a tuning as text: per threshold each value tried, the budgets, before and after. */
export function tuningText(t: Tuning): string {
  const lines: string[] = [];
  if (t.assumed !== null) lines.push(`assumed: ${t.assumed}`, "");
  for (const k of t.knobs) {
    lines.push(`${k.field} (default ${k.default}, chosen ${k.chosen}):`);
    lines.push(
      table(
        ["value", ...HEADS],
        k.points.map(({ value, point }) => [
          `${value}${value === k.chosen ? " *" : ""}`,
          ...pointCells(point),
        ]),
        ["right", "right", "right", "right"],
      ),
    );
  }
  lines.push("budgets (asked about at the policy's askAt of the limit):");
  lines.push(
    table(
      ["field", "runs", "median spend", "max spend", "limit"],
      t.budgets.map((b) => [
        b.field,
        formatCount(b.runs),
        b.field.endsWith("usd") ? `$${b.median.toFixed(2)}` : formatCount(b.median),
        b.field.endsWith("usd") ? `$${b.max.toFixed(2)}` : formatCount(b.max),
        b.limit === null
          ? "- (no spend in the logs)"
          : b.field.endsWith("usd")
            ? `$${b.limit}`
            : formatCount(b.limit),
      ]),
      ["left", "right", "right", "right", "right"],
    ),
  );
  lines.push(`on these runs and the runaways made from them (seed ${t.seed}):`);
  lines.push(
    table(
      ["policy", ...HEADS],
      [
        ["before", ...pointCells(t.before)],
        ["tuned", ...pointCells(t.after)],
      ],
      ["left", "right", "right", "right"],
    ),
  );
  return `${lines.join("\n")}\n`;
}

/** `tune`: reads the user's runs, fits thresholds and budgets, writes the policy file. */
export function registerTuneCommand(root: Command, ctx: EvaluateContext): void {
  root
    .command("tune")
    .description(
      "fit loop and breaker thresholds and budgets to your own runs; writes a policy file for --policy or reins.config.json",
    )
    .argument("<paths...>", "log files or folders of them (e.g. ~/.claude/projects, ~/.codex/sessions)")
    .requiredOption("--out <file>", "where to write the tuned policy (JSON)")
    .option(
      "--outcomes <file>",
      'a SWE-bench report or { "<run id>": true|false }; without it every run is taken as productive',
    )
    .option("--seed <n>", "the seed of the runaways made from the runs", "1")
    .option(
      "--runaways <n>",
      "how many runaways made from the runs to judge (a seeded sample)",
      `${RUNAWAYS}`,
    )
    .action((paths: string[], opts: { out: string; outcomes?: string; seed: string; runaways: string }) => {
      const sample = Number(opts.runaways);
      if (!Number.isSafeInteger(sample) || sample < 1)
        throw new ReinsError("usage", `--runaways wants a whole number above 0, not "${opts.runaways}"`);
      const seed = Number(opts.seed);
      if (!Number.isSafeInteger(seed) || seed < 0)
        throw new ReinsError("usage", `--seed wants a whole number, not "${opts.seed}"`);
      const outcomes = opts.outcomes !== undefined ? readOutcomes(opts.outcomes) : null;
      const { runs } = readLogs(ctx.io, paths);
      const tuning = tune(runs, outcomes, policyForLogs(ctx.loaded()), seed, { runaways: sample });
      writeFileSync(opts.out, `${JSON.stringify(tuning.policy, null, 2)}\n`);
      ctx.io.stdout(
        `${tuningText(tuning)}\nwrote ${opts.out} (${counted(runs.length, "run")}): use it with \`reins --policy ${opts.out}\` or copy its fields into reins.config.json\n`,
      );
    });
}
