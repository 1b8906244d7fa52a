/** The moves of one unit of work: starting it, its gates, its iterations, and how it ends or waits. */
import { type StepDraft, handOut, setStatus, settle, taskOf } from "./step-draft.js";
import {
  completionGate,
  isRed,
  iterationGate,
  namesChecks,
  noopGate,
  skippedResult,
  spendSlow,
} from "./gates.js";
import { judgeFailure } from "./retry.js";
import { blockOf } from "./schedule.js";
import { NO_BEHAVIOUR_TYPES, type CheckResult, type FailureClass, type RunEvent } from "./types.js";

/** Records that `id` cannot move on now, and why. */
export function hold(d: StepDraft, id: string, why: string): void {
  d.decisions.push({ kind: "held", task: id, why });
}

/** Keeps skipped slow checks as evidence on the task, and says so. */
function noteSkipped(d: StepDraft, id: string, skipped: readonly string[]): void {
  const task = taskOf(d, id);
  task.lastChecks = [...task.lastChecks.filter((r) => r.skipped !== true), ...skipped.map(skippedResult)];
  if (skipped.length > 0) hold(d, id, `skipped: slow-check budget spent (${skipped.join(", ")})`);
}

/**
 * New results of a task's checks, keeping the skipped ones noted when they were handed out: the report
 * shows what was not run.
 */
export function withSkipped(results: readonly CheckResult[], last: readonly CheckResult[]): CheckResult[] {
  const ran = new Set(results.map((r) => r.name));
  return [...results, ...last.filter((r) => r.skipped === true && !ran.has(r.name))];
}

/** Starts the next agent iteration of `id`: fix mode with its red checks while it is red, else implement. */
export function startIteration(d: StepDraft, id: string, why: string): void {
  const task = taskOf(d, id);
  const mode = task.fixOnly ? "fix" : "implement";
  task.attempts += 1;
  task.retryAt = null;
  task.gate = null;
  d.state.iterations += 1;
  setStatus(d, id, "in_progress", why);
  d.decisions.push({ kind: "scheduled", task: id, attempt: task.attempts, mode });
  const failing = mode === "fix" ? task.lastChecks.filter(isRed) : [];
  const told = task.specChanged;
  delete task.specChanged;
  handOut(d, id, {
    kind: "run_agent",
    task: id,
    attempt: task.attempts,
    mode,
    failing,
    ...(told !== undefined ? { specChanged: told } : {}),
  });
}

/** The checks that passed at `id`'s gates (what its counterfactual runs again), in the plan's order. */
function passedChecks(d: StepDraft, id: string): string[] {
  const passed = new Set(
    taskOf(d, id)
      .lastChecks.filter((r) => r.passed && r.skipped !== true)
      .map((r) => r.name),
  );
  return Object.keys(d.state.checks).filter((name) => passed.has(name));
}

/**
 * Commits `id`, green through its gates, once its evidence is known: its counterfactual comes first when
 * checks passed for it and its type is one that changes behaviour. Unless its spec changed since its work
 * began and no iteration was told yet: then one more iteration comes first (at once, or held while the run
 * may not start one).
 */
export function commitOrRevisit(d: StepDraft, id: string): void {
  const task = taskOf(d, id);
  task.gate = null;
  if (task.specChanged !== undefined) {
    revisit(d, id, "green");
    return;
  }
  const type = d.state.nodes[id]?.type;
  const checks = passedChecks(d, id);
  if (type !== undefined && NO_BEHAVIOUR_TYPES.includes(type)) task.evidence = "no_behaviour";
  else if (checks.length === 0) task.evidence = "unverified";
  else {
    delete task.evidence;
    // The hunk tier is the slowest of the gradient, with a budget of its own: its runs are reserved as the
    // witness starts, and what the shell did not spend is given back when it answers.
    const budget = Math.max(0, d.state.settings.hunkRuns - (d.state.hunkRuns ?? 0));
    const hunks = Math.min(d.state.settings.hunkCap, budget);
    if (hunks > 0) d.state.hunkRuns = (d.state.hunkRuns ?? 0) + hunks;
    handOut(d, id, { kind: "witness", task: id, checks, hunks });
    return;
  }
  handOut(d, id, { kind: "commit", task: id });
}

/**
 * The counterfactual of `id` came back. Without a change to its judges: witnessed when a check went red
 * with its change set aside, unwitnessed when they all passed or there was nothing to set aside. With one:
 * the same, judged with the judges as they were, when its checks passed with them; `changed_judges` when
 * they pass only through the change; either way the change waits for a person. It is committed (an
 * unproven task's work is kept; the run then ends without proof), unless its spec changed meanwhile.
 */
export function witnessed(d: StepDraft, event: Extract<RunEvent, { kind: "witness.ran" }>): void {
  const { task: id, setAside, results, judges, hunks } = event;
  const task = taskOf(d, id);
  const red = results.filter(isRed).map((r) => r.name);
  const changed = judges !== undefined && judges.changed.length > 0;
  task.evidence =
    changed && !judges.passedAsTheyWere
      ? "changed_judges"
      : setAside.length > 0 && red.length > 0
        ? "witnessed"
        : "unwitnessed";
  task.witness = { setAside: setAside.slice(0, 50), red };
  if (judges !== undefined) task.judgesKept = { files: judges.kept.slice(0, 50), total: judges.keptTotal };
  // The checks may pass because what judges them changed: only a person can tell, whether or not a check
  // was seen red before.
  if (changed)
    task.judgeChanges = {
      files: judges.changed.slice(0, 50),
      diff: judges.diff,
      passedAsTheyWere: judges.passedAsTheyWere,
      approved: null,
    };
  else delete task.judgeChanges;
  if (hunks !== undefined) {
    task.hunks = { ...hunks, unwitnessed: hunks.unwitnessed.slice(0, 50) };
    d.state.hunkRuns = Math.max(0, (d.state.hunkRuns ?? 0) - Math.max(0, hunks.allowed - hunks.ran));
  } else delete task.hunks;
  if (task.specChanged !== undefined) revisit(d, id, "green");
  else handOut(d, id, { kind: "commit", task: id });
}

