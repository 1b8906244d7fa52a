/** A unit of work's statuses: the transitions allowed between them, and which of them end the task. */
import { ReinsError } from "../../base/core/errors.js";
import type { TaskRun, TaskStatus } from "./types.js";

/**
 * The transitions a task may make, from each status. `failed` here is a retryable failure: a permanent one
 * is terminal like `done` and `canceled`, so nothing leaves it.
 */
const ALLOWED: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  // in_progress: an iteration starts; done: its checks already pass (no-op), or a resumed run finds its
  // commit; canceled: by a person, or because a dependency can never be done.
  pending: ["in_progress", "done", "canceled"],
  // verifying: the agent finished; failed: the agent failed; done: a resumed run finds its commit.
  in_progress: ["verifying", "failed", "canceled", "done"],
  // in_progress: a fix iteration after red checks; failed: red with its budget spent, or the commit failed.
  verifying: ["in_progress", "done", "failed", "canceled"],
  // in_progress: the retry starts; done: a resumed run finds its commit.
  failed: ["in_progress", "canceled", "done"],
  done: [],
  canceled: [],
};

/**
 * The moves spec drift makes, outside the run's own flow: a done task whose spec section changed goes back
 * to pending, its history kept. Done stays terminal for everything else, so no answer of the shell
 * reopens it.
 */
const REOPEN: Readonly<Partial<Record<TaskStatus, readonly TaskStatus[]>>> = {
  done: ["pending"],
};

/** Why a task moves: the run's own flow, or a change in the spec it implements. */
export type TransitionCause = "flow" | "drift";

/** A fresh unit of work: pending, nothing tried. */
export function initialTask(): TaskRun {
  return {
    status: "pending",
    permanent: false,
    attempts: 0,
    failures: { checks: 0, agent: 0, transient: 0, conflict: 0 },
    retryAt: null,
    lastChecks: [],
    fixOnly: false,
    commit: null,
    unverifiedLines: 0,
    tokens: 0,
    costUsd: 0,
    noop: false,
    gate: null,
    boundaryTouched: false,
    reason: null,
  };
}

/** Whether a task is over: done, failed for good, or canceled (seed 004, clause 5). */
export function isTerminal(task: Pick<TaskRun, "status" | "permanent">): boolean {
  return task.status === "done" || task.status === "canceled" || (task.status === "failed" && task.permanent);
}

/** Whether a task in `from` (permanently, for `failed`) may move to `to`. */
export function canTransition(from: TaskStatus, permanent: boolean, to: TaskStatus): boolean {
  if (from === "failed" && permanent) return false;
  return ALLOWED[from].includes(to);
}

/** Whether spec drift may move a task from `from` to `to`: only done → pending (a reopen). */
export function canReopen(from: TaskStatus, to: TaskStatus): boolean {
  return REOPEN[from]?.includes(to) ?? false;
}

/**
 * Throws ReinsError("invalid_transition") unless `task` may move to `to` for `cause`. The core only asks
 * for allowed moves, so a throw here is a bug in the core, never a user's mistake.
 */
export function assertTransition(
  id: string,
  task: Pick<TaskRun, "status" | "permanent">,
  to: TaskStatus,
  cause: TransitionCause = "flow",
): void {
  if (cause === "drift" ? canReopen(task.status, to) : canTransition(task.status, task.permanent, to)) return;
  const from = task.status === "failed" && task.permanent ? "failed (permanent)" : task.status;
  throw invalidTransition(`task ${id} cannot go from ${from} to ${to}`);
}

/** The error of a move the core should never make. */
export function invalidTransition(message: string): ReinsError {
  return new ReinsError("invalid_transition", message);
}
