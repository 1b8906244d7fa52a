/**
 * reins' pure engine: events in, decisions out. No I/O, no clock, no randomness (see
 * docs/architecture.md, "The pure cores and the shell"). The shell (stores, hooks, CLI, server) lives in
 * other entry points.
 */
export type * from "./reins-event.js";
export { isHumanEvent } from "./reins-event.js";
export { ReinsError, assertNever, type ReinsErrorCode } from "./errors.js";
export { defaultPolicy, policySchema, resolvePolicy, type Policy, type PolicyInput } from "./policy.js";
export { CAPS, STATE_BOUND_BYTES, cloneState, initialState, type Meter, type State } from "./state.js";
export type { Breaker, BreakerStatus, TripReason } from "./breaker.js";
export { reduce, applyEvent } from "./reduce.js";
export { callSignature, commandKey } from "./keys.js";
export { advance, decide, replay } from "./engine.js";
export type { Decision, DecisionAlert, GuardVerdict } from "./decision.js";
export { pipeline, type Pipeline } from "./pipeline.js";
export type { AlertKind, Effect, Extra, Guard, GuardCategory, GuardResult, Verdict } from "./guard.js";
export { pass, advise, deny, stop } from "./guard.js";
export { gradeOf, type Grade } from "./grade.js";
export { defaultGuards } from "./guards/index.js";
export { RESOURCES, limitOf, usedOf, utilization } from "./meter.js";
export { Timeline, timeline, fnv1a, type TimelineOptions, type CallResult } from "./timeline.js";
export { scopeSummary, type BudgetLine, type ScopeSummary } from "./summary.js";
export type { Store, StoredRun } from "./store.js";
export type { Answer, BatchResult, LogRecord, StoredAlert } from "./batch.js";
