/** The text of `reins replay` and `reins evaluate`: timelines, summaries, precision, sweep curves. */
import { formatCount, formatDuration } from "../../base/core/format.js";
import { table } from "../../base/text/table.js";
import { isToolHook } from "../logs/run.js";
import type { Evaluation, GroupCounts } from "./evaluate.js";
import { STUCK_BOUND, type MetamorphicSummary } from "./metamorphic.js";
import type { ReplayedRun } from "./replay.js";
import { counted } from "../../base/text/plural.js";

/** How `reins replay` and `reins evaluate` print what they found. */

/** One line per tool call, and per other hook call where reins said something. */
export function replayTimeline(replayed: ReplayedRun): string[] {
  const start = replayed.calls[0]?.at ?? 0;
  const lines: string[] = [];
  for (const call of replayed.calls) {
    const tool = isToolHook(call.hook);
    if (!tool && call.grade === "allow" && call.invalid === undefined) continue;
    const when = `+${formatDuration(Math.max(0, call.at - start))}`;
    const what = tool
      ? `#${call.step} ${call.tool ?? "?"} ${JSON.stringify((call.label ?? "").replace(/\s+/g, " ").slice(0, 70))}`
      : `   ${call.hook}${call.tool !== undefined ? ` ${call.tool}` : ""}`;
    const answer =
      call.invalid !== undefined
        ? `bad input (${call.invalid}): allowed`
        : call.grade === "allow"
          ? ""
          : `${call.grade.toUpperCase()} [${call.guard ?? "?"}] ${(call.told ?? "").replace(/^reins: /, "")}`;
    lines.push(`${when.padStart(9)}  ${what}${answer !== "" ? `  → ${answer}` : ""}`);
  }
  return lines;
}

export function replaySummary(replayed: ReplayedRun): string {
  const parts = [`${replayed.run.format} ${replayed.run.id}: ${counted(replayed.steps, "tool call")}`];
  if (replayed.stop !== null)
    parts.push(`stopped at call ${replayed.stop.step} by ${replayed.stop.guard ?? "?"}`);
  else parts.push("never stopped");
  if (replayed.deny !== null)
    parts.push(`first deny at call ${replayed.deny.step} (${replayed.deny.guard ?? "?"})`);
  if (replayed.refusedDone > 0) parts.push(`"done" refused ${replayed.refusedDone}×`);
  return parts.join("; ");
}

/** A count and its share, to a tenth of a percent: the aims are as fine as 1%. */
const pct = (n: number, of: number) =>
  of === 0 ? "-" : `${formatCount(n)} (${((100 * n) / of).toFixed(1)}%)`;

function groupRow(name: string, g: GroupCounts): string[] {
  return [
    name,
    formatCount(g.runs),
    pct(g.stopped, g.runs),
    pct(g.denied, g.runs),
    pct(g.advised, g.runs),
    pct(g.refusedDone, g.runs),
    pct(g.saved, g.steps),
  ];
}

/** The evaluation as text: runs by outcome, precision, and the guards that stepped in first. */
export function evaluationText(e: Evaluation): string {
  const rows = [groupRow("successful", e.successful), groupRow("failed", e.failed)];
  if (e.unknown.runs > 0) rows.push(groupRow("unknown outcome", e.unknown));
  let text = table(
    ["runs", "n", "stopped", "any deny", "advised", '"done" refused', "tool calls cut"],
    rows,
    ["left", "right", "right", "right", "right", "right", "right"],
  );
  const stops = e.successful.stopped + e.failed.stopped;
  text += `\nstops on failed runs: ${e.precision === null ? "no stops" : `${formatCount(e.failed.stopped)} of ${formatCount(stops)} (${(100 * e.precision).toFixed(1)}%)`}`;
  text += `; failed runs caught: ${pct(e.failed.stopped, e.failed.runs)}; tool calls of failed runs saved: ${pct(e.failed.saved, e.failed.steps)}\n`;
  text += `only the first stop or deny of a run counts (the agent would have acted on it); runs with more after it, not counted: successful ${formatCount(e.successful.later)}, failed ${formatCount(e.failed.later)}`;
  const live = e.successful.liveOnly + e.failed.liveOnly + e.unknown.liveOnly;
  text += `; stops a log cannot support (a deny the agent never saw), not counted: ${formatCount(live)} run(s)\n`;
  if (e.guards.length > 0) {
    text += `\nfirst to step in, by guard:\n${table(
      ["grade", "guard", "successful", "failed", ...(e.unknown.runs > 0 ? ["unknown"] : [])],
      e.guards.map((g) => [
        g.grade,
        g.guard,
        formatCount(g.successful),
        formatCount(g.failed),
        ...(e.unknown.runs > 0 ? [formatCount(g.unknown)] : []),
      ]),
      ["left", "left", "right", "right", "right"],
    )}`;
  }
  return text;
}

