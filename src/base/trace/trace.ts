/** Trace files: JSON Lines of events and decisions, which `reins check` replays and `reins export` writes. */
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { poolPipeline } from "../core/batch.js";
import type { Decision } from "../core/decision.js";
import { advance } from "../core/engine.js";
import { ReinsError } from "../core/errors.js";
import { parseEvent } from "../core/event-schema.js";
import type { ReinsEvent } from "../core/reins-event.js";
import { resolvePolicy, type Policy } from "../core/policy.js";
import { initialState, type State } from "../core/state.js";

/**
 * Traces are JSON Lines: an optional header `{"reins":"trace","version":1,"policy":{...}}`, then one
 * `{"event":...,"decision":...}` per line. `reins check` replays them; `reins demo --trace` and
 * `reins export` write them.
 */

export interface TraceLine {
  line: number;
  event: ReinsEvent;
  decision: Decision | null;
}

export interface Trace {
  policy: Policy | null;
  /** `pool` for a pool's log, which only the budget guard decides. */
  pipeline: "standard" | "pool";
  lines: TraceLine[];
}

/** The header line of a trace recorded under `policy`. */
export function traceHeader(policy: Policy, pipeline: Trace["pipeline"] = "standard"): string {
  return JSON.stringify({ reins: "trace", version: 1, policy, ...(pipeline === "pool" ? { pipeline } : {}) });
}

/** One trace line. */
export function traceLine(event: ReinsEvent, decision: Decision): string {
  return JSON.stringify({ event, decision });
}

/** Parses a trace's text; a bad line throws a ReinsError naming the line. */
export function parseTrace(text: string, name = "trace"): Trace {
  let policy: Policy | null = null;
  let pipeline: Trace["pipeline"] = "standard";
  const lines: TraceLine[] = [];
  const rows = text.split("\n");
  for (let i = 0; i < rows.length; i++) {
    const raw = rows[i]?.trim() ?? "";
    if (raw === "") continue;
    const where = `${name}:${i + 1}`;
    let data: unknown;
    try {
      data = JSON.parse(raw);
    } catch {
      throw new ReinsError("invalid_trace", `${where}: not valid JSON`);
    }
    if (data === null || typeof data !== "object")
      throw new ReinsError("invalid_trace", `${where}: expected a JSON object`);
    const row = data as Record<string, unknown>;
    if (row.reins === "trace") {
      if (i !== 0 && lines.length > 0)
        throw new ReinsError("invalid_trace", `${where}: the header must come first`);
      try {
        policy = resolvePolicy(row.policy, `policy in ${name}`);
        if (row.pipeline === "pool") pipeline = "pool";
      } catch (error) {
        throw new ReinsError("invalid_trace", `${where}: ${(error as Error).message}`);
      }
      continue;
    }
    let event: ReinsEvent;
    try {
      event = parseEvent("event" in row ? row.event : row);
    } catch (error) {
      throw new ReinsError("invalid_trace", `${where}: ${(error as Error).message}`);
    }
    lines.push({ line: i + 1, event, decision: (row.decision as Decision | undefined) ?? null });
  }
  return { policy, pipeline, lines };
}

/** Reads and parses a trace file. */
export function readTrace(path: string): Trace {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ReinsError(
      "invalid_trace",
      `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  return parseTrace(text, path);
}

/** Where a replay first decided differently from the recording. */
export interface Divergence {
  line: number;
  event: ReinsEvent;
  recorded: Decision;
  now: Decision;
}

/**
 * What must stay the same for a decision to be the same: the verdict, whether a person must act, what the
 * agent is told, the alerts, and every guard's result that is not a plain allow. A guard added later that
 * allows an event leaves old traces replaying; any change of what reins says or does does not.
 */
function gist(decision: Decision): unknown {
  return {
    seq: decision.seq,
    verdict: decision.verdict,
    needsHuman: decision.needsHuman,
    instructions: decision.instructions,
    alerts: decision.alerts,
    results: decision.results.filter(
      (r) => r.verdict !== "allow" || r.effects !== undefined || r.message !== undefined,
    ),
  };
}

/** Replays a trace with today's engine; returns the first divergence, or null when every decision matches. */
export function checkTrace(
  trace: Trace,
  policy: Policy,
): { checked: number; events: number; divergence: Divergence | null } {
  const states = new Map<string, State>();
  let checked = 0;
  for (const { line, event, decision } of trace.lines) {
    let state = states.get(event.scope);
    if (state === undefined) {
      state = initialState(event.scope);
      states.set(event.scope, state);
    }
    const now = advance(state, event, policy, trace.pipeline === "pool" ? poolPipeline : undefined);
    if (decision === null) continue;
    checked += 1;
    if (!isDeepStrictEqual(gist(JSON.parse(JSON.stringify(now)) as Decision), gist(decision))) {
      return { checked, events: trace.lines.length, divergence: { line, event, recorded: decision, now } };
    }
  }
  return { checked, events: trace.lines.length, divergence: null };
}
