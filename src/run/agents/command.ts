/** Any program as the agent (`cmd:<command>`): the prompt on stdin, the outcome by its exit code. */
import { clip, isRecord, jsonLines, num, stderrTail, stoppedByReins } from "./output.js";
import type { AgentOutcome, AgentParse, AgentRunner, CliAgentOptions } from "./runner.js";
import { agentRunner } from "./runner.js";

/**
 * `cmd:<command>`: any program as the agent. It runs as `sh -c <command>` in the task's working tree, the
 * prompt on stdin, with `REINS_RUN`, `REINS_TASK`, `REINS_ATTEMPT` and `REINS_MODE` (`implement` or `fix`)
 * in its environment.
 *
 * Its exit code is the outcome: 0 ok, 75 (EX_TEMPFAIL) transient, anything else failed; killed by a signal
 * (a timeout) is transient. It may report usage with a line of JSON on stdout, the last such line counting:
 * `{"reins": {"tokens": 1200, "costUsd": 0.01, "turns": 3}}` (each field optional; turns default to 1).
 */

/** The exit code that asks for a retry later (sysexits.h EX_TEMPFAIL). */
export const EX_TEMPFAIL = 75;

export type CommandOptions = Pick<CliAgentOptions, "baseEnv" | "env">;

/**
 * The program a command line starts when it is a plain one (a first word without quotes, variables,
 * assignments or shell syntax); null otherwise, when only running it tells.
 */
export function programOf(command: string): string | null {
  const first = command.trim().split(/\s+/)[0] ?? "";
  return /^[A-Za-z0-9_./+-]+$/.test(first) && !first.includes("=") ? first : null;
}

/** The runner of `cmd:<command>`; its name is `cmd:<command>`. */
export function commandRunner(command: string, options: CommandOptions = {}): AgentRunner {
  return agentRunner(
    `cmd:${command}`,
    options,
    (request) => ({ command: "sh", args: ["-c", command], stdin: request.prompt }),
    parseCommand,
    programOf(command),
  );
}

/**
 * Reads a `cmd:` run: the outcome from the exit code (above), usage from the last `{"reins": {...}}` line,
 * and as summary the end of stdout without that line, or when it failed, the end of stderr.
 */
export function parseCommand(raw: string, exitCode: number | null, stderr: string): AgentParse {
  const outcome: AgentOutcome =
    exitCode === null || stoppedByReins(stderr) || exitCode === EX_TEMPFAIL
      ? "transient"
      : exitCode === 0
        ? "ok"
        : "failed";
  const usage = jsonLines(raw)
    .map((line) => line.reins)
    .findLast(isRecord);
  const output = raw
    .split("\n")
    .filter((line) => !isUsageLine(line))
    .join("\n")
    .trim();
  const said = output.length > 2_000 ? output.slice(-2_000) : output;
  const how = exitCode === null ? "killed" : `exit ${exitCode}`;
  const summary =
    outcome === "ok" ? said : [how, stderrTail(stderr) || said].filter((s) => s !== "").join(": ");
  return {
    outcome,
    turns: usage === undefined ? 1 : "turns" in usage ? num(usage.turns) : 1,
    tokens: usage === undefined ? 0 : num(usage.tokens),
    costUsd: usage === undefined ? 0 : num(usage.costUsd),
    summary: clip(summary),
    sessionId: null,
  };
}

function isUsageLine(line: string): boolean {
  return jsonLines(line).some((value) => isRecord(value.reins));
}
