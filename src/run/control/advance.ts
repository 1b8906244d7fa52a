/** After an event: cancel what can never run, start what may, and wait or wind down when nothing moves. */
import { aggregates } from "./aggregate.js";
import { type StepDraft, RUN_KEY, handOut } from "./step-draft.js";
import { readiness } from "./graph.js";
import { blockOf, candidates } from "./schedule.js";
import { cancel, hold, startFresh, startIteration } from "./work.js";

/**
 * Cancels every pending leaf a dependency of which failed for good or was canceled, until nothing changes
 * (a cancellation can doom further dependents), so that every task becomes terminal.
 */
export function cancelDoomed(d: StepDraft): void {
  for (let changed = true; changed;) {
    changed = false;
    const aggregate = aggregates(d.state);
    for (const id of d.state.order) {
      const task = d.state.tasks[id];
      if (task?.status !== "pending" || Object.hasOwn(d.state.inFlight, id)) continue;
      const ready = readiness(d.state, id, aggregate);
      if (ready.kind !== "doomed") continue;
      cancel(d, id, `dependency ${ready.dep} ${ready.why}`);
      changed = true;
    }
  }
}

/**
 * Hands out new work in schedule order while limits allow; the first candidate held back is recorded with
 * why (once a step: the rest wait behind it for the same or a like reason).
 */
function schedule(d: StepDraft): void {
  let held = false;
  for (const c of candidates(d.state, aggregates(d.state))) {
    const block = blockOf(d.state, { fresh: c.kind === "new", takesSlot: true, agent: true });
    if (block !== null) {
      if (!held) hold(d, c.task, block);
      held = true;
      continue;
    }
    if (c.kind === "new") startFresh(d, c.task);
    else startIteration(d, c.task, "retry");
  }
}

/** The earliest time a retry is due, or null when none is pending. */
function nextRetry(d: StepDraft): number | null {
  let next: number | null = null;
  for (const task of Object.values(d.state.tasks))
    if (task.status === "failed" && !task.permanent && task.retryAt !== null)
      next = next === null ? task.retryAt : Math.min(next, task.retryAt);
  return next;
}

/**
 * Moves the run on after an event has been applied. With nothing in flight afterwards, the run waits for
 * its next retry when one can still start, and otherwise writes its report: every task is terminal, or the
 * run is paused or out of iterations.
 */
export function advance(d: StepDraft): void {
  const s = d.state;
  if (s.finished !== null) return;
  cancelDoomed(d);
  // The report is being written: the run is winding down and starts nothing.
  if (s.inFlight[RUN_KEY] === "write_report") return;
  schedule(d);
  if (Object.keys(s.inFlight).length > 0) return;
  const next = nextRetry(d);
  const canRetry = blockOf(s, { fresh: false, takesSlot: false, agent: true }) === null;
  if (next !== null && canRetry) handOut(d, RUN_KEY, { kind: "wait", until: next });
  else handOut(d, RUN_KEY, { kind: "write_report" });
}
