/** opencode as a driven agent: its `opencode run --format json` command line and the parse of its events. */
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
} from "./output.js";
import type { AgentOutcome, AgentParse, AgentRunner, CliAgentOptions } from "./runner.js";
import { agentRunner } from "./runner.js";

/**
 * opencode: `opencode run --format json --auto --title <title> [-m provider/model] [args...]`, the prompt on
 * stdin (opencode reads piped stdin as the message). `--auto` approves the permissions the user's
 * configuration does not deny outright: an unattended run has nobody to answer (opencode would reject each
 * ask), and reins' plugin judges every tool call anyway. `--title` names the session, so opencode makes no
 * title request with its small model (a request no plugin event reports, whose tokens would go uncounted).
 *
 * Its stdout is one JSON event a line (opencode 1.18.33), each with `sessionID`: `step_start` (one model
 * call), `tool_use {part: {tool, state: {status, output}}}`, `text {part: {text}}`, `step_finish {part:
 * {reason, tokens: {input, output, reasoning, cache: {read, write}}, cost}}`, and `error {error: {name,
 * data: {message}}}` when the session failed. There is no final result event: the run ended well when it
 * exited 0 after a finished step with no error.
 */

export type OpencodeOptions = CliAgentOptions;

/** The opencode runner. */
export function opencodeRunner(options: OpencodeOptions = {}): AgentRunner {
  const bin = options.bin ?? process.env.REINS_OPENCODE_BIN ?? "opencode";
  const program = /\.[cm]?js$/.test(bin) ? [process.execPath, bin] : [bin];
  const extra = [...(options.model === undefined ? [] : ["-m", options.model]), ...(options.args ?? [])];
  return agentRunner(
    "opencode",
    options,
    (request) => ({
      command: program[0] ?? bin,
      args: [
        ...program.slice(1),
        ...[
          "run",
          "--format",
          "json",
          "--auto",
          "--title",
          `reins ${request.run} ${request.task} #${request.attempt}`,
        ],
        ...extra,
      ],
      stdin: request.prompt,
    }),
    parseOpencode,
    bin,
  );
}

/** The tokens of one `step_finish`: input, cached and written-to-cache input, output and reasoning. */
function stepTokens(part: Record<string, unknown>): number {
  const tokens = isRecord(part.tokens) ? part.tokens : {};
  const cache = isRecord(tokens.cache) ? tokens.cache : {};
  return num(tokens.input) + num(cache.read) + num(cache.write) + num(tokens.output) + num(tokens.reasoning);
}

/** The message of an `error` event: its `data.message`, else its name. */
function errorText(event: Record<string, unknown>): string {
  const error = isRecord(event.error) ? event.error : {};
  const data = isRecord(error.data) ? error.data : {};
  return str(data.message) ?? str(error.name) ?? "opencode: the session failed";
}

/**
 * Reads an `opencode run --format json` run. Turns are `step_start` events (one model call each); tokens
 * and cost are the sums of every `step_finish` (opencode's input count leaves the cached tokens out: they
 * are added). The summary is the last text. The outcome is `ok` for exit 0 after a finished step and no
 * error; for an `error` event, its message classified (`classifyError`); without a finished step, from the
 * exit and stderr.
 */
export function parseOpencode(raw: string, exitCode: number | null, stderr: string): AgentParse {
  const events = jsonLines(raw);
  const sessionId = str(events.find((e) => typeof e.sessionID === "string")?.sessionID) ?? null;
  let turns = 0;
  let tokens = 0;
  let costUsd = 0;
  let steps = 0;
  let text = "";
  let lastError: string | undefined;
  for (const event of events) {
    const part = isRecord(event.part) ? event.part : {};
    if (event.type === "step_start") turns++;
    if (event.type === "text" && (str(part.text) ?? "").trim() !== "") text = str(part.text) ?? text;
    if (event.type === "error") lastError = errorText(event);
    if (event.type === "step_finish") {
      steps++;
      tokens += stepTokens(part);
      costUsd += num(part.cost);
    }
  }
  if (steps === 0 && lastError === undefined)
    return { ...parseWithoutResult("opencode", exitCode, stderr, { turns, tokens, sessionId }), costUsd };
  let outcome: AgentOutcome = "ok";
  if (lastError !== undefined) outcome = classifyError(lastError);
  else if (exitCode !== 0) outcome = outcomeWithoutResult(exitCode, stderr);
  if (stoppedByReins(stderr)) outcome = "transient";
  const failure = lastError ?? (exitCode === 0 ? undefined : `opencode exited ${exitCode}`);
  return { outcome, turns, tokens, costUsd, summary: clip(failure ?? text), sessionId };
}
