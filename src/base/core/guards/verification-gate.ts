/** The verification gate: edits wait for a check after many unchecked ones; red checks hold new tasks. */
import { checkInstruction } from "../check-instruction.js";
import { deny, pass, type Guard } from "../guard.js";

const name = "verification-gate";
/** This guard's "nothing to say", made once: it is the answer to most events. */
const passed = pass(name);

/**
 * Verification-gated progress (seed 004): after N edits with no check, further edits wait until one runs;
 * while a check is red, only fixing work may go on, so no new task starts.
 */
export const verificationGate: Guard = {
  name,
  order: 300,
  category: "quality-gates",
  shortCircuit: true,
  grades: ["deny"],
  answers: ["tool.requested", "task.started"],
  evaluate(state, event, policy) {
    const rules = policy.verification;
    if (event.kind === "tool.requested" && (event.writes?.length ?? 0) > 0) {
      const edits = state.edits.sinceVerification;
      if (edits <= rules.maxEditsWithoutVerification) return passed;
      return deny(
        name,
        `You have made ${edits - 1} edits since the last check ran. Run a check (for example ${checkInstruction(state, "tests", policy)}) before editing more.`,
      );
    }
    if (event.kind !== "task.started" || !rules.fixOnlyWhileRed) return passed;
    const red = Object.keys(state.checks).filter((check) => state.checks[check]?.passed === false);
    if (red.length === 0) return passed;
    return deny(
      name,
      `${red.join(", ")} ${red.length === 1 ? "is" : "are"} failing. Fix ${red.length === 1 ? "it" : "them"} (run ${checkInstruction(state, red[0] ?? "tests", policy)} to see why) before starting task "${event.task}".`,
    );
  },
};
