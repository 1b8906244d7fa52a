/** The thrashing guard: the same file edited again and again while the checks stay red. */
import { clip } from "../capped.js";
import { advise, pass, quote, type Guard } from "../guard.js";
import { NO_ITEMS } from "../empty.js";
import type { State } from "../state.js";

const name = "thrashing";
/** This guard's "nothing to say", made once: it is the answer to most events. */
const passed = pass(name);

/** Whether `path` has been changed or flagged in `limit` iterations or more. */
function isHot(state: State, path: string, limit: number): boolean {
  return (state.files[clip(path)]?.iterations ?? 0) >= limit;
}

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
    if (event.kind === "tool.requested") paths = event.writes ?? NO_ITEMS;
    else if (event.kind === "verification.ran" && !event.passed) paths = event.flagged ?? NO_ITEMS;
    else return passed;
    if (paths.length === 0) return passed;
    const limit = policy.thrashing.iterations;
    let anyHot = false;
    for (let i = 0; i < paths.length && !anyHot; i++) anyHot = isHot(state, paths[i]!, limit);
    if (!anyHot) return passed;
    // Edit rounds while every check is green and the task is not failing are ordinary step-by-step work.
    let red = false;
    for (const check in state.checks) if (state.checks[check]?.passed === false) red = true;
    if (!red && (state.churn[state.task]?.failures ?? 0) === 0) return passed;
    const hot = paths.filter((path) => isHot(state, path, limit));
    const first = hot[0] ?? "";
    const n = state.files[clip(first)]?.iterations ?? limit;
    return advise(
      name,
      `${hot.map(quote).join(", ")} ${hot.length === 1 ? "has" : "have"} been changed or flagged in ${n} iterations without the checks getting greener. Stop editing ${hot.length === 1 ? "it" : "them"}: re-read the failing check and the surrounding design, then make one deliberate change.`,
    );
  },
};
