/**
 * Spec drift in a run: the hashes of the sections the plan names are recorded at start and looked at
 * again on resume and before each iteration, always through the recorder, so a replay sees what the run
 * saw and never reads the disk.
 */
import { leavesUnder } from "../control/graph.js";
import type { PlanNode, RunEvent, RunState } from "../control/types.js";
import { readSectionHashes } from "../spec/read.js";
import { specChange, specFiles, type SectionHashes } from "../spec/section-hashes.js";
import type { Recorder } from "./recorder.js";

/** The plan's nodes in plan order. */
function planNodes(state: Pick<RunState, "nodes" | "order">): PlanNode[] {
  return state.order.flatMap((id) => (Object.hasOwn(state.nodes, id) ? [state.nodes[id]!] : []));
}

/** Whether any node of the plan names a spec section: a plan that names none never reads a spec. */
export function namesSpec(nodes: Iterable<PlanNode>): boolean {
  return specFiles(nodes).length > 0;
}

/**
 * The hashes of every section the plan names (and of their subsections), read now as the interaction
 * `spec.hashes` of action `key`; null, with nothing read or recorded, when the plan names no section.
 */
export async function specHashes(
  recorder: Recorder,
  key: string,
  root: string,
  nodes: readonly PlanNode[],
): Promise<SectionHashes | null> {
  if (!namesSpec(nodes)) return null;
  return recorder.io(key, "spec.hashes", () => readSectionHashes(root, nodes));
}

/** Reads the spec's hashes for a run under way: `specHashes` over the run's plan. */
export function runSpecHashes(
  recorder: Recorder,
  key: string,
  root: string,
  state: Pick<RunState, "nodes" | "order">,
): Promise<SectionHashes | null> {
  return specHashes(recorder, key, root, planNodes(state));
}

/**
 * What changed from `before` to `after`, as the core's event without its time: the changed sections, and
 * the units of work that implement them (the leaves under every node naming one), in plan order. Null
 * when nothing changed, or when there was nothing recorded to compare with.
 */
export function driftOf(
  before: SectionHashes | null,
  after: SectionHashes,
  state: Pick<RunState, "nodes" | "order" | "tasks">,
): Omit<Extract<RunEvent, { kind: "spec.changed" }>, "at"> | null {
  if (before === null) return null;
  const change = specChange(before, after);
  if (change === null) return null;
  const leaves = new Set(change.nodes.flatMap((id) => leavesUnder(state.nodes, id)));
  const tasks = state.order.filter((id) => leaves.has(id) && Object.hasOwn(state.tasks, id));
  return { kind: "spec.changed", sections: change.sections, tasks };
}
