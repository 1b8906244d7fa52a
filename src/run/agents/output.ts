/** What the agents' parsers share: JSONL, summaries, turn estimates, passing and lasting errors. */
import type { AgentOutcome, AgentParse } from "./runner.js";

/** Pure helpers the adapters' `parse` share: reading JSONL, telling a passing error from a lasting one. */

/**
 * Turns estimated from a run's events, for the CLIs that report no count of model calls: one for the first
 * model output, and one more each time the model speaks again after it acted (a tool call).
 */
export class TurnEstimate {
  turns = 0;
  #acted = true; // the first model output starts the first turn

  /** The model put out something; true when that starts a new turn. */
  spoke(): boolean {
    const starts = this.#acted;
    if (starts) this.turns++;
    this.#acted = false;
    return starts;
  }

  /** The model acted: its next output starts a new turn. */
  acted(): void {
    this.#acted = true;
  }
}

/** The most of a summary kept. */
export const SUMMARY_CHARS = 4_000;

/** The JSON objects of a JSONL text, in order; lines that are not JSON objects (a cut, a warning) are skipped. */
export function jsonLines(raw: string): Record<string, unknown>[] {
  return raw.split("\n").flatMap((line) => {
    const text = line.trim();
    if (!text.startsWith("{")) return [];
    try {
      const value = JSON.parse(text) as unknown;
      return isRecord(value) ? [value] : [];
    } catch {
      return [];
    }
  });
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A field as a string, or undefined. */
export function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** A field as a finite number, or 0. */
export function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** Text cut to `SUMMARY_CHARS` characters, trimmed. */
export function clip(text: string): string {
  const trimmed = text.trim();
  return trimmed.length <= SUMMARY_CHARS ? trimmed : `${trimmed.slice(0, SUMMARY_CHARS - 1)}…`;
}

/** True when reins itself stopped the run (its note in stderr): a timeout or an abort. */
export function stoppedByReins(stderr: string): boolean {
  return /^\[reins\] (timed out|aborted)/m.test(stderr);
}

/** The last few non-empty lines of stderr, for a summary when the agent said nothing else. */
export function stderrTail(stderr: string, lines = 5): string {
  return stderr
    .split("\n")
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "")
    .slice(-lines)
    .join("\n");
}

// Billing and plan limits: only a person can lift them, so the run pauses as it does on its own budget.
const BUDGET = /credit balance|insufficient_quota|out of credits|spend cap|usage limit|billing/i;
// Rate limits, overload, server errors and the network: the same call may well succeed later.
const TRANSIENT = new RegExp(
  [
    // An HTTP status, as the CLIs word it: `status: 429`, `"code":503`, `(429)`, `API Error: 529`.
    String.raw`(status|code|error)["']?\s*[:=]?\s*(408|409|429|5\d\d)\b`,
    String.raw`\((408|409|429|5\d\d)\)`,
    String.raw`rate.?limit|overloaded|resource.?exhausted|\bunavailable\b|high demand|at capacity|try again`,
    String.raw`\btime(d ?out|out)\b|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|ENOTFOUND|EPIPE|socket hang up`,
    String.raw`fetch failed|connection (refused|reset|failed|error|closed)|network|stream disconnected|reconnecting`,
  ].join("|"),
  "i",
);

/**
 * What an agent's error text says about the next attempt: `budget_paused` for a billing or plan limit,
 * `transient` for a rate limit, an overload, a server or network error, else `failed`.
 */
export function classifyError(text: string): Exclude<AgentOutcome, "ok"> {
  if (BUDGET.test(text)) return "budget_paused";
  return TRANSIENT.test(text) ? "transient" : "failed";
}

/**
 * The parse of a run that printed no final result: what was seen of it (turns, tokens, session), no cost,
 * the outcome from its exit and stderr (`outcomeWithoutResult`), and a summary saying how it ended with the
 * end of `said` (its stderr, unless the adapter has more to say).
 */
export function parseWithoutResult(
  agent: string,
  exitCode: number | null,
  stderr: string,
  seen: Pick<AgentParse, "turns" | "tokens" | "sessionId">,
  said = stderr,
): AgentParse {
  return {
    outcome: outcomeWithoutResult(exitCode, stderr),
    ...seen,
    costUsd: 0,
    summary: summaryWithoutResult(agent, exitCode, said),
  };
}

/**
 * The outcome of a run that printed no final result: `transient` when reins stopped it or it was killed by
 * a signal, or when its stderr reads as a passing error; else `failed`.
 */
export function outcomeWithoutResult(exitCode: number | null, stderr: string): Exclude<AgentOutcome, "ok"> {
  if (exitCode === null || stoppedByReins(stderr)) return "transient";
  return classifyError(stderrTail(stderr, 20)) === "transient" ? "transient" : "failed";
}

/** The summary of a run that printed no final result. */
export function summaryWithoutResult(agent: string, exitCode: number | null, stderr: string): string {
  const how = exitCode === null ? "was killed" : `exited ${exitCode}`;
  const tail = stderrTail(stderr);
  return clip(`${agent} ${how} without a result${tail === "" ? "" : `:\n${tail}`}`);
}
