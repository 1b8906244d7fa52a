/** The WIP-limits guard: caps on tasks in flight, unverified lines and retries of a failing command. */
import { deny, pass, quote, type Guard } from "../guard.js";
import { formatCount } from "../format.js";
import { failureClass } from "../keys.js";

const name = "wip-limits";
/** This guard's "nothing to say", made once: it is the answer to most events. */
const passed = pass(name);

/**
 * Bounded work in progress (seed 004): caps on tasks in flight, on changed lines no check has verified,
 * and on retries of the same failing command.
 */
export const wipLimits: Guard = {
  name,
  order: 340,
  category: "quality-gates",
  shortCircuit: true,
  grades: ["deny"],
  answers: ["tool.requested", "task.started"],
  evaluate(state, event, policy) {
    const rules = policy.wip;
    if (event.kind === "task.started") {
      if (state.inFlight.length <= rules.maxInFlightTasks) return passed;
      const others = state.inFlight.filter((t) => t !== event.task);
      return deny(
        name,
        `${others.length} ${others.length === 1 ? "task is" : "tasks are"} already in flight (${others.map((t) => `"${t}"`).join(", ")}); the limit is ${rules.maxInFlightTasks}. Finish one before starting task "${event.task}".`,
      );
    }
    if (event.kind !== "tool.requested") return passed;
    if ((event.writes?.length ?? 0) > 0 && state.edits.unverifiedLines > rules.maxUnverifiedLines) {
      return deny(
        name,
        `${formatCount(state.edits.unverifiedLines)} changed lines have not passed a check yet (limit ${formatCount(rules.maxUnverifiedLines)}). Run the checks before changing more.`,
      );
    }
    const retries = state.failureClasses[failureClass(event)] ?? 0;
    if (retries < rules.maxRetriesPerFailureClass) return passed;
    const what = event.command !== undefined ? quote(event.command) : `${event.tool}`;
    return deny(
      name,
      `${what} has failed ${retries} times in a row, the most retries allowed. Do something else: read the error, change the code or the approach.`,
    );
  },
};
