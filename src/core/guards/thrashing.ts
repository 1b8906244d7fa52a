/** The thrashing guard: the same file edited again and again while the checks stay red. */
import { clip } from "../capped.js";
import { pass, quote, warn, type Guard } from "../guard.js";
import { EMPTY } from "../empty.js";

const name = "thrashing";
/** This guard's "nothing to say", made once: it is the answer to most events. */
const passed = pass(name);

/**
 * The same file edited, or flagged by failing checks, in 5 iterations without the checks getting greener,
 * while a check is red or the task is failing. Thrashing is a warning with instructions, never a block.
 */
export const thrashing: Guard = {
  name,
  order: 330,
  category: "quality-gates",
  shortCircuit: false,
  grades: ["advise"],
  answers: ["tool.requested", "verification.ran"],
  evaluate(state, event, policy) {
    let paths: readonly string[];
    if (event.kind === "tool.requested") paths = event.writes ?? EMPTY;
    else if (event.kind === "verification.ran" && !event.passed) paths = event.flagged ?? EMPTY;
    else return passed;
    if (paths.length === 0) return passed;
    const limit = policy.thrashing.iterations;
    const isHot = (path: string) => (state.files[clip(path)]?.iterations ?? 0) >= limit;
    if (!paths.some(isHot)) return passed;
    // Edit rounds while every check is green and the task is not failing are ordinary step-by-step work.
    let red = false;
    for (const check in state.checks) if (state.checks[check]?.passed === false) red = true;
    if (!red && (state.churn[state.task]?.failures ?? 0) === 0) return passed;
    const hot = paths.filter(isHot);
    const first = hot[0] ?? "";
    const n = state.files[clip(first)]?.iterations ?? limit;
    return warn(
      name,
      `${hot.map(quote).join(", ")} ${hot.length === 1 ? "has" : "have"} been changed or flagged in ${n} iterations without the checks getting greener. Stop editing ${hot.length === 1 ? "it" : "them"}: re-read the failing check and the surrounding design, then make one deliberate change.`,
    );
  },
};
