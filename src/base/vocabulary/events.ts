/**
 * The event builders reins' own hooks use, for a program that records its agent's work itself: what a
 * tool call touches and its input's hashes, its end (with a check's result when it ran one), the agent's
 * claim of done, and a model call's usage priced by the policy. Each returns an `EventInput`; `eventsAt`
 * gives them their scope and time.
 */
export { canonical, hashOf } from "./hash.js";
export {
  claimEvent,
  eventsAt,
  promptTaskEvents,
  toolEndEvents,
  type PromptTaskOptions,
  type ToolOutcome,
} from "./event-builders.js";
export { costOf, priceOf, type Pricing } from "./pricing.js";
export { toolTouch } from "./tool-touch.js";
export { checkOf, checkPatterns, checkResult, type CheckPatterns } from "./check-match.js";
export { usageEvent, type UsageRecord } from "./usage.js";
