/** Codex CLI as a driven agent: its `codex exec --json` command line and the parse of its events. */
import {
  clip,
  classifyError,
  isRecord,
  jsonLines,
  num,
  outcomeWithoutResult,
  parseWithoutResult,
  stoppedByReins,
  str,
  TurnEstimate,
} from "./output.js";
import type { AgentOutcome, AgentParse, AgentRunner, CliAgentOptions } from "./runner.js";
import { cliRunner } from "./runner.js";

/**
 * Codex CLI: `codex exec --json --skip-git-repo-check --sandbox workspace-write [-m M] [args...] -`, the
 * prompt on stdin (`-`), which is then closed (Codex waits for stdin's end before it starts).
 *
 * Its stdout is one JSON event a line (Codex 0.169.0): `thread.started {thread_id}`, `turn.started`,
 * `item.started`/`item.completed {item: {id, type, ...}}` with item types `agent_message {text}`,
 * `reasoning`, `command_execution {command, aggregated_output, exit_code, status}`, `file_change`,
 * `mcp_tool_call`, `web_search`, `todo_list` and `error {message}` (a warning, such as unknown model
 * metadata), then `turn.completed {usage: {input_tokens, cached_input_tokens, cache_write_input_tokens,
 * output_tokens, reasoning_output_tokens}}` or `turn.failed {error: {message}}`; `error {message}` events
 * come between (`Reconnecting... waiting for network`, the last error before `turn.failed`).
 */

export interface CodexOptions extends CliAgentOptions {
  /**
   * `--sandbox`: where Codex's shell commands may write. `danger-full-access` when the machine is itself a
   * sandbox (Codex's sandbox needs Landlock/seccomp, and it blocks the network).
   * @default "workspace-write"
   */
  sandbox?: "read-only" | "workspace-write" | "danger-full-access";
}

/** Item types that are the model acting (a tool call): the model's next output starts a new turn. */
const ACTIONS = new Set(["command_execution", "file_change", "mcp_tool_call", "web_search"]);

/** The Codex runner. */
export function codexRunner(options: CodexOptions = {}): AgentRunner {
  return cliRunner(
    {
      name: "codex",
      args: ["exec", "--json", "--skip-git-repo-check", "--sandbox", options.sandbox ?? "workspace-write"],
      modelFlag: "-m",
      lastArgs: ["-"],
      parse: parseCodex,
    },
    options,
  );
}

/**
 * Reads a `codex exec --json` run. Tokens are input plus output of every `turn.completed` (OpenAI's input
 * count already holds the cached tokens). Codex reports no cost (0) and no count of model calls: turns are
 * estimated, one for the first model output and one more each time the model speaks again after a tool
 * call. The outcome is `ok` for a last `turn.completed` and exit 0; for `turn.failed`, its message
 * classified (`classifyError`: 429, 5xx, "high demand", network → transient; billing → budget_paused; else
 * failed); without either, from the exit and stderr (a run killed while Codex reconnected is transient).
 */
export function parseCodex(raw: string, exitCode: number | null, stderr: string): AgentParse {
  const events = jsonLines(raw);
  const sessionId = str(events.find((e) => e.type === "thread.started")?.thread_id) ?? null;
  let tokens = 0;
  const estimate = new TurnEstimate();
  const started = new Set<unknown>();
  let message: string | undefined;
  let lastError: string | undefined;
  let end: { failed: boolean; text: string | undefined } | undefined;

  for (const event of events) {
    const item = isRecord(event.item) ? event.item : {};
    const type = str(item.type);
    if (event.type === "item.started" && type !== undefined && type !== "error") {
      estimate.spoke();
      started.add(item.id);
    } else if (event.type === "item.completed" && type !== undefined && type !== "error") {
      if (!started.has(item.id)) estimate.spoke();
      if (ACTIONS.has(type)) estimate.acted();
      if (type === "agent_message") message = str(item.text) ?? message;
    } else if (event.type === "turn.completed") {
      const usage = isRecord(event.usage) ? event.usage : {};
      tokens += num(usage.input_tokens) + num(usage.output_tokens);
      end = { failed: false, text: undefined };
    } else if (event.type === "turn.failed") {
      end = { failed: true, text: str(isRecord(event.error) ? event.error.message : undefined) ?? lastError };
    } else if (event.type === "error") {
      lastError = str(event.message) ?? lastError;
    }
  }

  if (end === undefined) {
    const said = lastError === undefined ? stderr : `${stderr}\n${lastError}`;
    const parsed = parseWithoutResult(
      "codex",
      exitCode,
      stderr,
      { turns: estimate.turns, tokens, sessionId },
      said,
    );
    // Its last error may say what stderr does not: it was reconnecting when it ended.
    if (lastError !== undefined && classifyError(lastError) === "transient") parsed.outcome = "transient";
    return parsed;
  }
  let outcome: AgentOutcome;
  if (stoppedByReins(stderr)) outcome = "transient";
  else if (end.failed) outcome = classifyError(end.text ?? "");
  else outcome = exitCode === 0 ? "ok" : outcomeWithoutResult(exitCode, stderr);
  const summary = end.failed ? (end.text ?? "codex: the turn failed") : (message ?? "");
  return { outcome, turns: estimate.turns, tokens, costUsd: 0, summary: clip(summary), sessionId };
}
