/** The max-iterations guard: stops a loop past its iteration limit. */
import { pass, stop, type Guard } from "../guard.js";

const name = "max-iterations";
/** This guard's "nothing to say", made once: it is the answer to most events. */
const passed = pass(name);

/** Stops a loop whose iteration count is past its maximum (seed 002: the highest-priority check). */
export const maxIterations: Guard = {
  name,
  order: 100,
  category: "resource-limits",
  shortCircuit: true,
  grades: ["stop"],
  answers: ["tool.requested", "task.started", "iteration.ended"],
  evaluate(state, event, policy) {
    if (
      event.kind !== "tool.requested" &&
      event.kind !== "task.started" &&
      event.kind !== "iteration.ended"
    ) {
      return passed;
    }
    const max = policy.iterations.max;
    if (state.iterations <= max) return passed;
    const crossing = event.kind === "iteration.ended" && state.iterations === max + 1;
    return stop(
      name,
      `Iteration ${state.iterations} exceeds the maximum of ${max}. Stop here and report what is done and what is left.`,
      crossing ? { alert: "max_iterations" } : {},
    );
  },
};
