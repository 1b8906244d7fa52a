/** A run of the OpenAI Agents SDK that reins ended, and how a caller finds reins' reason in what `run()` threw. */
import { ReinsStopped, type ReinsStop } from "./stop.js";

const isStop = (value: unknown): value is ReinsStop =>
  typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "reins.stop";

/** How deep `reinsStopOf` follows errors wrapped in errors. */
const MAX_DEPTH = 8;

/**
 * reins' stop inside an error `run()` threw, or null when reins did not end the run: a `ReinsStopped`, or
 * the SDK's tool guardrail tripwire (`ToolInputGuardrailTripwireTriggered`, `ToolOutputGuardrailTripwireTriggered`,
 * inside a `ToolCallError`) raised by reins' guardrail.
 */
export function reinsStopOf(error: unknown): ReinsStop | null {
  let current = error;
  for (let depth = 0; depth < MAX_DEPTH && typeof current === "object" && current !== null; depth++) {
    if (ReinsStopped.is(current)) return current.stop;
    const e = current as { stop?: unknown; result?: { output?: { outputInfo?: unknown } }; error?: unknown };
    if (isStop(e.stop)) return e.stop;
    const info = e.result?.output?.outputInfo;
    if (isStop(info)) return info;
    current = e.error ?? (current as { cause?: unknown }).cause;
  }
  return null;
}
