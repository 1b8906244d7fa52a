/** Whether an event is to be applied, or ignored as answering nothing (stale, repeated, or after the end). */
import { RUN_KEY } from "./step-draft.js";
import { leavesUnder, own } from "./graph.js";
import { isTerminal } from "./task-state.js";
import type { RunAction, RunEvent, RunState } from "./types.js";

/** Why an answer for `key` does not answer the action in flight there, or null when it does. */
function answers(state: RunState, key: string, kind: RunAction["kind"], ref: number): string | null {
  const who = key === RUN_KEY ? "the run" : key;
  const inFlight = own(state.inFlight, key);
  if (inFlight !== kind) return `no ${kind} in flight for ${who}`;
  if (own(state.refs, key) !== ref)
    return `${who}'s ${kind} in flight has ref ${state.refs[key]}, not ${ref}`;
  return null;
}

/**
 * Why `event` changes nothing (the step then leaves the state as it was, `seq` and `now` included), or null
 * when it applies. An answer applies only to the action in flight with its ref, so a repeated or stale
 * answer is ignored: replaying a completed step is harmless. A finished run ignores everything but a
 * resume (when it finished without proof); a started run ignores another start.
 */
export function ignoreReason(state: RunState, event: RunEvent): string | null {
  if (event.kind === "run.started") return "the run has already started";
  if (event.kind === "run.resumed")
    return state.finished?.proven === true ? "the run has finished with its proof" : null;
  if (state.finished !== null) return "the run has finished";
  switch (event.kind) {
    case "noop.checked":
    case "agent.finished":
    case "checks.ran":
    case "witness.ran":
    case "task.committed":
    case "commit.failed":
    case "task.rolled_back": {
      if (own(state.tasks, event.task) === undefined) return `${event.task} is no unit of work of this run`;
      const kind = {
        "noop.checked": "check_noop",
        "agent.finished": "run_agent",
        "checks.ran": "run_checks",
        "witness.ran": "witness",
        "task.committed": "commit",
        "commit.failed": "commit",
        "task.rolled_back": "rollback",
      } as const;
      const why = answers(state, event.task, kind[event.kind], event.ref);
      if (why !== null) return why;
      const attempts = state.tasks[event.task]?.attempts;
      return event.kind === "agent.finished" && event.attempt !== attempts
        ? `${event.task} is at attempt ${attempts}, not ${event.attempt}`
        : null;
    }
    case "clock.ticked":
      return answers(state, RUN_KEY, "wait", event.ref);
    case "report.written":
      return answers(state, RUN_KEY, "write_report", event.ref);
    case "task.canceled": {
      if (own(state.nodes, event.task) === undefined) return `${event.task} is not in the plan`;
      const open = leavesUnder(state.nodes, event.task).filter((id) => {
        const task = own(state.tasks, id);
        return task !== undefined && !isTerminal(task);
      });
      return open.length === 0 ? `${event.task} is already over` : null;
    }
    case "run.paused":
      return state.paused !== null ? `the run is already paused (${state.paused})` : null;
    case "spec.changed": {
      if (event.sections.length === 0) return "no section changed";
      if (event.tasks.length === 0) return "no task implements the changed sections";
      const unknown = event.tasks.find((id) => own(state.nodes, id) === undefined);
      return unknown !== undefined ? `${unknown} is not in the plan` : null;
    }
    default:
      return null;
  }
}
