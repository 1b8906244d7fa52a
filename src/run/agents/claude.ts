/** Claude Code as a driven agent: its print-mode command line and the parse of its stream-json output. */
import {
  clip,
  classifyError,
  isRecord,
  jsonLines,
  num,
  parseWithoutResult,
  stoppedByReins,
  str,
} from "./output.js";
import type { AgentOutcome, AgentParse, AgentRunner, CliAgentOptions } from "./runner.js";
import { cliRunner } from "./runner.js";

/**
 * Claude Code in print mode: `claude -p --output-format stream-json --verbose --allowedTools=... [--max-turns N]
 * [--max-budget-usd X] [--model M]`, the prompt on stdin (no argument: no length limit, no leading-dash
 * trouble). The project's `.claude/settings.json` hooks run (reins' among them when installed).
 *
 * Its stdout is one JSON object a line: `system`/`init` (with `session_id`), then `assistant` and `user`
 * messages, then one `result`: `{ type: "result", subtype, is_error, num_turns, total_cost_usd, usage,
 * result, session_id, terminal_reason, api_error_status, api_error, errors }` (Claude Code 2.1.330).
 */

export interface ClaudeOptions extends CliAgentOptions {
  /** `--max-turns`. @default none */
  maxTurns?: number;
  /** `--max-budget-usd`: past it Claude Code stops with `error_max_budget_usd` (→ budget_paused). @default none */
  maxBudgetUsd?: number;
  /**
   * What Claude Code may do without asking (nobody can answer in print mode): `--allowedTools=` these. Read
   * and search tools need no permission. (`--permission-mode bypassPermissions` is refused as root.)
   * @default ["Bash", "Edit", "Write", "NotebookEdit"]
   */
  allowedTools?: readonly string[];
}

const DEFAULT_TOOLS = ["Bash", "Edit", "Write", "NotebookEdit"];

/** The Claude Code runner. */
export function claudeRunner(options: ClaudeOptions = {}): AgentRunner {
  const args = ["-p", "--output-format", "stream-json", "--verbose"];
  args.push(`--allowedTools=${(options.allowedTools ?? DEFAULT_TOOLS).join(",")}`);
  if (options.maxTurns !== undefined) args.push("--max-turns", String(options.maxTurns));
  if (options.maxBudgetUsd !== undefined) args.push("--max-budget-usd", String(options.maxBudgetUsd));
  return cliRunner({ name: "claude", args, modelFlag: "--model", parse: parseClaude }, options);
}

/**
 * Reads a Claude Code stream-json run. With a `result` line: tokens are its usage's input, output and both
 * cache counts; the outcome is
 * - `ok` for `success` without `is_error`;
 * - `budget_paused` for `error_max_budget_usd`, or an API error about billing (credit balance, usage limit);
 * - `transient` for an API error with status 408, 409, 429 or 5xx (529 overloaded) or none (connection
 *   failed), after Claude Code's own retries;
 * - `failed` for everything else: `error_max_turns`, `error_during_execution`, other 4xx (a bad key, a bad
 *   request).
 *
 * Without one (a crash, a kill): turns and tokens from the assistant messages seen, and the outcome from
 * the exit and stderr (see `outcomeWithoutResult`). A run reins timed out or aborted is `transient` either way.
 */
export function parseClaude(raw: string, exitCode: number | null, stderr: string): AgentParse {
  const lines = jsonLines(raw);
  const result = lines.findLast((line) => line.type === "result");
  const init = lines.find((line) => line.type === "system" && line.subtype === "init");
  const sessionId = str(result?.session_id) ?? str(init?.session_id) ?? null;

  if (result === undefined) {
    return parseWithoutResult("claude", exitCode, stderr, { ...assistantUsage(lines), sessionId });
  }
  const outcome = stoppedByReins(stderr) ? "transient" : outcomeOf(result);
  const errors = Array.isArray(result.errors) ? result.errors.filter((e) => typeof e === "string") : [];
  const text =
    str(result.result) ??
    (errors.length > 0 ? errors.join("\n") : `claude ended with ${str(result.subtype) ?? "no subtype"}`);
  return {
    outcome,
    turns: num(result.num_turns),
    tokens: tokensOf(result.usage),
    costUsd: num(result.total_cost_usd),
    summary: clip(text),
    sessionId,
  };
}

function outcomeOf(result: Record<string, unknown>): AgentOutcome {
  const subtype = str(result.subtype);
  if (subtype === "error_max_budget_usd") return "budget_paused";
  const status = typeof result.api_error_status === "number" ? result.api_error_status : null;
  const apiError = result.terminal_reason === "api_error" || status !== null || result.api_error != null;
  if (apiError) {
    const text = str(result.result) ?? "";
    if (classifyError(text) === "budget_paused") return "budget_paused";
    if (status === null) return "transient"; // no HTTP answer at all: connection refused, reset, timed out
    return status === 408 || status === 409 || status === 429 || status >= 500 ? "transient" : "failed";
  }
  return subtype === "success" && result.is_error !== true ? "ok" : "failed";
}

/** input + output + cache read + cache creation tokens of a Messages API usage object. */
function tokensOf(usage: unknown): number {
  if (!isRecord(usage)) return 0;
  return (
    num(usage.input_tokens) +
    num(usage.output_tokens) +
    num(usage.cache_read_input_tokens) +
    num(usage.cache_creation_input_tokens)
  );
}

/**
 * Turns and tokens from the assistant messages of a run that printed no result: one turn per message id
 * (a reply split over several lines counts once, with its last usage), synthetic error messages left out.
 */
function assistantUsage(lines: Record<string, unknown>[]): { turns: number; tokens: number } {
  const byId = new Map<string, number>();
  for (const line of lines) {
    if (line.type !== "assistant" || !isRecord(line.message)) continue;
    const { id, model, usage } = line.message;
    if (typeof id !== "string" || model === "<synthetic>") continue;
    byId.set(id, tokensOf(usage));
  }
  return { turns: byId.size, tokens: [...byId.values()].reduce((a, b) => a + b, 0) };
}
