/** What each event does to the run: the answer to an action moves its task on; the others steer the run. */
import { assertNever } from "../../base/core/errors.js";
import { doneProof } from "./done-proof.js";
import { type StepDraft, RUN_KEY, handOut, setStatus, settle, taskOf } from "./step-draft.js";
import { isRed } from "./gates.js";
import { leavesUnder } from "./graph.js";
import { blockOf } from "./schedule.js";
import { isTerminal } from "./task-state.js";
import type { RunEvent } from "./types.js";
import { applySpecChanged } from "./drift.js";
import {
  cancel,
  commitOrRevisit,
  giveUp,
  hold,
  onFailure,
  onRed,
  revisit,
  startIteration,
  verify,
  withSkipped,
  witnessed,
} from "./work.js";

/** An event that `step` applies: everything but the run's start. */
export type AppliedEvent = Exclude<RunEvent, { kind: "run.started" }>;

/**
 * Applies an event that answers an action in flight, or steers the run, to the draft. Continuations of work
 * in flight (its gates, its commit, a fix iteration, a rollback) are handed out here; new work is the
 * scheduler's (advance.ts).
 */
export function apply(d: StepDraft, event: AppliedEvent): void {
  const s = d.state;
  switch (event.kind) {
    case "noop.checked":
      noopChecked(d, event);
      return;
    case "agent.finished":
      agentFinished(d, event);
      return;
    case "checks.ran":
      checksRan(d, event);
      return;
    case "witness.ran":
      settle(d, event.task);
      witnessed(d, event);
      return;
    case "task.committed": {
      settle(d, event.task);
      const task = taskOf(d, event.task);
      task.commit = event.commit;
      task.unverifiedLines = 0;
      task.fixOnly = false;
      task.gate = null;
      // The spec changed while the commit was being made: the work may not meet it, so it is not done yet.
      if (task.specChanged !== undefined) revisit(d, event.task, `committed ${event.commit}`);
      else setStatus(d, event.task, "done", `committed ${event.commit}`);
      return;
    }
    case "commit.failed":
      settle(d, event.task);
      if (event.conflict) onFailure(d, event.task, "conflict", `commit conflict: ${event.reason}`);
      else giveUp(d, event.task, `commit failed: ${event.reason}`);
      return;
    case "task.rolled_back":
    case "clock.ticked":
      settle(d, event.kind === "clock.ticked" ? RUN_KEY : event.task);
      return;
    case "report.written": {
      settle(d, RUN_KEY);
      s.reportWritten = true;
      const proof = doneProof(s);
      d.decisions.push({ kind: "proof", proof });
      s.finished = { proven: proof.holds };
      d.actions.push({ kind: "finish", proven: proof.holds });
      return;
    }
    case "task.canceled":
      for (const leaf of leavesUnder(s.nodes, event.task))
        if (!isTerminal(taskOf(d, leaf))) cancel(d, leaf, `canceled by ${event.by}: ${event.reason}`);
      // A wait may have been for a retry just canceled: the scheduler derives it afresh.
      if (s.inFlight[RUN_KEY] === "wait") settle(d, RUN_KEY);
      return;
    case "run.paused":
      s.paused = event.reason;
      // Waiting for a retry is moot: no retry starts while paused.
      if (s.inFlight[RUN_KEY] === "wait") settle(d, RUN_KEY);
      return;
    case "run.resumed":
      resume(d, event.commits);
      for (const approval of event.approvals ?? []) approve(d, approval);
      return;
    case "spec.changed":
      applySpecChanged(d, event);
      return;
    default:
      return assertNever(event);
  }
}

/** A task's checks before any work: green is a no-op done; red as expected starts (or holds) its first iteration. */
function noopChecked(d: StepDraft, event: Extract<AppliedEvent, { kind: "noop.checked" }>): void {
  const s = d.state;
  settle(d, event.task);
  const task = taskOf(d, event.task);
  task.lastChecks = withSkipped(event.results, task.lastChecks);
  const ran = task.lastChecks.filter((r) => r.skipped !== true);
  if (ran.length > 0 && !ran.some(isRed)) {
    setStatus(d, event.task, "done", "its checks already pass: a no-op");
    task.noop = true;
    task.evidence = "already_done";
    return;
  }
  task.redSeen = true;
  // Red as expected of work not done yet: the first iteration follows in the same slot, unless the
  // run holds new work; then the task waits and is checked afresh when it starts.
  const block = blockOf(s, { fresh: true, takesSlot: false, agent: true });
  if (block !== null) hold(d, event.task, block);
  else startIteration(d, event.task, "first iteration: its checks do not pass yet");
  return;
}

