/** A model call's token usage, priced into a `usage.recorded` event. */
import type { EventInput } from "../core/reins-event.js";
import type { Policy } from "../core/policy.js";
import { costOf, priceOf } from "./pricing.js";
import { hashOf } from "./hash.js";

/**
 * One model call's token usage as an agent's log or transcript reports it, before it is priced. `id` is
 * stable for the call, so the same call read twice counts once.
 */
export interface UsageRecord {
  id: string;
  model?: string;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** What the agent itself says the call cost, when it says; preferred over the policy's price table. */
  costUsd?: number;
}

/** The `usage.recorded` event of a model call: priced by the agent's own figure, else the policy's prices. */
export function usageEvent(usage: UsageRecord, policy: Policy): EventInput {
  const reported = usage.costUsd;
  const own = reported !== undefined && Number.isFinite(reported) && reported >= 0;
  const { key, pricing } = own ? { key: null, pricing: "agent" as const } : priceOf(policy, usage.model);
  return {
    kind: "usage.recorded",
    id: `usage:${hashOf(usage.id)}`,
    inputTokens: usage.input,
    outputTokens: usage.output,
    cacheReadTokens: usage.cacheRead,
    cacheWriteTokens: usage.cacheWrite,
    costUsd: own ? reported : costOf(policy, key, usage),
    pricing,
    ...(usage.model !== undefined ? { model: usage.model } : {}),
  };
}
