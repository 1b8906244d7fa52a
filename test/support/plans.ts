import { expect } from "vitest";
import type { PlanNode } from "../../src/run/control/types.js";
import { ReinsError } from "../../src/base/core/errors.js";

/** Plans for the unit tests of the control core and the plan readers. */

/** A task node named `id`, titled `id`, with no deps, checks, acceptance or place in a hierarchy but `over`. */
export function planNode(id: string, over: Partial<PlanNode> = {}): PlanNode {
  return {
    id,
    kind: "task",
    title: id,
    deps: [],
    priority: 0,
    acceptance: [],
    checks: [],
    parent: null,
    children: [],
    ...over,
  };
}

/** Fills in each node's `children` from the other nodes' `parent`, in list order; returns `nodes`. */
export function linked(nodes: PlanNode[]): PlanNode[] {
  for (const n of nodes) if (n.parent !== null) nodes.find((p) => p.id === n.parent)!.children.push(n.id);
  return nodes;
}

/** The message of the `invalid_plan` error `read` throws, one line; anything else fails the test. */
export function invalidPlan(read: () => unknown): string {
  try {
    read();
  } catch (error) {
    expect(ReinsError.is(error)).toBe(true);
    expect((error as ReinsError).code).toBe("invalid_plan");
    const message = (error as ReinsError).message;
    expect(message).not.toContain("\n");
    return message;
  }
  throw new Error("the plan was accepted");
}
