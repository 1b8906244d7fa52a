/** Checks that a plan can run: ids unique, the hierarchy a forest, every dep and check known, no cycle. */
import { ReinsError } from "../../base/core/errors.js";
import { describeCycle, findCycle, own, planOrder } from "./graph.js";
import type { CheckDef, PlanNode } from "./types.js";

/** A plan that passed validation, indexed for the run state. */
export interface ValidPlan {
  nodes: Record<string, PlanNode>;
  /** Node ids in plan order (depth first). */
  order: string[];
  checks: Record<string, CheckDef>;
}

/** Where a node was declared, for messages: `plan.yaml:12: ` or nothing. */
const where = (node: PlanNode) => (node.at === undefined ? "" : `${node.at}: `);

/**
 * Validates a plan and indexes it. Throws ReinsError("invalid_plan") naming every problem found: a
 * duplicate id, a parent or child that does not match, an unknown dep or check, or a dependency cycle,
 * named as `a → b → a`.
 */
export function validatePlan(nodes: readonly PlanNode[], checks: readonly CheckDef[]): ValidPlan {
  const problems: string[] = [];
  const byId: Record<string, PlanNode> = {};
  for (const node of nodes) {
    // `__proto__` would set an object's prototype instead of a key of the plan's records.
    if (node.id === "" || node.id === "__proto__")
      problems.push(`${where(node)}"${node.id}" is not a node id`);
    else if (own(byId, node.id) !== undefined)
      problems.push(`${where(node)}node id ${node.id} is used twice`);
    else byId[node.id] = node;
  }
  const checksByName: Record<string, CheckDef> = {};
  for (const check of checks) {
    if (check.name === "" || check.name === "__proto__") problems.push(`"${check.name}" is not a check name`);
    else if (own(checksByName, check.name) !== undefined)
      problems.push(`check ${check.name} is defined twice`);
    else checksByName[check.name] = check;
  }
  for (const node of Object.values(byId)) {
    if (node.parent !== null) {
      const parent = own(byId, node.parent);
      if (parent === undefined)
        problems.push(`${where(node)}${node.id}'s parent ${node.parent} is not in the plan`);
      else if (!parent.children.includes(node.id))
        problems.push(`${where(node)}${node.id}'s parent ${node.parent} does not list it as a child`);
    }
    for (const child of node.children) {
      const c = own(byId, child);
      if (c === undefined) problems.push(`${where(node)}${node.id}'s child ${child} is not in the plan`);
      else if (c.parent !== node.id)
        problems.push(`${where(node)}${node.id} lists ${child} as a child, not its parent`);
    }
    if (new Set(node.children).size !== node.children.length)
      problems.push(`${where(node)}${node.id} lists a child twice`);
    for (const dep of node.deps)
      if (own(byId, dep) === undefined)
        problems.push(`${where(node)}${node.id} depends on unknown node ${dep}`);
    for (const name of node.checks)
      if (own(checksByName, name) === undefined)
        problems.push(`${where(node)}${node.id} names unknown check ${name}`);
  }
  const order = problems.length === 0 ? planOrder(nodes) : [];
  if (problems.length === 0 && order.length !== Object.keys(byId).length) {
    const lost = Object.keys(byId).filter((id) => !order.includes(id));
    problems.push(`the hierarchy loops: ${lost.join(", ")} cannot be reached from a top-level node`);
  }
  if (problems.length === 0) {
    const cycle = findCycle(byId, order);
    if (cycle !== null) problems.push(`dependency cycle: ${describeCycle(cycle)}`);
  }
  if (problems.length > 0) throw new ReinsError("invalid_plan", `invalid plan: ${problems.join("; ")}`);
  return { nodes: byId, order, checks: checksByName };
}
