/** What reins reads from a Codex CLI rollout line: a response's token usage, a command's exit code. */
import type { UsageRecord } from "../../base/vocabulary/usage.js";

/**
 * What reins reads from a Codex CLI rollout line (`~/.codex/sessions/.../rollout-*.jsonl`): the token usage
 * of a model response and the exit code of a finished command, neither of which Codex's hook inputs carry.
 * Shared by the hooks (read incrementally, as the session goes) and the log importer (read whole).
 */

type Row = Record<string, unknown>;
const rec = (v: unknown): Row => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Row) : {});
const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);

/** Usage in OpenAI's form (input includes the cached tokens), as a record reins prices. */
export function openAiUsage(id: string, u: Row, model: string | undefined): UsageRecord {
  const cached = num(u.cached_input_tokens);
  return {
    id,
    input: Math.max(0, num(u.input_tokens) - cached),
    output: num(u.output_tokens),
    cacheRead: cached,
    cacheWrite: num(u.cache_write_input_tokens),
    ...(model !== undefined ? { model } : {}),
  };
}

/** The model a rollout line says is in use (`turn_context`), if it says. */
export function rolloutModel(row: Row): string | undefined {
  const model = rec(row.payload).model;
  return row.type === "turn_context" && typeof model === "string" ? model : undefined;
}

/**
 * A response's usage from a `token_usage_record` line (Codex 0.169 and later), keyed by the response id, else
 * by `fallbackId` (a function, for an id that costs something to compute, only when it is needed).
 */
export function rolloutUsage(
  row: Row,
  model: string | undefined,
  fallbackId: string | (() => string),
): UsageRecord | null {
  if (row.type !== "token_usage_record") return null;
  const p = rec(row.payload);
  const id =
    typeof p.response_id === "string"
      ? p.response_id
      : typeof fallbackId === "string"
        ? fallbackId
        : fallbackId();
  return openAiUsage(id, rec(p.usage), model);
}

/** The call id and exit code of a command that ended (`exec_command_end`, or a completed CommandExecution). */
export function rolloutExit(row: Row): [string, number] | null {
  const p = rec(row.payload);
  const item = rec(p.item);
  const call = typeof p.call_id === "string" ? p.call_id : typeof item.id === "string" ? item.id : undefined;
  const code =
    p.type === "exec_command_end"
      ? p.exit_code
      : item.type === "CommandExecution"
        ? item.exit_code
        : undefined;
  return call !== undefined && typeof code === "number" ? [call, code] : null;
}
