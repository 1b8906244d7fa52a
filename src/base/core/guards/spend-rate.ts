/** The spend-rate guard: catches a runaway burst of spending within a rate window. */
import { advise, deny, pass, type Guard } from "../guard.js";
import { formatCount, formatDuration, formatUsd } from "../format.js";

const name = "spend-rate";
/** This guard's "nothing to say", made once: it is the answer to most events. */
const passed = pass(name);

/**
 * Catches a runaway burst before the budget is gone: a rate window spending far more than the session's
 * own recent windows, or more than a configured ceiling. Fires at most once per window.
 */
export const spendRate: Guard = {
  name,
  order: 120,
  category: "resource-limits",
  shortCircuit: false,
  grades: ["advise", "deny"],
  answers: ["usage.recorded"],
  evaluate(state, event, policy) {
    if (event.kind !== "usage.recorded") return passed;
    const buckets = state.rate.buckets;
    const current = buckets[buckets.length - 1];
    if (current === undefined || state.rate.firedWindow === current[0]) return passed;
    const [window, tokens, usd] = current;
    const rule = policy.spendRate;
    const per = formatDuration(rule.windowMs);
    const effects = [{ kind: "rate.fired" as const, window }];

    if (rule.maxTokensPerWindow !== null && tokens > rule.maxTokensPerWindow) {
      return deny(
        name,
        `The session spent ${formatCount(tokens)} tokens in the last ${per}, over the ceiling of ${formatCount(rule.maxTokensPerWindow)}. Slow down: a person must confirm before work goes on.`,
        { ask: true, alert: "spend_rate", effects },
      );
    }
    if (rule.maxUsdPerWindow !== null && usd > rule.maxUsdPerWindow) {
      return deny(
        name,
        `The session spent ${formatUsd(usd)} in the last ${per}, over the ceiling of ${formatUsd(rule.maxUsdPerWindow)}. Slow down: a person must confirm before work goes on.`,
        { ask: true, alert: "spend_rate", effects },
      );
    }

    // A baseline needs history: a session younger than its baseline windows has no "usual" rate yet.
    const first = window - rule.baselineWindows;
    if (state.startedAt === null || state.startedAt > first * rule.windowMs || tokens < rule.minTokens)
      return passed;
    let earlier = 0;
    for (const [w, t] of buckets) if (w >= first && w < window) earlier += t;
    const baseline = earlier / rule.baselineWindows;
    if (tokens <= rule.burstFactor * Math.max(baseline, 1)) return passed;
    const factor = baseline > 0 ? `${Math.round(tokens / baseline)}x` : "far above";
    return advise(
      name,
      `Token spend jumped to ${formatCount(tokens)} in the last ${per}, ${factor} the session's recent rate of ${formatCount(baseline)}. Check for a runaway loop or an oversized context before going on.`,
      { alert: "spend_rate", effects },
    );
  },
};
