/** The CLI commands `replay` and `evaluate`: reins' judgement measured on agents' own logs. */
import { readFileSync, writeFileSync } from "node:fs";
import type { Command } from "commander";
import { ReinsError } from "../../base/core/errors.js";
import type { Policy } from "../../base/core/policy.js";
import { evaluate, parseOutcomes, verdictOf, type Outcomes } from "../../guard/evaluate/evaluate.js";
import {
  evaluationText,
  metamorphicSweepText,
  metamorphicText,
  replaySummary,
  replayTimeline,
  sweepText,
} from "../../guard/evaluate/report.js";
import { judgeMetamorphosis, METAMORPHOSES, type Metamorphosis } from "../../guard/evaluate/metamorphic.js";
import { sweepPolicies } from "../../guard/evaluate/sweep.js";
import { replayRun, traceOf } from "../../guard/evaluate/replay.js";
import { policyForLogs } from "../../guard/evaluate/run-project.js";
import { logFiles, readLog } from "../../guard/logs/load.js";
import type { LoggedRun } from "../../guard/logs/run.js";
import type { LoadedPolicy } from "../../base/config/load-policy.js";
import type { Io } from "../io.js";

/** What `replay` and `evaluate` need from the program. */
export interface EvaluateContext {
  io: Io;
  loaded(): LoadedPolicy;
}

/** Reads an outcomes file (a SWE-bench report or a plain map); a bad one is one clear line. */
export function readOutcomes(path: string): Outcomes {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ReinsError(
      "usage",
      `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new ReinsError("usage", `${path}: not valid JSON`);
  }
  return parseOutcomes(data, path);
}

/** The logs under `paths`; files that are no log reins reads are skipped with a line each. */
export function readLogs(io: Io, paths: string[]): { runs: LoggedRun[]; unreadable: number } {
  const runs: LoggedRun[] = [];
  let unreadable = 0;
  for (const file of paths.flatMap((p) => logFiles(p))) {
    try {
      runs.push(readLog(file));
    } catch (error) {
      if (!ReinsError.is(error)) throw error;
      unreadable += 1;
      io.stderr(`reins: skipped ${error.message}\n`);
    }
  }
  if (runs.length === 0) throw new ReinsError("usage", `no logs reins reads under ${paths.join(", ")}`);
  return { runs, unreadable };
}

/** `replay` and `evaluate`: reins' judgement on agents' own logs, before it guards anything live. */
export function registerEvaluateCommands(root: Command, ctx: EvaluateContext): void {
  const { io } = ctx;
  // Logs come from other projects: the checks read from this folder's files are not theirs.
  const policy = (): Policy => policyForLogs(ctx.loaded());
  root
    .command("replay")
    .description("replay an agent's own log through reins: where it would advise, deny or stop, and why")
    .argument(
      "<log>",
      "a Claude Code transcript, Codex rollout, Gemini CLI chat, or mini-swe-agent/SWE-agent trajectory",
    )
    .option("--json", "print every call with its events, decisions and grade as JSON")
    .option("--trace <file>", "also write the replay as a trace that `reins check` replays")
    .action((file: string, opts: { json?: boolean; trace?: string }) => {
      const resolved = policy();
      const replayed = replayRun(readLog(file), resolved);
      if (opts.trace !== undefined) writeFileSync(opts.trace, traceOf(replayed));
      if (opts.json === true) {
        const { run, calls, ...rest } = replayed;
        io.stdout(
          `${JSON.stringify({ ...rest, state: undefined, run: { ...run, calls: undefined }, calls })}\n`,
        );
        return;
      }
      io.stdout(`${replayTimeline(replayed).join("\n")}\n\n${replaySummary(replayed)}\n`);
    });

  root
    .command("evaluate")
    .description(
      "replay many logs and measure reins' judgement: false stops on successful runs, failed runs caught",
    )
    .argument("<paths...>", "log files or folders of them")
    .option(
      "--outcomes <file>",
      'a SWE-bench report (resolved_ids/unresolved_ids) or { "<run id>": true|false }',
    )
    .option("--json", "print the evaluation and every run's verdict as JSON")
    .option(
      "--sweep <field=values>",
      "evaluate each value of one policy field, e.g. verification.maxEditsWithoutVerification=10,20,30",
    )
    .option(
      "--transform <kind>",
      "judge runs made from the logs instead: stuck (a real failing call repeated), cycle (an edit and its check repeated, nothing changing) or productive (tests after each edit, edits that change content)",
    )
    .option("--seed <n>", "with --transform: the seed of its choices", "1")
    .action(
      (
        paths: string[],
        opts: { outcomes?: string; json?: boolean; sweep?: string; transform?: string; seed: string },
      ) => {
        const kind = opts.transform;
        if (kind !== undefined && !(METAMORPHOSES as readonly string[]).includes(kind))
          throw new ReinsError("usage", `--transform is one of ${METAMORPHOSES.join(", ")}, not "${kind}"`);
        const seed = Number(opts.seed);
        if (!Number.isSafeInteger(seed) || seed < 0)
          throw new ReinsError("usage", `--seed wants a whole number, not "${opts.seed}"`);
        const outcomes =
          opts.outcomes !== undefined ? readOutcomes(opts.outcomes) : new Map<string, boolean>();
        const { runs, unreadable } = readLogs(io, paths);
        if (kind !== undefined) {
          transformed(ctx, runs, kind as Metamorphosis, seed, opts);
          return;
        }
        const judge = (p: Policy) =>
          evaluate(runs.map((run) => verdictOf(replayRun(run, p), outcomes.get(run.id) ?? null)));
        if (opts.sweep !== undefined) {
          const points = sweepPolicies(policy(), opts.sweep).map(({ value, policy: p }) => ({
            value,
            evaluation: judge(p),
          }));
          io.stdout(
            opts.json === true
              ? `${JSON.stringify(points.map(({ value, evaluation: { runs: _runs, ...rest } }) => ({ value, ...rest })))}\n`
              : sweepText(opts.sweep.split("=")[0] ?? "", points),
          );
          return;
        }
        const evaluation = judge(policy());
        if (opts.json === true) io.stdout(`${JSON.stringify({ ...evaluation, unreadable })}\n`);
        else io.stdout(evaluationText(evaluation));
        if (unreadable > 0 && opts.json !== true)
          io.stdout(`\n${unreadable} file(s) were not logs reins reads.\n`);
      },
    );
}

/** `evaluate --transform`: the runaways (or productive twins) made from `runs`, per policy of a sweep. */
function transformed(
  ctx: EvaluateContext,
  runs: LoggedRun[],
  kind: Metamorphosis,
  seed: number,
  opts: { json?: boolean; sweep?: string },
): void {
  const { io } = ctx;
  const policy = (): Policy => policyForLogs(ctx.loaded());
  if (opts.sweep !== undefined) {
    const points = sweepPolicies(policy(), opts.sweep).map(({ value, policy: p }) => ({
      value,
      summary: judgeMetamorphosis(runs, kind, seed, p),
    }));
    io.stdout(
      opts.json === true
        ? `${JSON.stringify(points)}\n`
        : metamorphicSweepText(opts.sweep.split("=")[0] ?? "", points),
    );
    return;
  }
  const summary = judgeMetamorphosis(runs, kind, seed, policy());
  io.stdout(
    opts.json === true ? `${JSON.stringify({ ...summary, seed })}\n` : metamorphicText(summary, seed),
  );
}
