/** The usage of a Qwen Code transcript line: the Gemini-style `usageMetadata` of a model reply. */
import type { UsageRecord } from "../../base/vocabulary/usage.js";

const record = (v: unknown) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>) : {});
const count = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);

/**
 * The usage of one Qwen Code transcript line (`~/.qwen/projects/<project>/chats/<session>.jsonl`), or null
 * for a line without any: an assistant line's `usageMetadata`, keyed by the line's `uuid`. Qwen maps the
 * OpenAI API's `prompt_tokens` (which include the cached ones) to `promptTokenCount` and its cached tokens
 * to `cachedContentTokenCount`, so input is the prompt less the cache, and output what the total adds to
 * the prompt (thinking included), as gemini.ts's `geminiTokens` reads Gemini's (not imported: gemini.ts
 * stands on the adapter contract, which names the transcript reader that calls this).
 */
export function qwenLineUsage(entry: Record<string, unknown>, fallbackKey: () => string): UsageRecord | null {
  if (entry.type !== "assistant") return null;
  const meta = record(entry.usageMetadata);
  if (Object.keys(meta).length === 0) return null;
  const prompt = count(meta.promptTokenCount);
  const cached = Math.min(count(meta.cachedContentTokenCount), prompt);
  const shown = count(meta.candidatesTokenCount) + count(meta.thoughtsTokenCount);
  const output = Math.max(shown, count(meta.totalTokenCount) - prompt - count(meta.toolUsePromptTokenCount));
  const id = typeof entry.uuid === "string" && entry.uuid !== "" ? entry.uuid : fallbackKey();
  const model = typeof entry.model === "string" && entry.model !== "" ? entry.model : undefined;
  return {
    id: `qwen/${id}`,
    input: prompt - cached,
    output,
    cacheRead: cached,
    cacheWrite: 0,
    ...(model !== undefined ? { model } : {}),
  };
}
