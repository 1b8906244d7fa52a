/** A model response's token usage, as the OpenAI Agents SDK reports it, in the form reins prices. */
import type { UsageRecord } from "../../base/vocabulary/events.js";

/**
 * The usage of one response: the SDK's `Usage` (a non-streamed response) or its `UsageData` (a streamed
 * one's `response_done`). The details are one record, or a list of one per request.
 */
export interface SdkUsage {
  inputTokens: number;
  outputTokens: number;
  inputTokensDetails?: Record<string, number> | Record<string, number>[] | undefined;
}

const count = (n: unknown) => (typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0);

/**
 * A response's usage as reins prices it. OpenAI counts cached tokens in `inputTokens` (the details say how
 * many); reins counts them apart, as cache reads, so the input is what was not cached.
 */
export function openAiUsage(id: string, usage: SdkUsage, model: string | undefined): UsageRecord {
  const details = usage.inputTokensDetails;
  const cached = (Array.isArray(details) ? details : details === undefined ? [] : [details]).reduce(
    (sum, d) => sum + count(d.cached_tokens),
    0,
  );
  const input = count(usage.inputTokens);
  return {
    id,
    input: Math.max(0, input - cached),
    output: count(usage.outputTokens),
    cacheRead: Math.min(cached, input),
    cacheWrite: 0,
    ...(model !== undefined ? { model } : {}),
  };
}
