/** A model call's price: which price-table entry a model name takes, and the USD of a usage. */
import type { Policy } from "../core/policy.js";

/** How a usage's USD was found: the agent's own figure, the price table, a family's price, or a guess. */
export type Pricing = "agent" | "table" | `family:${string}` | "unknown";

/** The words of a model name that say what it is, without its vendor prefix, versions and dates. */
function modelWords(model: string): string[] {
  return model
    .replace(/^[^/]*\//, "")
    .toLowerCase()
    .split(/[-_.\s:]+/)
    .filter((w) => w !== "" && !/^\d/.test(w));
}

/**
 * The price of a model: the longest prefix of it in the policy's table; else the listed model of its family
 * (the same vendor word, the most other words in common: `claude-opus-5-5` is priced as `claude-opus-4`);
 * else the table's highest price. A model reins has never heard of must never spend for free.
 */
export function priceOf(policy: Policy, model: string | undefined): { key: string | null; pricing: Pricing } {
  const keys = Object.keys(policy.prices);
  if (model !== undefined) {
    let best: string | null = null;
    for (const prefix of keys)
      if (model.startsWith(prefix) && (best === null || prefix.length > best.length)) best = prefix;
    if (best !== null) return { key: best, pricing: "table" };
    const words = modelWords(model);
    let family: string | null = null;
    let score = 0;
    for (const key of keys) {
      const theirs = modelWords(key);
      if (theirs[0] !== words[0]) continue;
      const shared = theirs.filter((w) => words.includes(w)).length;
      // More words in common wins; on a tie, the one with fewer words of its own (the plain model).
      if (
        shared > score ||
        (shared === score && family !== null && theirs.length < modelWords(family).length)
      ) {
        family = key;
        score = shared;
      }
    }
    if (family !== null) return { key: family, pricing: `family:${family}` };
  }
  let highest: string | null = null;
  for (const key of keys)
    if (highest === null || (policy.prices[key]?.input ?? 0) > (policy.prices[highest]?.input ?? 0))
      highest = key;
  return { key: highest, pricing: "unknown" };
}

/** USD for a usage at the price of `key` in the policy's table (the key `priceOf` found for its model). */
export function costOf(
  policy: Policy,
  key: string | null,
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number },
): number {
  const price = key === null ? undefined : policy.prices[key];
  if (price === undefined) return 0;
  return (
    (usage.input * price.input +
      usage.output * price.output +
      usage.cacheRead * price.cacheRead +
      usage.cacheWrite * price.cacheWrite) /
    1e6
  );
}
