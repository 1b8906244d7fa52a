/** The tool-discipline guard: advice on wasteful habits (rereading, retrying, editing untested). */
import { clip } from "../capped.js";
import { advise, pass, quote, type Guard } from "../guard.js";
import { checkInstruction } from "../check-instruction.js";
import { failureClass } from "../keys.js";
import { NO_ITEMS } from "../empty.js";

const name = "tool-discipline";
/** This guard's "nothing to say", made once: it is the answer to most events. */
const passed = pass(name);

/**
 * Wasteful habits, answered with advice and never a block: reading the same unchanged file again and
 * again, re-running a command that keeps failing, and editing many times without running the tests.
 */
export const toolDiscipline: Guard = {
  name,
  order: 400,
  category: "tool-discipline",
  shortCircuit: false,
  grades: ["advise"],
  answers: ["tool.requested", "tool.completed"],
  evaluate(state, event, policy) {
    const rules = policy.discipline;
    if (event.kind === "tool.completed") {
      if (event.outcome === "success" || event.command === undefined) return passed;
      const failures = state.failureClasses[failureClass(event)] ?? 0;
      if (failures < rules.repeatedCommandFailures) return passed;
      // The same error again: loop-patterns already says so, and one word to the model is enough.
      if (state.calls.errorStreak >= policy.loops.errorRepeatWarn) return passed;
      return advise(
        name,
        `${quote(event.command)} failed ${failures} times in a row. Stop retrying; read the error and change approach.`,
      );
    }
    if (event.kind !== "tool.requested") return passed;
    let messages: string[] | undefined; // made only when there is something to say
    for (const path of event.reads ?? NO_ITEMS) {
      const reads = state.reads[clip(path)] ?? 0;
      if (reads >= rules.repeatedReads) {
        (messages ??= []).push(
          `You have read ${quote(path)} ${reads} times without it changing; use what you already read.`,
        );
      }
    }
    if ((event.writes?.length ?? 0) > 0 && state.edits.sinceTests >= rules.editsWithoutTests) {
      (messages ??= []).push(
        `This is edit ${state.edits.sinceTests} without running the tests. Run ${checkInstruction(state, "tests", policy)} before editing more.`,
      );
    }
    return messages === undefined ? passed : advise(name, messages.join(" "));
  },
};
