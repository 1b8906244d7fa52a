/** Tests of plan validation: ids, hierarchy, deps, checks and cycles. */
import { describe, expect, it } from "vitest";
import { invalidPlan, planNode } from "#test/plans.js";
import type { CheckDef, PlanNode } from "./types.js";
import { validatePlan } from "./validate-plan.js";

const lint: CheckDef = {
  name: "lint",
  command: "npm run lint",
  tier: "fast",
  format: "exit",
  timeoutMs: 1000,
};

/** The message of the invalid_plan error `validatePlan` throws. */
const problem = (nodes: PlanNode[], checks: CheckDef[] = [lint]) =>
  invalidPlan(() => validatePlan(nodes, checks));

describe("plan validation", () => {
  it("indexes a valid plan: nodes and checks by id, plan order depth first", () => {
    const plan = validatePlan(
      [
        planNode("t", { children: ["s"] }),
        planNode("u", { deps: ["t"] }),
        planNode("s", { parent: "t", checks: ["lint"] }),
      ],
      [lint],
    );
    expect(plan.order).toEqual(["t", "s", "u"]);
    expect(Object.keys(plan.nodes)).toEqual(["t", "u", "s"]);
    expect(plan.checks.lint).toBe(lint);
  });

  it("names a duplicate id with where it was declared", () => {
    expect(problem([planNode("a"), planNode("a", { at: "plan.yaml:9" })])).toBe(
      "invalid plan: plan.yaml:9: node id a is used twice",
    );
  });

  it("names unknown deps and checks, every one of them", () => {
    expect(problem([planNode("a", { deps: ["b"], checks: ["e2e"] })])).toBe(
      "invalid plan: a depends on unknown node b; a names unknown check e2e",
    );
  });

  it("names a parent and child that do not agree", () => {
    expect(problem([planNode("t", { children: ["s"] }), planNode("s")])).toContain(
      "t lists s as a child, not its parent",
    );
    expect(problem([planNode("t"), planNode("s", { parent: "t" })])).toContain(
      "s's parent t does not list it as a child",
    );
    expect(problem([planNode("s", { parent: "p" })])).toContain("s's parent p is not in the plan");
  });

  it("names a hierarchy that loops on itself", () => {
    const list = [
      planNode("a", { parent: "b", children: ["b"] }),
      planNode("b", { parent: "a", children: ["a"] }),
    ];
    expect(problem(list)).toBe(
      "invalid plan: the hierarchy loops: a, b cannot be reached from a top-level node",
    );
  });

  it("names a dependency cycle as a → b → a", () => {
    expect(problem([planNode("a", { deps: ["b"] }), planNode("b", { deps: ["a"] })])).toBe(
      "invalid plan: dependency cycle: a → b → a",
    );
  });

  it("rejects ids and check names that would corrupt the run's records", () => {
    expect(problem([planNode("__proto__")])).toContain('"__proto__" is not a node id');
    expect(problem([planNode("a")], [lint, lint])).toContain("check lint is defined twice");
  });

  it("accepts a dep on an id like toString only when the plan has it", () => {
    expect(problem([planNode("a", { deps: ["toString"] })])).toContain("a depends on unknown node toString");
  });
});
