/**
 * How the AI SDK adapter reads a tool's result and writes reins' word into it: the outcome reins records for
 * a call, and the model output with a note appended. Types only from `ai`, so nothing of the SDK is loaded.
 */
import type { Tool } from "ai";
import { canonical, type ToolOutcome } from "../../base/vocabulary/events.js";

/** What a tool result becomes for the model (the SDK's `ToolResultOutput`). */
export type ModelOutput = Awaited<ReturnType<NonNullable<Tool["toModelOutput"]>>>;

/**
 * How a call ended, from what its tool returned: a numeric `exitCode` (or `exit_code`) other than 0, or
 * `isError` (or `is_error`) true, is a failure. The text is its `stdout`, `stderr` and `output` strings, else
 * the output itself; reins reads error keys and check results from it.
 */
export function outcomeOf(output: unknown): ToolOutcome {
  if (typeof output === "string") return { failed: false, text: output, output };
  const fields = (output !== null && typeof output === "object" ? output : {}) as Record<string, unknown>;
  const reported = fields.exitCode ?? fields.exit_code;
  const exitCode = typeof reported === "number" ? reported : undefined;
  const failed =
    fields.isError === true || fields.is_error === true || (exitCode !== undefined && exitCode !== 0);
  const texts = [fields.stdout, fields.stderr, fields.output].filter((t) => typeof t === "string");
  return {
    failed,
    text: texts.length > 0 ? texts.join("") : canonical(output ?? null),
    output: output ?? null,
    ...(exitCode !== undefined ? { exitCode } : {}),
  };
}

/** A thrown tool error as reins records its call's end. */
export function failureOf(error: unknown): ToolOutcome {
  const text = error instanceof Error ? error.message : String(error);
  return { failed: true, text, output: text };
}

/** The SDK's own model output for a tool without `toModelOutput`: text for a string, else JSON. */
export function defaultOutput(output: unknown): ModelOutput {
  return typeof output === "string"
    ? { type: "text", value: output }
    : { type: "json", value: (output ?? null) as never };
}

/** `output` with `note` after it, in a form every provider sends as text. */
export function withNote(output: ModelOutput, note: string): ModelOutput {
  switch (output.type) {
    case "text":
    case "error-text":
      return { ...output, value: `${output.value}\n\n${note}` };
    case "json":
    case "error-json":
      return {
        ...output,
        type: output.type === "json" ? "text" : "error-text",
        value: `${JSON.stringify(output.value)}\n\n${note}`,
      };
    case "content":
      return { ...output, value: [...output.value, { type: "text", text: note }] };
    case "execution-denied":
      return { ...output, reason: output.reason === undefined ? note : `${output.reason}\n\n${note}` };
  }
}
