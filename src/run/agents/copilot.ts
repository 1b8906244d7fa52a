/** GitHub Copilot CLI as a driven agent: its prompt-mode command line and the parse of its JSONL output. */
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
import { agentRunner } from "./runner.js";

/**
 * Copilot CLI in prompt mode: `copilot --output-format json --allow-all-tools --trust-folder --no-ask-user
 * --no-auto-update [--model M] [args...] --usage-output-file <tmp>`, the prompt on stdin (Copilot reads piped
 * stdin as the prompt). `--trust-folder` trusts the task's worktree for that one session, as Gemini CLI is
 * run with `GEMINI_CLI_TRUST_WORKSPACE=true`: an unattended run has nobody to answer Copilot's question.
 *
 * Its stdout is one JSON event a line (Copilot CLI 1.0.102): `user.message`, `assistant.turn_start`,
 * `assistant.message {content, toolRequests}`, `tool.execution_start`, `tool.execution_complete {success,
 * result}`, `assistant.turn_end`, and last `result {sessionId, exitCode, usage: {premiumRequests, ...}}`,
 * which has no token counts. Those are in the usage report Copilot writes at its end
 * (`--usage-output-file`): a small shell wrapper prints it after the run as one more line,
 * `{"type": "reins.copilot_usage", "usage": <report>}`, so the recorded output holds the tokens and a
 * replay reads them back.
 */

export type CopilotOptions = CliAgentOptions;

/** The wrapper: runs the command (its arguments), then prints Copilot's usage report as one JSON line. */
const WRAPPER = [
  'f=$(mktemp) || exit 70; "$@" --usage-output-file "$f"; s=$?',
  'u=$(tr -d "\\n" < "$f" 2>/dev/null); rm -f "$f"',
  'if [ -n "$u" ]; then printf \'\\n{"type":"reins.copilot_usage","usage":%s}\\n\' "$u"; fi',
  "exit $s",
].join("; ");

/** The Copilot CLI runner. */
export function copilotRunner(options: CopilotOptions = {}): AgentRunner {
  const bin = options.bin ?? process.env.REINS_COPILOT_BIN ?? "copilot";
  const program = /\.[cm]?js$/.test(bin) ? [process.execPath, bin] : [bin];
  const args = [
    ...[
      "--output-format",
      "json",
      "--allow-all-tools",
      "--trust-folder",
      "--no-ask-user",
      "--no-auto-update",
    ],
    ...(options.model === undefined ? [] : ["--model", options.model]),
    ...(options.args ?? []),
  ];
  return agentRunner(
    "copilot",
    options,
    (request) => ({
      command: "sh",
      args: ["-c", WRAPPER, "reins-copilot", ...program, ...args],
      stdin: request.prompt,
    }),
    parseCopilot,
    bin,
  );
}

/** The tokens of Copilot's usage report: input plus output of every model it used. */
function reportTokens(report: unknown): number {
  const models = isRecord(report) && isRecord(report.modelMetrics) ? report.modelMetrics : {};
  let tokens = 0;
  for (const metrics of Object.values(models)) {
    const usage = isRecord(metrics) && isRecord(metrics.usage) ? metrics.usage : {};
    tokens += num(usage.inputTokens) + num(usage.outputTokens);
  }
  return tokens;
}

/**
 * Reads a Copilot CLI prompt-mode run. Tokens are input plus output of its usage report (OpenAI's input
 * count already holds the cached tokens). Copilot reports no cost to a custom provider (0) and no count of
 * model calls: turns are `assistant.turn_start` events. The summary is the last assistant message with text.
 * The outcome is `ok` for a `result` with exit code 0; else the last error classified (`classifyError`);
 * without a result, from the exit and stderr.
 */
export function parseCopilot(raw: string, exitCode: number | null, stderr: string): AgentParse {
  const events = jsonLines(raw);
  const estimate = new TurnEstimate();
  let text = "";
  let lastError: string | undefined;
  let tokens = 0;
  for (const event of events) {
    const data = isRecord(event.data) ? event.data : {};
    if (event.type === "assistant.turn_start") estimate.spoke();
    if (event.type === "tool.execution_complete") estimate.acted();
    if (event.type === "assistant.message" && (str(data.content) ?? "") !== "")
      text = str(data.content) ?? text;
    if (event.type === "session.error" || event.type === "error")
      lastError = str(data.message) ?? str(event.message) ?? lastError;
    if (event.type === "reins.copilot_usage") tokens = reportTokens(event.usage);
  }
  const result = events.findLast((e) => e.type === "result");
  const sessionId = str(result?.sessionId) ?? null;
  if (result === undefined)
    return parseWithoutResult("copilot", exitCode, stderr, { turns: estimate.turns, tokens, sessionId });
  const code = num(result.exitCode);
  const failure = code === 0 && exitCode === 0 ? undefined : (lastError ?? `copilot exited ${code}`);
  let outcome: AgentOutcome = failure === undefined ? "ok" : classifyError(failure);
  if (stoppedByReins(stderr)) outcome = "transient";
  return { outcome, turns: estimate.turns, tokens, costUsd: 0, summary: clip(failure ?? text), sessionId };
}
