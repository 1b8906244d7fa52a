/** The plan as a graph: the hierarchy, what each unit of work waits for, and the cycles that forbid a plan. */
import type { PlanNode, RunState, TaskStatus } from "./types.js";

/** A plan's nodes by id. */
export type Nodes = Readonly<Record<string, PlanNode>>;

/** The value at `key` if the record itself holds it: ids come from users, and `toString` is no node. */
export function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** Whether a node is a unit of work: a task without subtasks, or a subtask. */
export function isLeaf(node: PlanNode): boolean {
  return node.children.length === 0;
}

/** The ancestors of a node, nearest first. */
export function ancestorsOf(nodes: Nodes, id: string): string[] {
  const out: string[] = [];
  for (let at = own(nodes, id)?.parent ?? null; at !== null; at = own(nodes, at)?.parent ?? null)
    out.push(at);
  return out;
}

/** The leaves under a node in plan order; a leaf is its own only leaf. */
export function leavesUnder(nodes: Nodes, id: string): string[] {
  const node = own(nodes, id);
  if (node === undefined) return [];
  if (isLeaf(node)) return [id];
  return node.children.flatMap((child) => leavesUnder(nodes, child));
}

/** What a leaf waits for: its own deps and its ancestors', each once, nearest first. */
export function effectiveDeps(nodes: Nodes, leaf: string): string[] {
  const out = new Set<string>();
  for (const id of [leaf, ...ancestorsOf(nodes, leaf)])
    for (const dep of own(nodes, id)?.deps ?? []) out.add(dep);
  return [...out];
}

/** The plan order (depth first from the roots, in the order given) of `nodes`, listed as the plan lists them. */
export function planOrder(nodes: readonly PlanNode[]): string[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const order: string[] = [];
  const seen = new Set<string>();
  const visit = (id: string): void => {
    const node = byId.get(id);
    if (node === undefined || seen.has(id)) return;
    seen.add(id);
    order.push(id);
    for (const child of node.children) visit(child);
  };
  for (const node of nodes) if (node.parent === null) visit(node.id);
  return order;
}

/**
 * A dependency cycle of the plan, as node ids (`[a, b]` for `a → b → a`), or null. A node's start waits for
 * its deps being done and for its parent's start (a parent's deps hold for its descendants); a parent is
 * done when its children are; a leaf is done after it starts. A cycle in that graph means some unit of work
 * can never start, whether written directly (`a` needs `b`, `b` needs `a`) or through the hierarchy (a task
 * needing its own subtask).
 */
export function findCycle(nodes: Nodes, order: readonly string[]): string[] | null {
  const edges = (vertex: string): string[] => {
    const id = vertex.slice(2);
    const node = own(nodes, id);
    if (node === undefined) return [];
    if (vertex.startsWith("S")) {
      const out = node.deps.filter((dep) => own(nodes, dep) !== undefined).map((dep) => `D:${dep}`);
      if (node.parent !== null) out.push(`S:${node.parent}`);
      return out;
    }
    return isLeaf(node) ? [`S:${id}`] : node.children.map((child) => `D:${child}`);
  };
  const state = new Map<string, "open" | "closed">();
  for (const root of order.flatMap((id) => [`S:${id}`, `D:${id}`])) {
    if (state.has(root)) continue;
    // Iterative depth-first search: the path is the stack, so a back edge names the cycle directly.
    const path: string[] = [root];
    const next: number[] = [0];
    state.set(root, "open");
    while (path.length > 0) {
      const top = path.length - 1;
      const vertex = path[top]!;
      const out = edges(vertex);
      const i = next[top]!;
      if (i >= out.length) {
        state.set(vertex, "closed");
        path.pop();
        next.pop();
        continue;
      }
      next[top] = i + 1;
      const to = out[i]!;
      const seen = state.get(to);
      if (seen === "open") return nameCycle(path.slice(path.indexOf(to)), order);
      if (seen === undefined) {
        state.set(to, "open");
        path.push(to);
        next.push(0);
      }
    }
  }
  return null;
}

/** Turns a cycle of start/done vertices into node ids, each step once, from the node first in plan order. */
function nameCycle(vertices: readonly string[], order: readonly string[]): string[] {
  const ids: string[] = [];
  for (const vertex of vertices) {
    const id = vertex.slice(2);
    if (ids[ids.length - 1] !== id) ids.push(id);
  }
  if (ids.length > 1 && ids[0] === ids[ids.length - 1]) ids.pop();
  const rank = (id: string) => order.indexOf(id);
  let start = 0;
  for (let i = 1; i < ids.length; i++) if (rank(ids[i]!) < rank(ids[start]!)) start = i;
  return [...ids.slice(start), ...ids.slice(0, start)];
}

/** A cycle as people read it: `a → b → a`. */
export function describeCycle(cycle: readonly string[]): string {
  return [...cycle, cycle[0] ?? ""].join(" → ");
}

/** Where a pending leaf stands: it may start, it waits on deps, or a dep can never be done. */
export type Readiness =
  | { kind: "ready" }
  | { kind: "waiting"; on: string[] }
  | { kind: "doomed"; dep: string; why: "failed" | "canceled" };

/**
 * Whether a leaf's deps hold. A dep is met when its aggregate is done; it can never be met once a leaf
 * under it failed for good or was canceled (canceled work is not done work, so it satisfies nobody).
 */
export function readiness(
  state: Pick<RunState, "nodes" | "tasks">,
  leaf: string,
  aggregate: Readonly<Record<string, TaskStatus>>,
): Readiness {
  const on: string[] = [];
  for (const dep of effectiveDeps(state.nodes, leaf)) {
    if (aggregate[dep] === "done") continue;
    for (const under of leavesUnder(state.nodes, dep)) {
      const task = own(state.tasks, under);
      if (task?.status === "canceled") return { kind: "doomed", dep, why: "canceled" };
      if (task?.status === "failed" && task.permanent) return { kind: "doomed", dep, why: "failed" };
    }
    on.push(dep);
  }
  return on.length === 0 ? { kind: "ready" } : { kind: "waiting", on };
}
