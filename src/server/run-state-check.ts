/** A run state read from a store, checked before the control core walks it. */
import type { RunState } from "../run/control/types.js";

/** A JSON object. */
export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** The value at `key` if the record itself holds it: `toString` or `__proto__` as an id is data, not a method. */
export const own = (record: Json, key: string): unknown =>
  Object.hasOwn(record, key) ? record[key] : undefined;

const STATUSES: readonly string[] = ["pending", "in_progress", "verifying", "done", "failed", "canceled"];
/** Plans have four levels; deeper nesting is not a checkpoint reins wrote. */
const MAX_DEPTH = 16;

/**
 * Checks the parts of a checkpoint's state that the control core walks, without copying it (a copy would
 * turn a `__proto__` key into a prototype): the hierarchy is a forest listed parents first, so nothing the
 * core does on it can loop. Returns the node depths by id, or what is wrong.
 */
export function checkRunState(state: unknown): { state: RunState; depth: Map<string, number> } | string {
  if (!isObject(state)) return "it has no run state";
  const { order, nodes, tasks, inFlight } = state;
  if (!Array.isArray(order) || !order.every((id) => typeof id === "string"))
    return "its plan order is not a list of ids";
  if (!isObject(nodes) || !isObject(tasks) || !isObject(inFlight))
    return "its nodes, tasks or actions in flight are missing";
  const depth = new Map<string, number>();
  const listed = new Set<string>();
  let children = 0;
  for (const id of order) {
    if (depth.has(id)) return `node ${JSON.stringify(id)} is listed twice`;
    const node = own(nodes, id);
    if (!isObject(node)) return `node ${JSON.stringify(id)} is missing`;
    const { parent, deps } = node;
    if (!Array.isArray(node.children) || !node.children.every((c) => typeof c === "string"))
      return `node ${JSON.stringify(id)} has no list of children`;
    if (!Array.isArray(deps) || !deps.every((d) => typeof d === "string" && isObject(own(nodes, d))))
      return `node ${JSON.stringify(id)} depends on a node that is not in the plan`;
    const up = parent === null ? -1 : typeof parent === "string" ? depth.get(parent) : undefined;
    if (up === undefined) return `node ${JSON.stringify(id)} comes before its parent`;
    if (up + 1 > MAX_DEPTH) return `the plan nests deeper than ${MAX_DEPTH} levels`;
    depth.set(id, up + 1);
    children += node.children.length;
    for (const child of node.children) {
      const c = own(nodes, child);
      if (listed.has(child) || !isObject(c) || c.parent !== id)
        return `node ${JSON.stringify(id)} lists ${JSON.stringify(child)}, which is not its child`;
      listed.add(child);
    }
    if (node.children.length === 0) {
      const task = own(tasks, id);
      if (!isObject(task) || !STATUSES.includes(task.status as string) || typeof task.permanent !== "boolean")
        return `task ${JSON.stringify(id)} has no status`;
    }
  }
  for (const child of listed)
    if (!depth.has(child)) return `node ${JSON.stringify(child)} is not in the plan order`;
  // Every child is listed by its parent once, so every node but the top-level ones must be someone's child.
  if (children !== order.length - order.filter((id) => (own(nodes, id) as Json).parent === null).length)
    return "a node is not listed by its parent";
  return { state: state as unknown as RunState, depth };
}
