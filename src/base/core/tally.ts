/** The tally: a scope's running totals for metrics, kept in its state, and what each decided event adds. */
import { amount, clip } from "./capped.js";
import { writable, type Draft } from "./cow.js";
import type { Mine, Own } from "./own.js";
import type { ReinsEvent } from "./reins-event.js";

/** At most this many tool names are counted by name in one scope; the rest count as `other`. */
export const TALLY_TOOLS = 32;

const bump = (map: Record<string, number> & Mine, key: string, by = 1) => {
  map[key] = (map[key] ?? 0) + by;
};

/** `<verdict> <guard>` keys made so far: the same few recur on every event, so each is made once. */
const decisionKeys = new Map<string, Map<string, string>>();

let lastVerdict = "allow";
let lastGuard = "none";
let lastKey = "allow none";

function decisionKey(verdict: string, guard: string): string {
  if (verdict === lastVerdict && guard === lastGuard) return lastKey;
  lastVerdict = verdict;
  lastGuard = guard;
  lastKey = memoKey(verdict, guard);
  return lastKey;
}

function memoKey(verdict: string, guard: string): string {
  let byGuard = decisionKeys.get(verdict);
  if (byGuard === undefined) decisionKeys.set(verdict, (byGuard = new Map<string, string>()));
  let key = byGuard.get(guard);
  if (key === undefined) {
    key = `${verdict} ${guard}`;
    // Guards are named by whoever writes them; keep the memo from growing without end.
    if (byGuard.size < 256) byGuard.set(guard, key);
  }
  return key;
}

/**
 * Running totals of a scope, kept in its state so that metrics are derived from the store and stay
 * right across restarts and processes. Every map has a fixed set of keys or a cap.
 */
export interface Tally {
  /** The agent that started the session (`claude`, `codex`, `gemini`), or "" when unknown. */
  agent: string;
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number };
  usd: number;
  /** Requested tool calls by tool name (capped, overflow under `other`). */
  tools: Record<string, number>;
  /** Decisions by `<verdict> <guard>`; the guard is the first one that gave the verdict, `none` for an allow. */
  decisions: Record<string, number>;
  /** Breaker trips by reason. */
  trips: Record<string, number>;
  /** Alerts raised, by kind. */
  alerts: Record<string, number>;
}

/** The tally of a scope before any event. */
export function emptyTally(): Tally {
  return {
    agent: "",
    tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    usd: 0,
    tools: {},
    decisions: {},
    trips: {},
    alerts: {},
  };
}

/** The tally of a state, created for snapshots written before tallies existed. */
export function tallyOf(state: { tally?: Tally }): Tally {
  return (state.tally ??= emptyTally());
}

/** What the tally counts of a decision: its verdict, the guard that gave it, and the alerts it raised. */
export interface Counted {
  verdict: string;
  results: readonly { guard: string; verdict: string }[];
  alerts: readonly { kind: string }[];
}

/** The first guard that gave the decision's verdict, `none` for an allow. */
function decidingGuard(decision: Counted): string {
  if (decision.verdict === "allow") return "none";
  for (const r of decision.results) if (r.verdict === decision.verdict) return r.guard;
  return "none";
}

/**
 * Counts one event and its decision into the tally of `state` (created if it has none); `tripped` is why
 * the breaker tripped on it, if it did. Writes through `draft` (see cow.ts).
 */
export function tally(
  state: Own<{ tally?: Tally }>,
  event: ReinsEvent,
  decision: Counted,
  tripped: string | null,
  draft: Draft,
): void {
  // A state from an older snapshot has none yet (not `tallyOf`: it would hand back the shared tally writable).
  if (state.tally === undefined) state.tally = emptyTally();
  const t = writable(draft, state, "tally")!;
  switch (event.kind) {
    case "session.started":
      if (event.agent !== undefined && t.agent === "") t.agent = clip(event.agent);
      break;
    case "usage.recorded": {
      const tokens = writable(draft, t, "tokens");
      tokens.input += amount(event.inputTokens);
      tokens.output += amount(event.outputTokens);
      tokens.cacheRead += amount(event.cacheReadTokens);
      tokens.cacheWrite += amount(event.cacheWriteTokens);
      // Rounded to nano-dollars, like the meters, so sums of many small costs do not drift.
      t.usd = Math.round((t.usd + amount(event.costUsd)) * 1e9) / 1e9;
      break;
    }
    case "tool.requested": {
      const tool = clip(event.tool);
      const known = tool in t.tools || Object.keys(t.tools).length < TALLY_TOOLS;
      bump(writable(draft, t, "tools"), known ? tool : "other");
      break;
    }
    default:
      break;
  }
  bump(writable(draft, t, "decisions"), decisionKey(decision.verdict, decidingGuard(decision)));
  if (tripped !== null) bump(writable(draft, t, "trips"), tripped);
  if (decision.alerts.length > 0) {
    const alerts = writable(draft, t, "alerts");
    for (const alert of decision.alerts) bump(alerts, alert.kind);
  }
}
