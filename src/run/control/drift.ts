/**
 * Spec drift: sections that tasks implement changed. A done task is reopened (done → pending, its history
 * kept) and redone; work under way is told in its next iteration and is not committed before one; work
 * not started reads the spec when it starts.
 */
import { assertNever } from "../../base/core/errors.js";
import { type StepDraft, RUN_KEY, setStatus, settle, taskOf } from "./step-draft.js";
import { leavesUnder, own } from "./graph.js";
import type { RunEvent, TaskRun } from "./types.js";

/** The event of spec drift. */
export type SpecChanged = Extract<RunEvent, { kind: "spec.changed" }>;

/** Adds `sections` to what the task's next iteration is told, each once, in the order met. */
function tell(task: TaskRun, sections: readonly string[]): void {
  task.specChanged = [...new Set([...(task.specChanged ?? []), ...sections])];
}

/** The units of work `tasks` stand for (a parent for its leaves), each once, in plan order. */
export function affectedLeaves(d: StepDraft, tasks: readonly string[]): string[] {
  const s = d.state;
  const named = new Set(tasks.flatMap((id) => leavesUnder(s.nodes, id)));
  return s.order.filter((id) => named.has(id) && own(s.tasks, id) !== undefined);
}

/**
 * Applies spec drift to every unit of work it names. Each reopen is a `transition` (why: the sections);
 * every other affected task gets a `drift` decision saying what the change means for it.
 */
export function applySpecChanged(d: StepDraft, event: SpecChanged): void {
  const { sections } = event;
  const named = `spec ${sections.length === 1 ? "section" : "sections"} ${sections.join(", ")}`;
  const note = (task: string, why: string) => d.decisions.push({ kind: "drift", task, sections, why });
  let reopened = false;
  for (const id of affectedLeaves(d, event.tasks)) {
    const task = taskOf(d, id);
    switch (task.status) {
      case "done": {
        const why = `reopened: ${named} changed`;
        setStatus(d, id, "pending", why, "drift");
        // Its attempts, failures, spend and commit stay: the history of the task, and its budgets, which
        // span the run so that a spec that keeps changing cannot buy unlimited iterations.
        tell(task, sections);
        task.noop = false;
        task.fixOnly = false;
        task.gate = null;
        task.retryAt = null;
        task.unverifiedLines = 0;
        task.reason = why;
        reopened = true;
        break;
      }
      case "in_progress":
      case "verifying":
        tell(task, sections);
        note(
          id,
          `${named} changed while it was at work: its next iteration is told, and it is not committed before one`,
        );
        break;
      case "failed":
        if (task.permanent) note(id, `${named} changed; it failed for good, nothing to redo`);
        else {
          tell(task, sections);
          note(id, `${named} changed; its retry is told`);
        }
        break;
      case "pending":
        if (task.specChanged !== undefined) {
          tell(task, sections);
          note(id, `${named} changed; reopened already, its next iteration is told`);
        } else note(id, `${named} changed; not started, it reads the spec when it starts`);
        break;
      case "canceled":
        note(id, `${named} changed; canceled, nothing to redo`);
        break;
      default:
        assertNever(task.status);
    }
  }
  // A resumed run that had nothing left was writing its report: with work reopened, that report is moot.
  if (reopened && d.state.inFlight[RUN_KEY] === "write_report") settle(d, RUN_KEY);
}
