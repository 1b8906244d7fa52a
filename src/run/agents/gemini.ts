/** Gemini CLI as a driven agent: its headless command line and the parse of its stream-json output. */
import {
  clip,
  classifyError,
  isRecord,
  jsonLines,
  num,
  parseWithoutResult,
  stoppedByReins,
  str,
  TurnEstimate,
} from "./output.js";
import type { AgentOutcome, AgentParse, AgentRunner, CliAgentOptions } from "./runner.js";
import { cliRunner } from "./runner.js";

/**
 * Gemini CLI headless: `gemini -o stream-json --approval-mode yolo [-m M] [args...]`, the prompt on stdin
 * (Gemini CLI reads piped stdin as the prompt when stdout and stdin are not a terminal). It runs with
 * `GEMINI_CLI_TRUST_WORKSPACE=true` unless the environment says otherwise: an untrusted folder (a task's
 * worktree) turns yolo into `default` approval and headless mode then refuses to start (exit 55).
 *
 * Its stdout is one JSON event a line (Gemini CLI 0.61.0): `init {session_id, model}`, `message {role:
 * "user"|"assistant", content, delta}` (the answer comes in delta pieces), `tool_use {tool_name, tool_id,
 * parameters}`, `tool_result {tool_id, status, output}`, `error {severity, message}`, then `result
 * {status: "success"|"error", error?: {type, message}, stats: {total_tokens, input_tokens, output_tokens,
 * cached, input, duration_ms, tool_calls, models}}`.
 */

export type GeminiOptions = CliAgentOptions;

/** The Gemini CLI runner. */
export function geminiRunner(options: GeminiOptions = {}): AgentRunner {
  return cliRunner(
    {
      name: "gemini",
      args: ["-o", "stream-json", "--approval-mode", "yolo"],
      modelFlag: "-m",
      env: { GEMINI_CLI_TRUST_WORKSPACE: "true" },
      parse: parseGemini,
    },
    options,
  );
}

/**
 * Reads a Gemini CLI stream-json run. Tokens are the result's `stats.total_tokens` (input, cached
 * included, plus output). Gemini CLI reports no cost (0) and no count of model calls: turns are estimated,
 * one for the first model output and one more each time the model speaks again after tool results. The
 * summary is the assistant's text after the last tool result. The outcome is `ok` for `status: "success"`;
 * for `status: "error"`, its message (or the last `error` event's) classified (`classifyError`); without a
 * result, from the exit and stderr (Gemini CLI retries a refused connection for minutes, so a run reins
 * timed out is transient).
 */
export function parseGemini(raw: string, exitCode: number | null, stderr: string): AgentParse {
  const events = jsonLines(raw);
  const sessionId = str(events.find((e) => e.type === "init")?.session_id) ?? null;
  const estimate = new TurnEstimate();
  let text = "";
  let lastError: string | undefined;
  for (const event of events) {
    const modelOutput = (event.type === "message" && event.role === "assistant") || event.type === "tool_use";
    if (modelOutput && estimate.spoke()) text = "";
    if (event.type === "tool_result") estimate.acted();
    if (event.type === "message" && event.role === "assistant") text += str(event.content) ?? "";
    if (event.type === "error") lastError = str(event.message) ?? lastError;
  }
  const result = events.findLast((e) => e.type === "result");
  if (result === undefined) {
    return parseWithoutResult("gemini", exitCode, stderr, { turns: estimate.turns, tokens: 0, sessionId });
  }

  const stats = isRecord(result.stats) ? result.stats : {};
  const tokens =
    "total_tokens" in stats ? num(stats.total_tokens) : num(stats.input_tokens) + num(stats.output_tokens);
  const failure =
    result.status === "success"
      ? undefined
      : (str(isRecord(result.error) ? result.error.message : undefined) ??
        lastError ??
        `gemini ended with status ${String(result.status)}`);
  let outcome: AgentOutcome = failure === undefined ? "ok" : classifyError(failure);
  if (stoppedByReins(stderr)) outcome = "transient";
  return { outcome, turns: estimate.turns, tokens, costUsd: 0, summary: clip(failure ?? text), sessionId };
}
