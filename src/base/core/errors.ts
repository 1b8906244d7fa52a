/** reins' one error class (ReinsError) with its stable codes, and assertNever for exhaustive switches. */

/** Stable codes for the errors reins raises; the CLI and HTTP layer map them to exit codes and statuses. */
export type ReinsErrorCode =
  | "invalid_policy"
  | "invalid_event"
  | "invalid_trace"
  | "invalid_log"
  | "scope_mismatch"
  | "store_unavailable"
  | "not_found"
  | "conflict"
  | "usage"
  /** A plan file (src/run/plan/) is unreadable or invalid: the message names its file:line and field. */
  | "invalid_plan"
  /** A `git` command failed (src/run/git/git.ts: `GitError` carries the command, exit code and stderr). */
  | "git_failed"
  /** A run's task was asked to move where its state machine does not go: a bug in the control core. */
  | "invalid_transition"
  /** A person's action (a `human.*` event) asked where nothing shows that a person acts (docs/person-actions.md). */
  | "not_a_person";

const brand = Symbol.for("reins.error");

/** The one error class of reins: a stable `code` and a message fit to show a user as one line. */
export class ReinsError extends Error {
  readonly code: ReinsErrorCode;
  readonly [brand] = true;

  constructor(code: ReinsErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ReinsError";
    this.code = code;
  }

  /** True for any ReinsError, even one from another copy of the package. */
  static is(value: unknown): value is ReinsError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }
}

/** Marks a switch as exhaustive: TypeScript fails to compile if a case is missing. */
export function assertNever(value: never): never {
  throw new ReinsError("invalid_event", `unexpected value ${JSON.stringify(value)}`);
}
