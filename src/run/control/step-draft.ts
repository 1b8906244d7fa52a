/** The state one step builds: a copy of the state it started from, with what the step hands out and decides. */
import { own } from "./graph.js";
import { assertTransition, invalidTransition, type TransitionCause } from "./task-state.js";
import type { RunAction, RunDecision, RunState, TaskRun, TaskStatus } from "./types.js";

/** The key of run-wide actions (wait, write_report) in `inFlight`. */
export const RUN_KEY = "";

/** The state being built by one step, and its outputs so far. */
export interface StepDraft {
  state: RunState;
  actions: RunAction[];
  decisions: RunDecision[];
}

type WithoutRef<A> = A extends { ref: number } ? Omit<A, "ref"> : never;

/** An action as a step asks for it; `handOut` adds its `ref`. */
export type ActionRequest = WithoutRef<RunAction>;

/**
 * A draft of `state`: the parts a step changes are copied, the plan (nodes, checks, settings) is shared,
 * so the state passed in is never touched.
 */
export function draftStep(state: RunState): StepDraft {
  const tasks: Record<string, TaskRun> = {};
  for (const [id, task] of Object.entries(state.tasks))
    tasks[id] = { ...task, failures: { ...task.failures } };
  return {
    state: { ...state, tasks, inFlight: { ...state.inFlight }, refs: { ...state.refs } },
    actions: [],
    decisions: [],
  };
}

/** The run of leaf `id`; the core only asks for leaves it knows, so a miss is a bug. */
export function taskOf(d: StepDraft, id: string): TaskRun {
  const task = own(d.state.tasks, id);
  if (task === undefined) throw invalidTransition(`no unit of work ${id} in the run`);
  return task;
}

/** Moves a leaf to `to`, validated by task-state.ts for `cause`, and records the transition with why. */
export function setStatus(
  d: StepDraft,
  id: string,
  to: TaskStatus,
  why: string,
  cause: TransitionCause = "flow",
): void {
  const task = taskOf(d, id);
  assertTransition(id, task, to, cause);
  d.decisions.push({ kind: "transition", task: id, from: task.status, to, why });
  task.status = to;
  // `permanent` describes a failure only; the caller marks a permanent one after the move.
  if (to !== "failed") task.permanent = false;
}

/**
 * Hands an action out under `key` (a task id, or RUN_KEY), marking it in flight with this step's sequence
 * number as its ref. One key holds one action: handing out another while one is in flight is a bug.
 */
export function handOut(d: StepDraft, key: string, request: ActionRequest): void {
  if (Object.hasOwn(d.state.inFlight, key))
    throw invalidTransition(`${key || "the run"} already has ${d.state.inFlight[key]} in flight`);
  const action = { ...request, ref: d.state.seq } as RunAction;
  d.state.inFlight[key] = action.kind;
  d.state.refs[key] = d.state.seq;
  d.actions.push(action);
}

/** Marks the action under `key` answered (or dropped): nothing is in flight for it any more. */
export function settle(d: StepDraft, key: string): void {
  delete d.state.inFlight[key];
  delete d.state.refs[key];
}
