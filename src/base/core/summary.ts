/** A scope's summary for people: spend against limits, budget status, breaker, activity (scopeSummary). */
import type { BudgetResource } from "./reins-event.js";
import { RESOURCES, limitOf, usedOf, utilization, type MeterRef } from "./meter.js";
import type { Policy } from "./policy.js";
import type { BreakerStatus, TripReason } from "./breaker.js";
import type { State } from "./state.js";

/** One limited resource of a meter. */
export interface BudgetLine {
  resource: BudgetResource;
  used: number;
  limit: number;
  ratio: number;
}

/** A budget's status in the words of seed 001. */
export type BudgetStatus = "active" | "warning" | "paused" | "exhausted";

/** What a person wants to know about a scope: spend against limits, breaker, activity. */
export interface ScopeSummary {
  scope: string;
  /** The agent that started the session, or "" when unknown. */
  agent: string;
  events: number;
  startedAt: number | null;
  lastAt: number | null;
  ended: boolean;
  status: BudgetStatus;
  budget: BudgetLine[];
  task: { id: string; budget: BudgetLine[] } | null;
  breaker: {
    status: BreakerStatus;
    reason: TripReason | null;
    detail: string | null;
    openedAt: number | null;
    trips: number;
  };
}

function lines(state: State, ref: MeterRef, policy: Policy, at: number): BudgetLine[] {
  const meter = ref.meter === "session" ? state.budget.session : state.budget.tasks[ref.task];
  if (meter === undefined) return [];
  const out: BudgetLine[] = [];
  for (const resource of RESOURCES) {
    const limit = limitOf(meter, ref, resource, policy);
    if (limit === null) continue;
    const used = usedOf(meter, resource, at);
    out.push({ resource, used, limit, ratio: utilization(used, limit) });
  }
  return out;
}

/** Summarises a scope's state under a policy; `at` is the time wall-time budgets are measured at. */
export function scopeSummary(state: State, policy: Policy, at = state.lastAt ?? 0): ScopeSummary {
  const budget = lines(state, { meter: "session", task: "" }, policy, at);
  const task =
    state.task === ""
      ? null
      : { id: state.task, budget: lines(state, { meter: "task", task: state.task }, policy, at) };
  const meters = [state.budget.session, ...(task === null ? [] : [state.budget.tasks[state.task]])];
  const paused = meters.some((m) => m?.paused !== undefined && m.paused !== null);
  const worst = Math.max(0, ...budget.map((b) => b.ratio), ...(task?.budget.map((b) => b.ratio) ?? []));
  const status: BudgetStatus = paused
    ? "paused"
    : worst >= policy.budget.pauseAt
      ? "exhausted"
      : worst >= policy.budget.warnAt
        ? "warning"
        : "active";
  const { status: breaker, reason, detail, openedAt, trips } = state.breaker;
  return {
    scope: state.scope,
    agent: state.tally?.agent ?? "",
    events: state.seq,
    startedAt: state.startedAt,
    lastAt: state.lastAt,
    ended: state.ended,
    status,
    budget,
    task,
    breaker: { status: breaker, reason, detail, openedAt, trips },
  };
}
