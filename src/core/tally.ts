import { amount, clip } from "./capped.js";
import type { AlertKind, GuardResult, Verdict } from "./guard.js";
import type { ReinsEvent } from "./events.js";
import { emptyTally, type State, type Tally } from "./state.js";

/** At most this many tool names are counted by name in one scope; the rest count as `other`. */
export const TALLY_TOOLS = 32;

const bump = (map: Record<string, number>, key: string, by = 1) => {
  map[key] = (map[key] ?? 0) + by;
};

/** The tally of a state, created for snapshots written before tallies existed. */
export function tallyOf(state: State): Tally {
  return (state.tally ??= emptyTally());
}

/** Counts one event and its decision; `tripsBefore` is the breaker's trip count before the event. */
export function tally(
  state: State,
  event: ReinsEvent,
  decision: { verdict: Verdict; results: readonly GuardResult[]; alerts: readonly { kind: AlertKind }[] },
  tripsBefore: number,
): void {
  const t = tallyOf(state);
  switch (event.kind) {
    case "session.started":
      if (event.agent !== undefined && t.agent === "") t.agent = clip(event.agent);
      break;
    case "usage.recorded":
      t.tokens.input += amount(event.inputTokens);
      t.tokens.output += amount(event.outputTokens);
      t.tokens.cacheRead += amount(event.cacheReadTokens);
      t.tokens.cacheWrite += amount(event.cacheWriteTokens);
      // Rounded to nano-dollars, like the meters, so sums of many small costs do not drift.
      t.usd = Math.round((t.usd + amount(event.costUsd)) * 1e9) / 1e9;
      break;
    case "tool.requested": {
      const tool = clip(event.tool);
      const known = tool in t.tools || Object.keys(t.tools).length < TALLY_TOOLS;
      bump(t.tools, known ? tool : "other");
      break;
    }
    default:
      break;
  }
  const deciding = decision.results.find((r) => r.verdict === decision.verdict && r.verdict !== "allow");
  bump(t.decisions, `${decision.verdict} ${deciding?.guard ?? "none"}`);
  if (state.breaker.trips > tripsBefore && state.breaker.reason !== null) bump(t.trips, state.breaker.reason);
  for (const alert of decision.alerts) bump(t.alerts, alert.kind);
}