/** An agent's iteration ended: its spend counted, then verified, retried, or held by its budget's pause. */
function agentFinished(d: StepDraft, event: Extract<AppliedEvent, { kind: "agent.finished" }>): void {
  const s = d.state;
  settle(d, event.task);
  const task = taskOf(d, event.task);
  task.tokens += event.tokens;
  task.costUsd += event.costUsd;
  task.unverifiedLines += event.linesChanged;
  if (event.tampering !== undefined && event.tampering.length > 0)
    task.tampering = [...(task.tampering ?? []), ...event.tampering].slice(-20);
  switch (event.outcome) {
    case "ok":
      task.boundaryTouched = event.boundaryTouched;
      setStatus(d, event.task, "verifying", `attempt ${event.attempt} finished`);
      verify(d, event.task, "iteration");
      return;
    case "failed":
      onFailure(d, event.task, "agent", `the agent failed: ${event.summary}`);
      return;
    case "transient":
      onFailure(d, event.task, "transient", `transient failure: ${event.summary}`);
      return;
    case "budget_paused":
      // The task stays in progress with nothing in flight: a resumed run verifies its tree.
      s.paused = event.summary === "" ? `the agent's budget paused the run` : event.summary;
      hold(d, event.task, `paused: ${s.paused}`);
      return;
    default:
      return assertNever(event.outcome);
  }
}

/** A task's checks ran: red goes back to fixing, green at the completion gate commits, green after an iteration verifies. */
function checksRan(d: StepDraft, event: Extract<AppliedEvent, { kind: "checks.ran" }>): void {
  settle(d, event.task);
  const task = taskOf(d, event.task);
  const gate = task.gate;
  task.gate = null;
  task.lastChecks = withSkipped(event.results, task.lastChecks);
  if (event.results.some(isRed)) {
    task.redSeen = true;
    onRed(d, event.task);
    return;
  }
  if (gate === "completion") {
    commitOrRevisit(d, event.task);
    return;
  }
  // Green after an iteration: the changes so far are verified, and the run may expand again.
  task.unverifiedLines = 0;
  task.fixOnly = false;
  verify(d, event.task, "iteration_gate");
  return;
}

/**
 * The run goes on after a crash (or a pause a person lifted): every action in flight is dropped. A task
 * whose commit exists is done and never redone; every other interrupted task is verified from its tree as
 * it is, medium checks included since what the interrupted iteration touched is unknown. A task whose
 * no-op check was interrupted stays pending and is checked again when it starts (a fresh gate there would
 * commit a task nobody worked on). Rollbacks in flight are handed out again; run-wide actions are derived
 * afresh by the scheduler.
 */
function resume(d: StepDraft, commits: Readonly<Record<string, string>>): void {
  const s = d.state;
  const was = { ...s.inFlight };
  for (const key of Object.keys(was)) settle(d, key);
  s.paused = null;
  if (s.finished !== null) {
    s.finished = null;
    s.reportWritten = false;
  }
  for (const id of s.order) {
    const task = s.tasks[id];
    if (task === undefined) continue;
    if (isTerminal(task)) {
      if (was[id] === "rollback") handOut(d, id, { kind: "rollback", task: id });
      continue;
    }
    const commit = Object.hasOwn(commits, id) ? commits[id] : undefined;
    // A reopened task keeps the commit that closed it before: only a newer one closes it again. A commit
    // made while the spec changed is kept, and the task goes on from its tree like an interrupted one.
    if (commit !== undefined && commit !== task.commit && task.specChanged !== undefined)
      task.commit = commit;
    else if (commit !== undefined && commit !== task.commit) {
      setStatus(d, id, "done", `resumed: its commit ${commit} exists`);
      task.commit = commit;
      task.unverifiedLines = 0;
      task.fixOnly = false;
      task.gate = null;
      task.retryAt = null;
      continue;
    }
    if (task.status !== "in_progress" && task.status !== "verifying") continue;
    if (task.status === "in_progress") setStatus(d, id, "verifying", "resumed: verify the tree as it is");
    task.boundaryTouched = true;
    verify(d, id, "iteration");
  }
}

/**
 * A person approved the judges `approval.task`'s agent changed: the task counts as proven, on its other
 * evidence (or, when its checks passed only through the change, on the person's word). An approval of a
 * task with nothing awaiting one changes nothing.
 */
function approve(d: StepDraft, approval: { task: string; by: string; reason: string }): void {
  const task = d.state.tasks[approval.task];
  const edited = task?.judgeChanges;
  if (task === undefined || edited === undefined || edited.approved !== null) {
    d.decisions.push({
      kind: "ignored",
      event: "run.resumed",
      why: `nothing of ${approval.task} awaits approval`,
    });
    return;
  }
  task.judgeChanges = { ...edited, approved: { by: approval.by, reason: approval.reason } };
  d.decisions.push({ kind: "approved", ...approval });
}
