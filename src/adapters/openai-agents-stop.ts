/** A run of the OpenAI Agents SDK that reins ended, and how a caller finds reins' reason in what `run()` threw. */
import type { Decision } from "../core/index.js";

/** Why reins ended a session: a decision that blocks and needs a person (a spent budget, an open breaker). */
export interface ReinsStop {
  kind: "reins.stop";
  /** The session's scope, `session:<id>`. */
  scope: string;
  /** What reins says, as the model would read it: `reins: <instructions>`. */
  reason: string;
  decision: Decision;
}

/**
 * Thrown out of `run()` when reins stops the session at a model response (the usage of which spent the
 * budget). A stop at a tool call reaches the caller as the SDK's `ToolCallError` around its tool guardrail
 * tripwire instead; `reinsStopOf` reads both.
 */
export class ReinsStopError extends Error {
  readonly stop: ReinsStop;

  constructor(stop: ReinsStop) {
    super(stop.reason);
    this.name = "ReinsStopError";
    this.stop = stop;
  }
}

const isStop = (value: unknown): value is ReinsStop =>
  typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "reins.stop";

/** How deep `reinsStopOf` follows errors wrapped in errors. */
const MAX_DEPTH = 8;

/**
 * reins' stop inside an error `run()` threw, or null when reins did not end the run: a `ReinsStopError`, or
 * the SDK's tool guardrail tripwire (`ToolInputGuardrailTripwireTriggered`, `ToolOutputGuardrailTripwireTriggered`,
 * inside a `ToolCallError`) raised by reins' guardrail.
 */
export function reinsStopOf(error: unknown): ReinsStop | null {
  let current = error;
  for (let depth = 0; depth < MAX_DEPTH && typeof current === "object" && current !== null; depth++) {
    if (current instanceof ReinsStopError) return current.stop;
    const e = current as { stop?: unknown; result?: { output?: { outputInfo?: unknown } }; error?: unknown };
    if (isStop(e.stop)) return e.stop;
    const info = e.result?.output?.outputInfo;
    if (isStop(info)) return info;
    current = e.error ?? (current as { cause?: unknown }).cause;
  }
  return null;
}
