import { describe, expect, it } from "vitest";
import { ReinsError } from "../core/errors.js";
import type { CheckDef, PlanNode } from "./types.js";
import { validatePlan } from "./validate-plan.js";

const node = (id: string, over: Partial<PlanNode> = {}): PlanNode => ({
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
});

const lint: CheckDef = {
  name: "lint",
  command: "npm run lint",
  tier: "fast",
  format: "exit",
  timeoutMs: 1000,
};

/** The message of the invalid_plan error `validatePlan` throws. */
function problem(nodes: PlanNode[], checks: CheckDef[] = [lint]): string {
  try {
    validatePlan(nodes, checks);
  } catch (error) {
    if (!ReinsError.is(error) || error.code !== "invalid_plan") throw error;
    return error.message;
  }
  throw new Error("the plan was accepted");
}

describe("plan validation", () => {
  it("indexes a valid plan: nodes and checks by id, plan order depth first", () => {
    const plan = validatePlan(
      [
        node("t", { children: ["s"] }),
        node("u", { deps: ["t"] }),
        node("s", { parent: "t", checks: ["lint"] }),
      ],
      [lint],
    );
    expect(plan.order).toEqual(["t", "s", "u"]);
    expect(Object.keys(plan.nodes)).toEqual(["t", "u", "s"]);
    expect(plan.checks.lint).toBe(lint);
  });

  it("names a duplicate id with where it was declared", () => {
    expect(problem([node("a"), node("a", { at: "plan.yaml:9" })])).toBe(
      "invalid plan: plan.yaml:9: node id a is used twice",
    );
  });

  it("names unknown deps and checks, every one of them", () => {
    expect(problem([node("a", { deps: ["b"], checks: ["e2e"] })])).toBe(
      "invalid plan: a depends on unknown node b; a names unknown check e2e",
    );
  });

  it("names a parent and child that do not agree", () => {
    expect(problem([node("t", { children: ["s"] }), node("s")])).toContain(
      "t lists s as a child, not its parent",
    );
    expect(problem([node("t"), node("s", { parent: "t" })])).toContain(
      "s's parent t does not list it as a child",
    );
    expect(problem([node("s", { parent: "p" })])).toContain("s's parent p is not in the plan");
  });

  it("names a hierarchy that loops on itself", () => {
    const list = [node("a", { parent: "b", children: ["b"] }), node("b", { parent: "a", children: ["a"] })];
    expect(problem(list)).toBe(
      "invalid plan: the hierarchy loops: a, b cannot be reached from a top-level node",
    );
  });

  it("names a dependency cycle as a → b → a", () => {
    expect(problem([node("a", { deps: ["b"] }), node("b", { deps: ["a"] })])).toBe(
      "invalid plan: dependency cycle: a → b → a",
    );
  });

  it("rejects ids and check names that would corrupt the run's records", () => {
    expect(problem([node("__proto__")])).toContain('"__proto__" is not a node id');
    expect(problem([node("a")], [lint, lint])).toContain("check lint is defined twice");
  });

  it("accepts a dep on an id like toString only when the plan has it", () => {
    expect(problem([node("a", { deps: ["toString"] })])).toContain("a depends on unknown node toString");
  });
});
