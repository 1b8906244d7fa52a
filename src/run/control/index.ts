/**
 * The run control core of `reins run`: a plan's units of work, scheduled, verified and proven done, as a
 * pure fold of events into state, actions and decisions. No I/O, no clock, no randomness; the shell
 * (src/run/drive/) carries the actions out and feeds their results back.
 */
export type * from "./types.js";
export { begin, initialRunState, step, type RunStarted, type StepResult } from "./step.js";
export { RUN_KEY } from "./step-draft.js";
export { DEFAULT_SETTINGS, resolveSettings, type RunSettingsInput } from "./settings.js";
export { aggregates, statusOfCounts, type StatusCounts } from "./aggregate.js";
export { doneProof } from "./done-proof.js";
export { outcomeOf, type Outcome, type OutcomeKind } from "./outcome.js";
export { canTransition, initialTask, isTerminal } from "./task-state.js";
export {
  ancestorsOf,
  describeCycle,
  effectiveDeps,
  findCycle,
  isLeaf,
  leavesUnder,
  readiness,
  type Readiness,
} from "./graph.js";
export { validatePlan, type ValidPlan } from "./validate-plan.js";
export { candidates, priorityOf, type Candidate } from "./schedule.js";
export { leavesInFlight, redLeaves, unverifiedLines } from "./wip.js";
export { backoffMs, judgeFailure, type FailureVerdict } from "./retry.js";
export { completionGate, isRed, iterationGate, noopGate } from "./gates.js";
