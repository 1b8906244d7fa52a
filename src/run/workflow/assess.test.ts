/** Tests of assessing where a spec-driven project stands. */
import { describe, expect, it } from "vitest";
import { planNode } from "#test/plans.js";
import type { PlanNode } from "../control/types.js";
import { assess, planSpecProblems, type ApprovalFact, type WorkflowFacts } from "./assess.js";

const node = planNode;

/** Two components: c1 with tasks a and b, c2 with task c. */
const NODES: PlanNode[] = [
  node("c1", { kind: "component", children: ["a", "b"] }),
  node("a", { parent: "c1" }),
  node("b", { parent: "c1" }),
  node("c2", { kind: "component", children: ["c"] }),
  node("c", { parent: "c2" }),
];

const HASH = "1".repeat(64);
const OLD = "0".repeat(64);
const approval = (hash: string, at = 1): ApprovalFact => ({ hash, by: "alice", reason: "ok", at });

function facts(over: Partial<WorkflowFacts> = {}): WorkflowFacts {
  return {
    spec: { path: "spec.md", exists: true, hash: HASH, sections: ["S"] },
    approvals: [approval(HASH)],
    plan: { path: "reins.plan.yaml", exists: true, valid: true, nodes: NODES },
    done: [],
    ...over,
  };
}

describe("assess", () => {
  it("is at step 1 when the spec does not exist, whatever else is there", () => {
    const a = assess(facts({ spec: { path: "spec.md", exists: false } }));
    expect([a.phase, a.step, a.missing]).toEqual([
      "requirements",
      "draft-spec",
      ["the spec spec.md does not exist"],
    ]);
  });

  it("waits at the gate while no approval names the spec's current content", () => {
    expect(assess(facts({ approvals: [] })).missing).toEqual(["an approval of spec.md as it is now"]);
    const old = assess(facts({ approvals: [approval(OLD)] }));
    expect([old.phase, old.step, old.approval]).toEqual(["requirements", "draft-spec", null]);
    expect(old.missing[0]).toContain("an approval of an earlier content does not count");
  });

  it("counts the newest approval of the current content, even after approvals of other content", () => {
    const a = assess(
      facts({ approvals: [approval(HASH, 1), approval(OLD, 2), { ...approval(HASH, 3), by: "bob" }] }),
    );
    expect(a.approval?.by).toBe("bob");
    expect(a.phase).toBe("building");
  });

  it("plans when approved and there is no valid plan", () => {
    const none = assess(facts({ plan: { path: "reins.plan.yaml", exists: false } }));
    expect([none.phase, none.step, none.missing]).toEqual([
      "planning",
      "determine-dependencies",
      ["a plan at reins.plan.yaml"],
    ]);
    const bad = assess(
      facts({ plan: { path: "p", exists: true, valid: false, error: "p:3: tasks: required" } }),
    );
    expect(bad.missing).toEqual(["a valid plan: p:3: tasks: required"]);
  });

  it("builds the first component with work left, moves on at step 7, and is done when every task is", () => {
    const fresh = assess(facts());
    expect([fresh.phase, fresh.step, fresh.component]).toEqual(["building", "iterate-tasks", "c1"]);
    expect(fresh.components).toEqual([
      { id: "c1", title: "c1", tasks: ["a", "b"], done: [] },
      { id: "c2", title: "c2", tasks: ["c"], done: [] },
    ]);
    expect(assess(facts({ done: ["a"] })).step).toBe("iterate-tasks");
    const next = assess(facts({ done: ["a", "b"] }));
    expect([next.step, next.component]).toEqual(["repeat-component", "c2"]);
    const done = assess(facts({ done: ["a", "b", "c"] }));
    expect([done.phase, done.step, done.missing]).toEqual(["building", "done", []]);
  });

  it("never trusts anything but the facts: the same facts give the same assessment", () => {
    const f = facts({ done: ["a"] });
    expect(assess(f)).toEqual(assess(structuredClone(f)));
  });
});

describe("planSpecProblems", () => {
  const check = (nodes: PlanNode[]) =>
    planSpecProblems(
      nodes,
      "spec.md",
      ["Greeting", "Farewell"],
      (file) => file === "spec.md",
      (name) => ["Greeting", "Farewell"].includes(name),
    );

  it("wants every task to name existing sections of the spec, its own or through a parent", () => {
    expect(
      check([
        node("c", { kind: "component", children: ["a"], spec: { file: "spec.md", sections: ["Greeting"] } }),
        node("a", { parent: "c" }),
        node("b", { spec: { file: "spec.md", sections: ["Farewell"] } }),
      ]),
    ).toEqual([]);
    expect(
      check([
        node("a"),
        node("b", { spec: { file: "other.md", sections: ["Greeting"] } }),
        node("c", { spec: { file: "spec.md", sections: ["Nope"] } }),
      ]),
    ).toEqual([
      "task a names no section of spec.md in spec:",
      "task b names other.md, not spec.md",
      'task c names the section "Nope", which spec.md does not have (it has: Greeting, Farewell)',
    ]);
  });
});
