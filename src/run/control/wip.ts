/** Work in progress and its limits: slots in flight, unverified lines, and fix-only while anything is red. */
import { RUN_KEY } from "./step-draft.js";
import { isTerminal } from "./task-state.js";
import type { RunState } from "./types.js";

/** Leaves with work in flight. A rollback is cleanup of work that is over, so it holds no slot. */
export function leavesInFlight(state: Pick<RunState, "inFlight">): string[] {
  return Object.entries(state.inFlight)
    .filter(([key, kind]) => key !== RUN_KEY && kind !== "rollback")
    .map(([key]) => key);
}

/** Changed lines not yet verified green, over the leaves still open. */
export function unverifiedLines(state: Pick<RunState, "tasks">): number {
  let sum = 0;
  for (const task of Object.values(state.tasks)) if (!isTerminal(task)) sum += task.unverifiedLines;
  return sum;
}

/** Open leaves whose last checks were red: while any is, the run only fixes (seed 004, "fix-only"). */
export function redLeaves(state: Pick<RunState, "tasks">): string[] {
  return Object.entries(state.tasks)
    .filter(([, task]) => task.fixOnly && !isTerminal(task))
    .map(([id]) => id);
}

/** Why no further leaf may take a slot now (`wip` leaves already in flight), or null. */
export function slotBlock(state: Pick<RunState, "inFlight" | "settings">): string | null {
  const busy = leavesInFlight(state).length;
  return busy >= state.settings.wip ? `wip limit reached: ${busy} of ${state.settings.wip} in flight` : null;
}

/**
 * Why a leaf not yet started may not start now, or null: some leaf is red (fix-only), or too many changed
 * lines wait for verification. Started work is never held by these, so it can always reach green.
 */
export function newWorkBlock(state: Pick<RunState, "tasks" | "settings">): string | null {
  const red = redLeaves(state);
  if (red.length > 0) return `fix-only: ${red.join(", ")} red`;
  const lines = unverifiedLines(state);
  const max = state.settings.maxUnverifiedLines;
  return lines >= max ? `unverified lines: ${lines} of ${max}` : null;
}
