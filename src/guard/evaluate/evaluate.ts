/** Judges reins' judgement on runs whose outcome is known: false stops, and calls saved on failed runs. */
import { ReinsError } from "../../base/core/errors.js";
import { isToolHook } from "../logs/run.js";
import type { ReplayedCall, ReplayedRun } from "./replay.js";

/**
 * Judges reins' judgement on runs whose outcome is known: a successful run that reins would have stopped
 * is a false stop; a failed run it stops early saves the tool calls after the stop.
 */

/** Known outcomes by run id: true for a run that succeeded. */
export type Outcomes = Map<string, boolean>;

/**
 * Reads outcomes: a SWE-bench report (`resolved_ids` and `unresolved_ids`) or a plain map
 * `{ "<run id>": true | false }`.
 */
export function parseOutcomes(data: unknown, name = "outcomes"): Outcomes {
  if (data === null || typeof data !== "object" || Array.isArray(data))
    throw new ReinsError(
      "usage",
      `${name}: expected a JSON object (a SWE-bench report or { "<run id>": true|false })`,
    );
  const row = data as Record<string, unknown>;
  const outcomes: Outcomes = new Map();
  if (Array.isArray(row.resolved_ids) || Array.isArray(row.unresolved_ids)) {
    for (const [key, value] of [
      ["resolved_ids", true],
      ["unresolved_ids", false],
    ] as const) {
      const ids = row[key] ?? [];
      if (!Array.isArray(ids)) throw new ReinsError("usage", `${name}: ${key} must be a list of run ids`);
      for (const id of ids) if (typeof id === "string") outcomes.set(id, value);
    }
    return outcomes;
  }
  for (const [id, value] of Object.entries(row)) {
    if (typeof value !== "boolean")
      throw new ReinsError("usage", `${name}: the outcome of "${id.slice(0, 80)}" must be true or false`);
    outcomes.set(id, value);
  }
  return outcomes;
}

/** Where reins stepped in on one run. */
export interface Intervention {
  /** The tool call it happened at (1-based; 0 before the first). */
  step: number;
  hook: string;
  guard: string;
  told: string;
}

/** One run's verdict. */
export interface RunVerdict {
  id: string;
  /** true: succeeded; false: failed; null: unknown. */
  outcome: boolean | null;
  steps: number;
  stop: Intervention | null;
  deny: Intervention | null;
  advised: boolean;
  refusedDone: number;
  /** Tool calls that would not have run after the stop. */
  saved: number;
  /**
   * Stops and denies after the first intervention: the real agent would have acted on what reins said
   * first, so these are not evidence of anything and are not counted.
   */
  later: number;
  /** Stops whose premise a log cannot hold (a deny the agent never saw), left uncounted. */
  liveOnly: number;
}

/** Counts over one group of runs (successful, failed or unknown). */
export interface GroupCounts {
  runs: number;
  stopped: number;
  denied: number;
  advised: number;
  refusedDone: number;
  steps: number;
  saved: number;
  /** Runs with stops or denies after their first intervention (not counted). */
  later: number;
  /** Runs with a stop only a live agent can earn (not counted). */
  liveOnly: number;
}

/** Per guard: how often it was the first to stop or first to deny, on successful and failed runs. */
export interface GuardCounts {
  guard: string;
  grade: "stop" | "deny";
  successful: number;
  failed: number;
  unknown: number;
}

export interface Evaluation {
  successful: GroupCounts;
  failed: GroupCounts;
  unknown: GroupCounts;
  /** Stops that landed on failed runs, of all stops on runs with a known outcome (null without stops). */
  precision: number | null;
  guards: GuardCounts[];
  runs: RunVerdict[];
}

function intervention(call: ReplayedCall | null): Intervention | null {
  if (call === null) return null;
  return { step: call.step, hook: call.hook, guard: call.guard ?? "?", told: call.told ?? "" };
}

/**
 * Rules whose premise a replayed log cannot hold: the breaker's `ignored_denials` says the agent made a
 * denied call again, but a logged agent never saw reins' deny. They are measured with scripted and live
 * agents (test/judgement-live.test.ts), never counted as a stop in a replay.
 */
export const LIVE_ONLY = new Set(["circuit-breaker:ignored_denials"]);

/** Whether a replayed call is an intervention: a stop anywhere, or a deny of a tool call. */
const intervenes = (c: ReplayedCall) => c.grade === "stop" || (isToolHook(c.hook) && c.grade === "deny");

/**
 * The verdict on one replayed run, as far as the log can support it: only the first intervention counts
 * (after it the real agent would have acted on what reins said), and a stop whose premise the log cannot
 * hold (LIVE_ONLY) is not one.
 */
export function verdictOf(replayed: ReplayedRun, outcome: boolean | null): RunVerdict {
  const all = replayed.calls.filter(intervenes);
  const liveOnly = all.filter((c) => c.guard !== undefined && LIVE_ONLY.has(c.guard)).length;
  const counted = all.filter((c) => c.guard === undefined || !LIVE_ONLY.has(c.guard));
  const first = counted[0] ?? null;
  const stop = first !== null && first.grade === "stop" ? intervention(first) : null;
  const deny = first !== null && isToolHook(first.hook) ? intervention(first) : null;
  const before = stop === null ? replayed.steps : Math.max(0, stop.step - (isToolHook(stop.hook) ? 1 : 0));
  return {
    id: replayed.run.id,
    outcome,
    steps: replayed.steps,
    stop,
    deny,
    advised: replayed.advise !== null,
    refusedDone: replayed.refusedDone,
    saved: replayed.steps - before,
    later: Math.max(0, counted.length - 1),
    liveOnly,
  };
}

const empty = (): GroupCounts => ({
  runs: 0,
  stopped: 0,
  denied: 0,
  advised: 0,
  refusedDone: 0,
  steps: 0,
  saved: 0,
  later: 0,
  liveOnly: 0,
});

/** Counts verdicts by outcome and by the guard that first stopped or denied. */
export function evaluate(verdicts: readonly RunVerdict[]): Evaluation {
  const groups = { successful: empty(), failed: empty(), unknown: empty() };
  const guards = new Map<string, GuardCounts>();
  for (const v of verdicts) {
    const key = v.outcome === true ? "successful" : v.outcome === false ? "failed" : "unknown";
    const g = groups[key];
    g.runs += 1;
    g.steps += v.steps;
    if (v.stop !== null) {
      g.stopped += 1;
      g.saved += v.saved;
    }
    if (v.deny !== null) g.denied += 1;
    if (v.advised) g.advised += 1;
    if (v.later > 0) g.later += 1;
    if (v.liveOnly > 0) g.liveOnly += 1;
    if (v.refusedDone > 0) g.refusedDone += 1;
    for (const [grade, at] of [
      ["stop", v.stop],
      ["deny", v.deny],
    ] as const) {
      if (at === null) continue;
      const id = `${grade}/${at.guard}`;
      const row = guards.get(id) ?? { guard: at.guard, grade, successful: 0, failed: 0, unknown: 0 };
      row[key] += 1;
      guards.set(id, row);
    }
  }
  const stops = groups.successful.stopped + groups.failed.stopped;
  return {
    ...groups,
    precision: stops === 0 ? null : groups.failed.stopped / stops,
    guards: [...guards.values()].sort((a, b) =>
      a.grade === b.grade
        ? b.successful + b.failed + b.unknown - (a.successful + a.failed + a.unknown)
        : a.grade === "stop"
          ? -1
          : 1,
    ),
    runs: [...verdicts],
  };
}
