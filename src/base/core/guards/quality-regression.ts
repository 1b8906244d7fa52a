/** The quality-regression guard: warns when a check's score keeps declining. */
import { clip } from "../capped.js";
import { advise, pass, type Guard } from "../guard.js";

const name = "quality-regression";
/** This guard's "nothing to say", made once: it is the answer to most events. */
const passed = pass(name);

/** Warns when a check's score declined several times in a row (seed 002: three). */
export const qualityRegression: Guard = {
  name,
  order: 320,
  category: "quality-gates",
  shortCircuit: false,
  grades: ["advise"],
  answers: ["verification.ran"],
  evaluate(state, event, policy) {
    if (event.kind !== "verification.ran") return passed;
    const check = state.checks[clip(event.name)];
    if (check === undefined || check.declines < policy.quality.declines) return passed;
    return advise(
      name,
      `The ${event.name} score declined ${check.declines} times in a row (now ${check.score.toFixed(2)}). The recent changes make things worse: go back to the last version that scored better and change approach.`,
    );
  },
};
