/** The run control core's entry points: start a run, then fold each event into state, actions and decisions. */
import { type StepDraft, draftStep } from "./step-draft.js";
import { advance } from "./advance.js";
import { ignoreReason } from "./answers.js";
import { apply } from "./apply.js";
import { isLeaf } from "./graph.js";
import { resolveSettings } from "./settings.js";
import { initialTask } from "./task-state.js";
import type { RunAction, RunDecision, RunEvent, RunState, TaskRun } from "./types.js";
import { validatePlan } from "./validate-plan.js";

/** What one step yields: the next state, the actions to carry out, and the decisions to record. */
export interface StepResult {
  state: RunState;
  actions: RunAction[];
  decisions: RunDecision[];
}

/** The event that starts a run. */
export type RunStarted = Extract<RunEvent, { kind: "run.started" }>;

/**
 * The state of a run that has just started: nothing tried, nothing in flight. Throws ReinsError("invalid_plan")
 * for a plan that cannot run (duplicate ids, unknown deps or checks, a cycle named `a → b → a`) and
 * ReinsError("invalid_policy") for settings out of range.
 */
export function initialRunState(event: RunStarted): RunState {
  const plan = validatePlan(event.nodes, event.checks);
  const settings = resolveSettings(event.settings);
  const tasks: Record<string, TaskRun> = {};
  for (const id of plan.order) if (isLeaf(plan.nodes[id]!)) tasks[id] = initialTask();
  return {
    run: event.run,
    now: event.at,
    seq: 1,
    nodes: plan.nodes,
    order: plan.order,
    checks: plan.checks,
    settings,
    tasks,
    inFlight: {},
    refs: {},
    iterations: 0,
    slowCheckRuns: 0,
    reportWritten: false,
    paused: null,
    finished: null,
    ...(event.unverified === true ? { unverified: true } : {}),
  };
}

const result = (d: StepDraft): StepResult => ({ state: d.state, actions: d.actions, decisions: d.decisions });

/** Starts a run and hands out its first actions: `initialRunState`, then what `step` does after any event. */
export function begin(event: RunStarted): StepResult {
  const d = draftStep(initialRunState(event));
  advance(d);
  return result(d);
}

/**
 * Applies one event and hands out the next actions, marking them in flight. Pure: `state` is not touched,
 * and the same state and event always give the same result. An event that answers nothing in flight is
 * ignored: the state comes back as it was, with one `ignored` decision.
 */
export function step(state: RunState, event: RunEvent): StepResult {
  const why = ignoreReason(state, event);
  if (why !== null || event.kind === "run.started")
    return { state, actions: [], decisions: [{ kind: "ignored", event: event.kind, why: why ?? "" }] };
  const d = draftStep(state);
  d.state.seq += 1;
  d.state.now = Math.max(d.state.now, event.at);
  apply(d, event);
  advance(d);
  return result(d);
}
