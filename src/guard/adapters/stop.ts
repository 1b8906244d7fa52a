/**
 * How a program learns that reins stopped its agent's session, the same for every adapter: the stop as
 * data (`ReinsStop`) and the error an adapter throws out of the SDK's loop (`ReinsStopped`).
 */
import type { Decision } from "../../base/core/index.js";
import { reasonOf } from "../../base/vocabulary/replies.js";

/** Why reins ended a session: a decision that blocks and needs a person (a spent budget, an open breaker). */
export interface ReinsStop {
  kind: "reins.stop";
  /** The session's scope, `session:<id>`. */
  scope: string;
  /** What reins says, as the model would read it: `reins: <instructions>`. */
  reason: string;
  decision: Decision;
}

/** The stop a decision makes in `scope`. */
export function reinsStop(scope: string, decision: Decision): ReinsStop {
  return { kind: "reins.stop", scope, reason: reasonOf(decision), decision };
}

const brand = Symbol.for("reins.stopped");

/**
 * The SDK's loop ended because reins stopped the session: a person must act (`reins budget extend`,
 * `reins circuit reset`). `message` is reins' reason; `result` is what the SDK gave last, when an adapter
 * has it (the Claude Agent SDK's `result` message, with its usage and cost).
 */
export class ReinsStopped<Result = unknown> extends Error {
  readonly [brand] = true;

  constructor(
    readonly stop: ReinsStop,
    readonly result?: Result,
  ) {
    super(stop.reason);
    this.name = "ReinsStopped";
  }

  /** The session's scope, `session:<id>`. */
  get scope(): string {
    return this.stop.scope;
  }

  /** The decision that stopped it. */
  get decision(): Decision {
    return this.stop.decision;
  }

  /** True for any ReinsStopped, even one from another copy of the package. */
  static is(value: unknown): value is ReinsStopped {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }
}
