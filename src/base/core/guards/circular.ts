/** The circular guard: the same action on the same resource, again and again, with nothing changing. */
import { own } from "../capped.js";
import { advise, deny, pass, quote, times, type Guard } from "../guard.js";
import { runKey, writeKey } from "../keys.js";
import { NO_ITEMS } from "../empty.js";

const name = "circular";
/** This guard's "nothing to say", made once: it is the answer to most events. */
const passed = pass(name);

/**
 * The same action on the same resource, again and again. Writing the same content to a file a third time is
 * a loop and is blocked. Re-running a command that gave the same result with nothing changed in between is
 * warned about before it runs (the circuit breaker blocks the fifth identical call); a failing command whose
 * result stays the same although files were edited is progress that is not landing: also a warning. Repeated reads
 * belong to tool discipline.
 */
export const circular: Guard = {
  name,
  order: 220,
  category: "progress-integrity",
  shortCircuit: false,
  grades: ["advise", "deny"],
  answers: ["tool.requested", "tool.completed"],
  evaluate(state, event, policy) {
    if (event.kind !== "tool.requested" && event.kind !== "tool.completed") return passed;
    if (own(policy.loops.tools, event.tool)?.exempt === true) return passed;
    const threshold = policy.circular.threshold;
    if (event.kind === "tool.requested") {
      for (const path of event.writes ?? NO_ITEMS) {
        const memo = state.resources[writeKey(path)];
        if (memo !== undefined && memo.same >= threshold) {
          return deny(
            name,
            `You have written the same change to ${quote(path)} ${times(memo.same)}; it is not taking effect. Read the file to see what is really there, then change approach.`,
          );
        }
      }
      if (event.command === undefined) return passed;
      const memo = state.resources[runKey(event.command)];
      if (memo !== undefined && memo.quiet >= threshold - 1 && memo.edits === state.edits.total) {
        return advise(
          name,
          `${quote(event.command)} gave the same result ${times(memo.quiet)} with nothing changed in between; running it again will not help. Change something first.`,
        );
      }
      return passed;
    }
    if (event.command === undefined || event.outcome === "success") return passed;
    const memo = state.resources[runKey(event.command)];
    if (memo !== undefined && memo.same >= threshold && memo.quiet < memo.same) {
      return advise(
        name,
        `${quote(event.command)} gave the same result ${times(memo.same)} although files were edited in between: the edits are not reaching the problem. Re-read the output and rethink the fix.`,
      );
    }
    return passed;
  },
};
