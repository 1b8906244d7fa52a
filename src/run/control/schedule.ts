/** Which units of work may start, in what order, and what holds each back. */
import { readiness, ancestorsOf, own } from "./graph.js";
import { newWorkBlock, slotBlock } from "./wip.js";
import type { RunState, TaskStatus } from "./types.js";

/** A unit of work that could start: a new one (never tried) or a failed one whose retry is due. */
export interface Candidate {
  task: string;
  kind: "new" | "retry";
}

/** A leaf's priority: the highest of its own and its ancestors', as a parent's deps also hold for it. */
export function priorityOf(state: Pick<RunState, "nodes">, leaf: string): number {
  let best = own(state.nodes, leaf)?.priority ?? 0;
  for (const id of ancestorsOf(state.nodes, leaf)) best = Math.max(best, own(state.nodes, id)?.priority ?? 0);
  return best;
}

/**
 * The leaves that could start now, in the order they start: priority first (higher first), then fewer
 * attempts (so a task retried often does not starve the others), then plan order. Nothing else counts,
 * so the order is the same for the same state.
 */
export function candidates(
  state: Pick<RunState, "nodes" | "order" | "tasks" | "inFlight" | "now">,
  aggregate: Readonly<Record<string, TaskStatus>>,
): Candidate[] {
  const found: { c: Candidate; priority: number; attempts: number; rank: number }[] = [];
  state.order.forEach((id, rank) => {
    const task = own(state.tasks, id);
    if (task === undefined || Object.hasOwn(state.inFlight, id)) return;
    let kind: Candidate["kind"] | null = null;
    if (task.status === "pending" && readiness(state, id, aggregate).kind === "ready") kind = "new";
    else if (task.status === "failed" && !task.permanent && (task.retryAt ?? 0) <= state.now) kind = "retry";
    if (kind !== null)
      found.push({ c: { task: id, kind }, priority: priorityOf(state, id), attempts: task.attempts, rank });
  });
  found.sort((a, b) => b.priority - a.priority || a.attempts - b.attempts || a.rank - b.rank);
  return found.map((f) => f.c);
}

/** What starting a piece of work involves, for `blockOf`. */
export interface Start {
  /** The leaf was never tried (attempts == 0): fix-only and the unverified-lines cap hold it. */
  fresh: boolean;
  /** The leaf has no action in flight, so starting takes a WIP slot. */
  takesSlot: boolean;
  /** The start runs the agent (or may lead straight to it), which the iteration cap limits. */
  agent: boolean;
}

/**
 * Why a start may not happen now, or null: the run is paused, the iteration cap is reached, every WIP slot
 * is taken, or (for a fresh leaf) something is red or too much is unverified. A no-op check counts as an
 * agent start for the cap: past the cap no new leaf starts at all.
 */
export function blockOf(state: RunState, start: Start): string | null {
  if (state.paused !== null) return `paused: ${state.paused}`;
  if (start.agent && state.iterations >= state.settings.maxIterations)
    return `iteration cap reached: ${state.iterations} of ${state.settings.maxIterations}`;
  if (start.takesSlot) {
    const slot = slotBlock(state);
    if (slot !== null) return slot;
  }
  return start.fresh ? newWorkBlock(state) : null;
}
