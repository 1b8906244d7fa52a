/** What a state spent: tokens as the budget counts them, and its spend since a moment (the dashboards' "today"). */
import type { Policy } from "./policy.js";
import type { State } from "./state.js";

/** Tokens as the budget counts them, from a state's tally. */
export function tallyTokens(state: State, policy: Policy): number {
  const t = state.tally?.tokens;
  if (t === undefined) return 0;
  return t.input + t.output + t.cacheWrite + (policy.budget.countCacheReads ? t.cacheRead : 0);
}

/** Spend of a state since `since`: all of it for a session started since, else its recent rate windows. */
export function spendSince(state: State, policy: Policy, since: number): { tokens: number; usd: number } {
  if (state.lastAt === null || state.lastAt < since) return { tokens: 0, usd: 0 };
  if (state.startedAt !== null && state.startedAt >= since)
    return { tokens: tallyTokens(state, policy), usd: state.tally?.usd ?? 0 };
  const windowMs = policy.spendRate.windowMs;
  let tokens = 0;
  let usd = 0;
  for (const [window, t, u] of state.rate.buckets)
    if (window * windowMs >= since) {
      tokens += t;
      usd += u;
    }
  return { tokens, usd };
}
