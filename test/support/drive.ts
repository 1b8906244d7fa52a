/** A session driven step by step through some guards, for tests that read as an agent's actions. */
import type { Decision } from "../../src/base/core/decision.js";
import { advance } from "../../src/base/core/engine.js";
import type { Pipeline } from "../../src/base/core/pipeline.js";
import type { Policy } from "../../src/base/core/policy.js";
import { initialState } from "../../src/base/core/state.js";
import { timeline, type Timeline } from "../../src/base/core/timeline.js";

/**
 * A session driven step by step through some guards: each step scripts events on the timeline and returns
 * the decisions of the events it added, so a test reads as the agent's actions and reins' answers.
 */
export function driver(policy: Policy, guards: Pipeline) {
  const t = timeline("session:s");
  const state = initialState(t.scope);
  let applied = 0;
  const steps = (script: (t: Timeline) => unknown): Decision[] => {
    script(t);
    const fresh = t.events.slice(applied);
    applied = t.events.length;
    return fresh.map((event) => advance(state, event, policy, guards));
  };
  const step = (script: (t: Timeline) => unknown): Decision => steps(script).at(-1)!;
  return { t, state, steps, step };
}