/**
 * One more iteration of `id`, told of the spec sections that changed since its work began, instead of
 * closing it: `what` says how far it got (green, or committed before the change was known).
 */
export function revisit(d: StepDraft, id: string, what: string): void {
  const task = taskOf(d, id);
  const block = blockOf(d.state, { fresh: false, takesSlot: false, agent: true });
  if (block !== null) hold(d, id, block);
  else
    startIteration(
      d,
      id,
      `${what}, but spec ${(task.specChanged ?? []).join(", ")} changed since its work began`,
    );
}

/**
 * Starts a pending leaf: its no-op check when it has checks to run, else its first iteration. A leaf
 * reopened by spec drift goes straight to an iteration: its checks passed before and cannot tell whether
 * the work meets the changed spec.
 */
export function startFresh(d: StepDraft, id: string): void {
  const reopened = taskOf(d, id).specChanged;
  if (reopened !== undefined) {
    startIteration(d, id, `redo: spec ${reopened.join(", ")} changed`);
    return;
  }
  // Only checks that name the task (its own or its ancestors') can show it already done: the plan-wide fast
  // checks passing says nothing about this task.
  // A task that changes no behaviour (docs, config) is never found done by checks of behaviour.
  const type = d.state.nodes[id]?.type;
  if (type !== undefined && NO_BEHAVIOUR_TYPES.includes(type)) {
    startIteration(d, id, `first iteration (a ${type} task: no check can find it already done)`);
    return;
  }
  if (!namesChecks(d.state, id)) {
    startIteration(d, id, "first iteration (no check names it, so none can find it already done)");
    return;
  }
  const { run, skipped, slow } = spendSlow(d.state, noopGate(d.state, id));
  noteSkipped(d, id, skipped);
  if (run.length === 0) {
    startIteration(d, id, "first iteration (no checks to find it already done)");
    return;
  }
  d.state.slowCheckRuns += slow;
  handOut(d, id, { kind: "check_noop", task: id, checks: run });
}

/**
 * Runs the next gate of `id`. After an iteration: the iteration gate, or when it has no checks the
 * completion gate; after a green iteration gate: the completion gate. A gate with nothing to run is passed
 * by, and after the completion gate comes the commit.
 */
export function verify(d: StepDraft, id: string, after: "iteration" | "iteration_gate"): void {
  const task = taskOf(d, id);
  if (after === "iteration") {
    const checks = iterationGate(d.state, id, task.boundaryTouched);
    if (checks.length > 0) {
      task.gate = "iteration";
      handOut(d, id, { kind: "run_checks", task: id, checks });
      return;
    }
  }
  const { run, skipped, slow } = spendSlow(d.state, completionGate(d.state, id, task.boundaryTouched));
  noteSkipped(d, id, skipped);
  if (run.length > 0) {
    d.state.slowCheckRuns += slow;
    task.gate = "completion";
    handOut(d, id, { kind: "run_checks", task: id, checks: run });
    return;
  }
  commitOrRevisit(d, id);
}

/** Ends `id` for good: failed permanently, and its changes rolled back. */
export function giveUp(d: StepDraft, id: string, why: string): void {
  const task = taskOf(d, id);
  setStatus(d, id, "failed", why);
  task.permanent = true;
  task.retryAt = null;
  task.gate = null;
  task.reason = why;
  handOut(d, id, { kind: "rollback", task: id });
}

/** Red checks of `id`: a fix iteration at once, unless the checks budget or the attempts are spent. */
export function onRed(d: StepDraft, id: string): void {
  const task = taskOf(d, id);
  task.failures.checks += 1;
  const red = task.lastChecks.filter(isRed).map((r) => r.name);
  const verdict = judgeFailure(task, "checks", d.state.settings, d.state.now);
  if (verdict.kind === "give_up") {
    giveUp(d, id, `red checks (${red.join(", ")}); ${verdict.why}`);
    return;
  }
  task.fixOnly = true;
  const block = blockOf(d.state, { fresh: false, takesSlot: false, agent: true });
  if (block !== null) hold(d, id, block);
  else startIteration(d, id, `fix iteration: ${red.join(", ")} red`);
}

/** A failed attempt of `id` for another reason than red checks: retry after a backoff, or give up. */
export function onFailure(d: StepDraft, id: string, cls: Exclude<FailureClass, "checks">, why: string): void {
  const task = taskOf(d, id);
  task.failures[cls] += 1;
  const verdict = judgeFailure(task, cls, d.state.settings, d.state.now);
  // Only red checks get a fix verdict, so anything but a retry ends the task here.
  if (verdict.kind !== "retry") {
    giveUp(d, id, verdict.kind === "give_up" ? `${why}; ${verdict.why}` : why);
    return;
  }
  setStatus(d, id, "failed", why);
  task.permanent = false;
  task.retryAt = verdict.at;
  task.gate = null;
  task.reason = why;
  d.decisions.push({ kind: "retry_queued", task: id, class: cls, at: verdict.at });
}

/** Cancels `id`: anything in flight for it is dropped, and work already started on it is rolled back. */
export function cancel(d: StepDraft, id: string, why: string): void {
  const task = taskOf(d, id);
  settle(d, id);
  setStatus(d, id, "canceled", why);
  task.retryAt = null;
  task.gate = null;
  task.reason = why;
  if (task.attempts > 0) handOut(d, id, { kind: "rollback", task: id });
}
