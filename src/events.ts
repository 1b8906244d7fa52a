/**
 * The event builders reins' own hooks use, for a program that records its agent's work itself: what a
 * tool call touches and its input's hashes, its end (with a check's result when it ran one), the agent's
 * claim of done, and a model call's usage priced by the policy. Each returns an `EventInput`; `eventsAt`
 * gives them their scope and time.
 */
export {
  canonical,
  claimEvent,
  costOf,
  eventsAt,
  hashOf,
  priceOf,
  promptTaskEvents,
  toolEndEvents,
  toolTouch,
  type Pricing,
  type PromptTaskOptions,
  type ToolOutcome,
} from "./hooks/common.js";
export { checkOf, checkPatterns, checkResult, type CheckPatterns } from "./hooks/checks.js";
export { usageEvent, type UsageRecord } from "./hooks/usage.js";
