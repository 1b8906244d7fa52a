/** The status of every node, leaves as they are and parents summed up from their leaves. */
import type { RunState, TaskStatus } from "./types.js";

/** How many leaves under a node are in each status. */
export type StatusCounts = Record<TaskStatus, number>;

/** Counts of no leaves: 0 in every status. */
export const noCounts = (): StatusCounts => ({
  pending: 0,
  in_progress: 0,
  verifying: 0,
  done: 0,
  failed: 0,
  canceled: 0,
});

/**
 * The status of a parent from its leaves' counts. A failed leaf (even one awaiting a retry) makes it failed;
 * all done makes it done; canceled never counts as done, because a dependent must not run on work that was
 * never done: all over with some canceled makes it canceled; nothing started (pending, or canceled) keeps it
 * pending; anything else is in progress.
 */
export function statusOfCounts(counts: StatusCounts): TaskStatus {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  if (counts.failed > 0) return "failed";
  if (counts.done === total) return "done";
  if (counts.done + counts.canceled === total) return "canceled";
  if (counts.pending + counts.canceled === total) return "pending";
  return "in_progress";
}

/**
 * The status of every node by id, bottom-up: a leaf's own, a parent's from the counts of the leaves under
 * it (summed child by child, so each node is visited once).
 */
export function aggregates(state: Pick<RunState, "nodes" | "order" | "tasks">): Record<string, TaskStatus> {
  const counts = new Map<string, StatusCounts>();
  const out: Record<string, TaskStatus> = {};
  // Plan order lists a parent before its children, so the reverse sees every child first.
  for (let i = state.order.length - 1; i >= 0; i--) {
    const id = state.order[i]!;
    const node = state.nodes[id]!;
    const c = noCounts();
    if (node.children.length === 0) {
      const task = state.tasks[id];
      if (task !== undefined) c[task.status] += 1;
    } else {
      for (const child of node.children) {
        const cc = counts.get(child);
        if (cc !== undefined) for (const s of Object.keys(c) as TaskStatus[]) c[s] += cc[s];
      }
    }
    counts.set(id, c);
    out[id] = node.children.length === 0 ? (state.tasks[id]?.status ?? "pending") : statusOfCounts(c);
  }
  return out;
}
