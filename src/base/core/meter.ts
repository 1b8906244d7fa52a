/** Budget meters: the resources they limit, their limits with extensions, their use, the levels reached. */
import type { BudgetResource } from "./reins-event.js";
import type { Policy } from "./policy.js";
import { LEVEL, type Meter, type State } from "./state.js";
import type { Shared } from "./own.js";

/** Every resource a budget can limit, in the order they are checked. */
export const RESOURCES: readonly BudgetResource[] = [
  "tokens",
  "usd",
  "premiumRequests",
  "wallTimeMs",
  "toolCalls",
];

/** Which meter: the session's, or the task's named by `task`. */
export interface MeterRef {
  meter: "session" | "task";
  task: string;
}

/** The limit of `resource` on a meter, including human extensions; null when unlimited. */
export function limitOf(
  meter: Shared<Meter>,
  ref: MeterRef,
  resource: BudgetResource,
  policy: Policy,
): number | null {
  const limits = ref.meter === "session" ? policy.budget.session : policy.budget.task;
  let base = limits[resource];
  if (
    ref.meter === "task" &&
    resource === "tokens" &&
    meter.taskType !== null &&
    meter.taskType in policy.budget.taskTypes
  ) {
    base = policy.budget.taskTypes[meter.taskType] ?? null;
  }
  if (base === null) return null;
  return base + (meter.extra[resource] ?? 0);
}

/** What a meter has used of `resource` at time `at`. */
export function usedOf(meter: Shared<Meter>, resource: BudgetResource, at: number): number {
  return resource === "wallTimeMs" ? Math.max(0, at - meter.startedAt) : meter.spent[resource];
}

/** Used over limit; 0 for an unlimited resource. A zero limit counts as fully used. */
export function utilization(used: number, limit: number | null): number {
  if (limit === null) return 0;
  if (limit <= 0) return used > 0 ? Infinity : 1;
  return used / limit;
}

/** The threshold level a utilization has reached. */
export function levelOf(ratio: number, policy: Policy): number {
  const { warnAt, askAt, pauseAt } = policy.budget;
  if (ratio >= pauseAt) return LEVEL.pause;
  if (ratio >= askAt) return LEVEL.ask;
  if (ratio >= warnAt) return LEVEL.warn;
  return LEVEL.none;
}

/** The meter a reference points at, if it exists. */
export function meterAt(state: State, ref: MeterRef): Meter | undefined {
  return ref.meter === "session" ? state.budget.session : state.budget.tasks[ref.task];
}

/** The meters an event of the current task charges: the session's, and the task's when there is one. */
export function activeMeters(state: State): readonly MeterRef[] {
  if (state.task === "" || state.budget.tasks[state.task] === undefined) return SESSION_ONLY;
  return [SESSION_REF, { meter: "task", task: state.task }];
}

/** The session's meter, and the list of it alone: asked for on every spending event, made once. */
export const SESSION_REF: Readonly<MeterRef> = { meter: "session", task: "" };
const SESSION_ONLY: readonly MeterRef[] = [SESSION_REF]; // not frozen: see NO_ITEMS in empty.ts

/** A short label for a meter, for messages: `session`, `task "x"`, or `pool "team"` for a pool's scope. */
export function meterLabel(ref: MeterRef, scope = ""): string {
  if (ref.meter === "task") return `task "${ref.task}"`;
  if (!scope.startsWith("pool:")) return "session";
  const [name, period] = scope.slice(5).split("@");
  return period === undefined ? `pool "${name}"` : `pool "${name}" (${period})`;
}
