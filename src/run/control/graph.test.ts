/** Tests of the plan as a graph: its hierarchy, dependency cycles and readiness. */
import { describe, expect, it } from "vitest";
import { linked, planNode } from "#test/plans.js";
import { aggregates } from "./aggregate.js";
import {
  ancestorsOf,
  describeCycle,
  effectiveDeps,
  findCycle,
  leavesUnder,
  planOrder,
  readiness,
} from "./graph.js";
import { initialTask } from "./task-state.js";
import type { PlanNode, RunState, TaskStatus } from "./types.js";

/** Indexes nodes, filling in `children` from each node's `parent`. */
function index(list: PlanNode[]) {
  linked(list);
  return { nodes: Object.fromEntries(list.map((n) => [n.id, n])), order: planOrder(list) };
}

const cycleOf = (list: PlanNode[]) => {
  const { nodes, order } = index(list);
  const cycle = findCycle(nodes, order);
  return cycle === null ? null : describeCycle(cycle);
};

describe("the plan's hierarchy", () => {
  const { nodes, order } = index([
    planNode("m", { kind: "module", deps: ["x"] }),
    planNode("c", { kind: "component", parent: "m", deps: ["y"] }),
    planNode("t", { parent: "c", deps: ["z", "y"] }),
    planNode("u", { parent: "c" }),
    planNode("x"),
    planNode("y"),
    planNode("z"),
  ]);

  it("lists nodes depth first from the roots, in the order the plan gives them", () => {
    expect(order).toEqual(["m", "c", "t", "u", "x", "y", "z"]);
  });

  it("finds ancestors nearest first and the leaves under a node in plan order", () => {
    expect(ancestorsOf(nodes, "t")).toEqual(["c", "m"]);
    expect(leavesUnder(nodes, "m")).toEqual(["t", "u"]);
    expect(leavesUnder(nodes, "x")).toEqual(["x"]);
    expect(leavesUnder(nodes, "nope")).toEqual([]);
  });

  it("a leaf waits for its own deps and its ancestors', each once", () => {
    expect(effectiveDeps(nodes, "t")).toEqual(["z", "y", "x"]);
    expect(effectiveDeps(nodes, "u")).toEqual(["y", "x"]);
  });

  it("does not take an inherited property name for a node", () => {
    expect(ancestorsOf(nodes, "toString")).toEqual([]);
    expect(leavesUnder(nodes, "constructor")).toEqual([]);
  });
});

describe("dependency cycles", () => {
  it("names a direct cycle from the node first in plan order: a → b → a", () => {
    expect(cycleOf([planNode("a", { deps: ["b"] }), planNode("b", { deps: ["a"] })])).toBe("a → b → a");
  });

  it("names a longer cycle with every step", () => {
    const list = [
      planNode("a", { deps: ["c"] }),
      planNode("b", { deps: ["a"] }),
      planNode("c", { deps: ["b"] }),
      planNode("d"),
    ];
    expect(cycleOf(list)).toBe("a → c → b → a");
  });

  it("names a node that depends on itself", () => {
    expect(cycleOf([planNode("a", { deps: ["a"] })])).toBe("a → a");
  });

  it("finds a task depending on its own subtask, and a subtask on its parent", () => {
    expect(cycleOf([planNode("t", { deps: ["s"] }), planNode("s", { parent: "t", kind: "subtask" })])).toBe(
      "t → s → t",
    );
    expect(cycleOf([planNode("t"), planNode("s", { parent: "t", kind: "subtask", deps: ["t"] })])).toBe(
      "t → s → t",
    );
  });

  it("finds a cycle through the hierarchy: a leaf needs a component that contains a leaf that needs it", () => {
    const list = [
      planNode("c", { kind: "component" }),
      planNode("x", { parent: "c", deps: ["y"] }),
      planNode("y", { deps: ["c"] }),
    ];
    expect(cycleOf(list)).toBe("c → x → y → c");
  });

  it("accepts a plan whose deps form a DAG, diamonds included", () => {
    const list = [
      planNode("a"),
      planNode("b", { deps: ["a"] }),
      planNode("c", { deps: ["a"] }),
      planNode("d", { deps: ["b", "c"] }),
    ];
    expect(cycleOf(list)).toBeNull();
  });
});

describe("readiness", () => {
  const { nodes, order } = index([
    planNode("c", { kind: "component" }),
    planNode("x", { parent: "c" }),
    planNode("y", { parent: "c" }),
    planNode("t", { deps: ["c"] }),
  ]);
  const at = (x: TaskStatus, y: TaskStatus, permanent = false) => {
    const s: Pick<RunState, "nodes" | "order" | "tasks"> = {
      nodes,
      order,
      tasks: {
        x: { ...initialTask(), status: x, permanent },
        y: { ...initialTask(), status: y },
        t: initialTask(),
      },
    };
    return readiness(s, "t", aggregates(s));
  };

  it("a leaf waiting on a component is ready once every leaf of it is done", () => {
    expect(at("done", "verifying")).toEqual({ kind: "waiting", on: ["c"] });
    expect(at("done", "done")).toEqual({ kind: "ready" });
  });

  it("a dep with a leaf failed for good or canceled can never be met; a retryable failure can", () => {
    expect(at("failed", "done", true)).toEqual({ kind: "doomed", dep: "c", why: "failed" });
    expect(at("canceled", "done")).toEqual({ kind: "doomed", dep: "c", why: "canceled" });
    expect(at("failed", "done", false)).toEqual({ kind: "waiting", on: ["c"] });
  });
});