/** The curve of a sweep: per value, false stops and denies on successful runs, failed runs caught. */
export function sweepText(field: string, points: { value: unknown; evaluation: Evaluation }[]): string {
  return table(
    [field, "successful stopped", "successful denied", "failed caught", "stops on failed", '"done" refused'],
    points.map(({ value, evaluation: e }) => [
      JSON.stringify(value),
      pct(e.successful.stopped, e.successful.runs),
      pct(e.successful.denied, e.successful.runs),
      pct(e.failed.stopped, e.failed.runs),
      e.precision === null ? "-" : `${(100 * e.precision).toFixed(1)}%`,
      pct(e.successful.refusedDone, e.successful.runs),
    ]),
    ["right", "right", "right", "right", "right", "right"],
  );
}

const spreadText = (s: { median: number; max: number } | null) =>
  s === null ? "-" : `${formatCount(s.median)} / ${formatCount(s.max)}`;

/** One transformation's row: runs, stops, stops within the bound, what it took, denies. */
function metamorphicRow(s: MetamorphicSummary): string[] {
  const productive = s.kind === "productive";
  return [
    pct(s.stopped, s.runs),
    productive ? `${formatCount(s.inherited)} as before` : pct(s.withinBound + s.stoppedEarlier, s.runs),
    spreadText(s.calls),
    spreadText(s.tokens),
    pct(s.denied, s.runs),
    formatCount(s.broken.length),
  ];
}

const METAMORPHIC_HEADS = [
  "stopped",
  `in bound (≤${STUCK_BOUND.calls} calls, ≤${formatCount(STUCK_BOUND.tokens)} tokens)`,
  "calls to stop (median / max)",
  "tokens to stop (median / max)",
  "any deny",
  "broken",
];

/** `reins evaluate --transform` as text: the mutants, what reins did, and the runs that break the promise. */
export function metamorphicText(s: MetamorphicSummary, seed: number): string {
  const promise =
    s.kind === "productive"
      ? "no productive run is stopped (stops the unchanged run had too are counted apart)"
      : `every runaway is stopped within ${STUCK_BOUND.calls} tool calls and ${formatCount(STUCK_BOUND.tokens)} tokens of its start`;
  let text = `${s.kind} runs made from ${formatCount(s.runs + s.skipped)} logs (seed ${seed}): ${formatCount(s.runs)} made, ${formatCount(s.skipped)} with nothing to transform\n\n`;
  text += table(
    ["transform", ...METAMORPHIC_HEADS],
    [[s.kind, ...metamorphicRow(s)]],
    ["left", "right", "right", "right", "right", "right", "right"],
  );
  text += `\n${s.broken.length === 0 ? "kept" : "BROKEN"}: ${promise}${s.broken.length > 0 ? `; first: ${s.broken.slice(0, 5).join(", ")}` : ""}\n`;
  return text;
}

/** The curve of a sweep over transformed runs. */
export function metamorphicSweepText(
  field: string,
  points: { value: unknown; summary: MetamorphicSummary }[],
): string {
  return table(
    [field, ...METAMORPHIC_HEADS],
    points.map(({ value, summary }) => [JSON.stringify(value), ...metamorphicRow(summary)]),
    ["right", "right", "right", "right", "right", "right", "right"],
  );
}
