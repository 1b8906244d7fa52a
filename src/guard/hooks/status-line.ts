/** The line about the session's budget and breaker that every agent's model is told at a turn's start. */
import { formatCount, formatPercent } from "../../base/core/format.js";
import type { Policy } from "../../base/core/policy.js";
import type { State } from "../../base/core/state.js";
import { scopeSummary } from "../../base/core/summary.js";
import type { HookPlan, Notices } from "./agent-adapter.js";
import { contextReply } from "../../base/vocabulary/replies.js";

/** One line for the model about the session's budget and breaker. */
export function statusLine(state: State | null, policy: Policy): string {
  if (state === null) return "reins is guarding this session: no spend recorded yet.";
  const s = scopeSummary(state, policy);
  const tokens = s.budget.find((b) => b.resource === "tokens");
  const budget =
    tokens === undefined
      ? "no token limit"
      : `${formatCount(tokens.used)} of ${formatCount(tokens.limit)} tokens used (${formatPercent(tokens.ratio)})`;
  const breaker =
    s.breaker.status === "closed"
      ? "circuit breaker closed"
      : `circuit breaker ${s.breaker.status.replace("_", "-")}: ${s.breaker.detail ?? ""}`;
  const paused =
    s.status === "paused" ? " The budget is paused: stop and wait for a person to extend it." : "";
  return `reins: session budget ${budget}; ${breaker}.${paused}`;
}

/**
 * The reply to a hook event that opens a turn: the status line as context for the model, and after it what
 * the shell must say about guarding itself (`notices("turn")`).
 */
export function statusReply(hookEventName: string, policy: Policy, notices?: Notices): HookPlan["reply"] {
  return (_answers, state) =>
    contextReply(hookEventName, [statusLine(state, policy), ...(notices?.("turn") ?? [])].join("\n"));
}
