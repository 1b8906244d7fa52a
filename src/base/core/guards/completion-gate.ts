/** The completion gate: "done" is refused until the checks its level requires pass after the last edit. */
import { clip } from "../capped.js";
import { checkInstruction } from "../check-instruction.js";
import { advise, deny, pass, type Guard, type GuardResult } from "../guard.js";

const name = "completion-gate";
/** This guard's "nothing to say", made once: it is the answer to most events. */
const passed = pass(name);

/**
 * Evidence-gated completion (seed 004): "done" is refused unless every verification the level requires
 * passed after the last edit (and, with a completion promise, the agent's last message holds it). Bounded: a
 * paused budget, an open breaker, or `maxRefusals` refusals in a row let the agent stop, with the reason.
 */
const accepted: GuardResult = Object.freeze({
  guard: name,
  grade: "allow",
  effects: [{ kind: "completion.accepted" }],
}) as GuardResult;

export const completionGate: Guard = {
  name,
  order: 310,
  category: "quality-gates",
  shortCircuit: true,
  grades: ["advise", "deny"],
  answers: ["completion.claimed"],
  evaluate(state, event, policy) {
    if (event.kind !== "completion.claimed") return passed;
    const required = policy.completion.required[event.level];
    const missing: string[] = [];
    for (const check of required) {
      const memo = state.checks[clip(check)];
      const run = checkInstruction(state, check, policy);
      if (memo === undefined) missing.push(`${check} has not run (run ${run})`);
      else if (!memo.passed) missing.push(`${check} is failing (run ${run} and fix it)`);
      else if (memo.passSeq < state.edits.lastSeq)
        missing.push(`${check} has not run since the last edit (run ${run})`);
    }
    const promise = policy.completion.promise;
    if (promise !== null && event.promiseMet === false) {
      missing.push(`your last message does not say "${promise}"; say it only when the work is really done`);
    }
    if (missing.length === 0) return accepted;
    const paused = [state.budget.session, ...Object.values(state.budget.tasks)].some(
      (m) => m.paused !== null,
    );
    const why = paused
      ? "the budget is paused"
      : state.breaker.status === "open"
        ? "the circuit breaker is open"
        : state.refusedClaims >= policy.completion.maxRefusals
          ? `"done" was already refused ${state.refusedClaims} times in a row`
          : null;
    // Bounded: an agent that cannot go on, or keeps failing to prove it is done, is let stop with the reason.
    if (why !== null) {
      return advise(name, `Stopping without evidence because ${why}: ${missing.join("; ")}.`, {
        effects: [{ kind: "completion.accepted" }],
      });
    }
    return deny(
      name,
      `Not done yet: ${missing.join("; ")}. Claim completion again once ${missing.length === 1 ? "it passes" : "they pass"}.`,
      { effects: [{ kind: "completion.refused" }] },
    );
  },
};
