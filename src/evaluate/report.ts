import { formatCount, formatDuration } from "../core/format.js";
import { table } from "../cli/table.js";
import { isToolHook } from "../logs/run.js";
import type { Evaluation, GroupCounts } from "./evaluate.js";
import type { ReplayedRun } from "./replay.js";

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
  const parts = [`${replayed.run.format} ${replayed.run.id}: ${formatCount(replayed.steps)} tool calls`];
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
