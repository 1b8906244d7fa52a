/** What a failed attempt leads to: a fix iteration, a retry after a backoff, or the end of the task. */
import type { FailureClass, RunSettings, TaskRun } from "./types.js";

/** The backoff before retry `n` (1 for the first): base × 2^(n-1), capped at max. Logical ms. */
export function backoffMs(backoff: RunSettings["backoff"], n: number): number {
  if (backoff.baseMs === 0) return 0;
  return Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.max(0, n - 1));
}

/** The verdict on a failure. */
export type FailureVerdict =
  /** Red checks: the next iteration fixes them, at once. */
  | { kind: "fix" }
  /** The agent, the infrastructure or a commit conflict: retry at `at`. */
  | { kind: "retry"; at: number }
  /** Budget spent: the task fails for good. */
  | { kind: "give_up"; why: string };

/**
 * Judges a failure of class `cls`, with `task.failures[cls]` already counting it. The task gives up when its
 * attempts are spent or the failures of that class exceed its retries; otherwise red checks get a fix
 * iteration (no backoff: the agent has something concrete to fix) and other classes a retry after backoff.
 */
export function judgeFailure(
  task: Pick<TaskRun, "attempts" | "failures">,
  cls: FailureClass,
  settings: Pick<RunSettings, "maxAttempts" | "retries" | "backoff">,
  now: number,
): FailureVerdict {
  if (task.attempts >= settings.maxAttempts)
    return { kind: "give_up", why: `attempts spent (${task.attempts} of ${settings.maxAttempts})` };
  const n = task.failures[cls];
  if (n > settings.retries[cls])
    return { kind: "give_up", why: `${cls} retries spent (${n - 1} of ${settings.retries[cls]})` };
  return cls === "checks" ? { kind: "fix" } : { kind: "retry", at: now + backoffMs(settings.backoff, n) };
}
