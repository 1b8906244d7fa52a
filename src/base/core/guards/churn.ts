/** The churn guard: escalates a task that keeps failing, up to halting it until a person confirms. */
import { advise, pass, stop, type Guard } from "../guard.js";
import { churnLevel } from "../churn-level.js";

const name = "churn";
/** This guard's "nothing to say", made once: it is the answer to most events. */
const passed = pass(name);

const names = ["Normal", "Warning", "Intervention", "Halted"] as const;

/** A failure that moves the escalation machine. */
function isFailure(kind: string, event: { outcome?: string; status?: string }): boolean {
  return (
    (kind === "iteration.ended" && event.outcome === "failure") ||
    (kind === "task.ended" && event.status === "failed")
  );
}

/**
 * Escalates a task that keeps failing: Normal → Warning (2 consecutive failures) → Intervention (3) →
 * Halted (5). Intervention and Halted block the task's work until a person confirms going on.
 */
export const churn: Guard = {
  name,
  order: 210,
  category: "progress-integrity",
  shortCircuit: true,
  grades: ["advise", "stop"],
  answers: ["tool.requested", "task.started", "iteration.ended", "task.ended"],
  evaluate(state, event, policy) {
    const failing = isFailure(event.kind, event as { outcome?: string; status?: string });
    if (!failing && event.kind !== "tool.requested" && event.kind !== "task.started") return passed;
    const memo = state.churn[state.task];
    if (memo === undefined) return passed;
    const level = churnLevel(memo.failures, policy);
    if (level === 0) return passed;
    const task = state.task === "" ? "The session's work" : `Task "${state.task}"`;
    const what = `${task} has failed ${memo.failures} times in a row (escalation: ${names[level]})`;
    if (level === 1) {
      return failing
        ? advise(name, `${what}. Consider a different approach before the next attempt.`)
        : passed;
    }
    if (memo.confirmed >= level) {
      return failing ? advise(name, `${what}. A person let work go on; change strategy now.`) : passed;
    }
    const halted = level === 3;
    return stop(
      name,
      halted
        ? `${what}. Work on it is halted until a person confirms going on (\`reins confirm ${state.scope}\`).`
        : `${what}. You must change strategy; a person must confirm before work on it goes on.`,
      failing ? { alert: halted ? "churn_halted" : "churn_intervention" } : {},
    );
  },
};
