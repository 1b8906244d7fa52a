/** An agent run read back from its own log: the hook calls its agent CLI would have made. */
import type { UsageRecord } from "../../base/vocabulary/usage.js";

/**
 * An agent run read back from the agent's own log, as the hook calls its agent CLI would have made: the
 * same inputs, in the same protocol, so replaying it goes through the very adapters the live hooks use.
 */

/** The agents whose hook protocol a logged run speaks. */
export type LoggedAgent = "claude" | "codex" | "gemini";

/** The log formats reins reads. */
export type LogFormat =
  "claude-transcript" | "codex-rollout" | "gemini-chat" | "mini-swe-agent" | "swe-agent";

/** One hook call the agent would have made, when it made it, and the model usage its hook would have read. */
export interface LoggedCall {
  /** Epoch ms. */
  at: number;
  /** The hook input, exactly as the agent CLI sends it (`hook_event_name`, `session_id`, `tool_name`...). */
  input: Record<string, unknown>;
  /** Model calls that ended before this hook call and after the previous one. */
  usage?: UsageRecord[];
}

/** A whole run from one log file. */
export interface LoggedRun {
  /** The run's id: the session id, or the instance id of a benchmark run. */
  id: string;
  agent: LoggedAgent;
  format: LogFormat;
  /** The file it came from. */
  source: string;
  calls: LoggedCall[];
}

/** Whether a hook call is a tool call: Claude Code's and Codex's PreToolUse, Gemini CLI's BeforeTool. */
export function isToolHook(hook: unknown): boolean {
  return hook === "PreToolUse" || hook === "BeforeTool";
}

/** Tool calls in a run: the PreToolUse (or BeforeTool) inputs, valid or not. */
export function toolCallCount(run: LoggedRun): number {
  return run.calls.filter((c) => isToolHook(c.input.hook_event_name)).length;
}

/**
 * Hands model usage that no hook call read to the run's last call: the agent's last hook would have read
 * it. Nothing happens when there is no usage or no call.
 */
export function addLeftoverUsage(calls: readonly LoggedCall[], usage: readonly UsageRecord[]): void {
  const last = calls[calls.length - 1];
  if (usage.length > 0 && last !== undefined) last.usage = [...(last.usage ?? []), ...usage];
}

/** Epoch ms of an ISO time, or `fallback` when it does not parse. */
export function timeOf(value: unknown, fallback: number): number {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value !== "string") return fallback;
  const at = Date.parse(value);
  return Number.isFinite(at) ? at : fallback;
}
