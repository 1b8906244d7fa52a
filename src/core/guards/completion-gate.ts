import { block, pass, quote, warn, type Guard } from "../guard.js";
import type { Policy } from "../policy.js";
import type { State } from "../state.js";

const name = "completion-gate";

/**
 * How to run a check, for an instruction: the command last seen running it, else the policy's suggestion,
 * quoted; or, for a check with no known command (an oracle such as `task`), its name in words.
 */
export function checkCommand(state: State, check: string, policy: Policy): string {
  const command = state.checks[check]?.command ?? policy.completion.commands[check];
  return command === undefined ? `the ${check} verification` : quote(command);
}

/**
 * Evidence-gated completion (seed 004): "done" is refused unless every verification the level requires
 * passed after the last edit. A paused budget or an open breaker lets the agent stop: it cannot go on anyway.
 */
export const completionGate: Guard = {
  name,
  order: 310,
  category: "quality-gates",
  shortCircuit: true,
  evaluate(state, event, policy) {
    if (event.kind !== "completion.claimed") return pass(name);
    const required = policy.completion.required[event.level];
    const missing: string[] = [];
    for (const check of required) {
      const memo = state.checks[check];
      const run = checkCommand(state, check, policy);
      if (memo === undefined) missing.push(`${check} has not run (run ${run})`);
      else if (!memo.passed) missing.push(`${check} is failing (run ${run} and fix it)`);
      else if (memo.passSeq < state.edits.lastSeq)
        missing.push(`${check} has not run since the last edit (run ${run})`);
    }
    if (missing.length === 0) return pass(name);
    const paused = [state.budget.session, ...Object.values(state.budget.tasks)].some(
      (m) => m.paused !== null,
    );
    if (paused || state.breaker.status === "open") {
      return warn(
        name,
        `Stopping without evidence because ${paused ? "the budget is paused" : "the circuit breaker is open"}: ${missing.join("; ")}.`,
      );
    }
    return block(
      name,
      `Not done yet: ${missing.join("; ")}. Claim completion again once ${missing.length === 1 ? "it passes" : "they pass"}.`,
    );
  },
};
