/** Tests of the plan as the MCP tools see it: nodes and the checks each scope requires. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { noopGate } from "../control/gates.js";
import { isLeaf } from "../control/graph.js";
import { nodeOf, planView, scopeChecks } from "./plan-view.js";

const dir = mkdtempSync(join(tmpdir(), "reins-plan-view-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = join(dir, "reins.plan.yaml");
writeFileSync(
  file,
  `version: 1
name: shop
checks:
  lint: { command: lint, tier: fast }
  unit: { command: unit, tier: fast }
  api: { command: api, tier: medium }
  db: { command: db, tier: medium }
  e2e: { command: e2e, tier: slow }
  smoke: { command: smoke, tier: slow }
modules:
  - id: m
    title: M
    checks: [e2e]
    components:
      - id: c
        title: C
        checks: [api, smoke]
        tasks:
          - { id: t1, title: T1, checks: [db] }
          - id: t2
            title: T2
            subtasks:
              - { id: s1, title: S1, checks: [e2e] }
              - { id: s2, title: S2 }
`,
);
const view = planView(file);
const names = (id: string) => scopeChecks(view, id).map((c) => c.name);

describe("scopeChecks", () => {
  it("holds a leaf to the gate reins run holds it to before its commit", () => {
    const plan = { nodes: view.nodes, checks: view.checks, tasks: {} };
    for (const node of Object.values(view.nodes).filter(isLeaf))
      expect(names(node.id), node.id).toEqual(noopGate(plan, node.id));
    expect(names("t1")).toEqual(["lint", "unit", "api", "db"]);
  });

  it("holds a component or module to its leaves' checks and its own slow ones, not its ancestors' slow ones", () => {
    expect(names("c")).toEqual(["lint", "unit", "api", "db", "e2e", "smoke"]);
    expect(names("t2")).toEqual(["lint", "unit", "api", "e2e"]);
    expect(names("m")).toEqual(["lint", "unit", "api", "db", "e2e", "smoke"]);
  });
});

describe("nodeOf", () => {
  it("finds nodes by their own id only, and names the verify tool of a node's level", () => {
    expect(() => nodeOf(view, "__proto__")).toThrow(
      'no task "__proto__" in plan shop; known: m, c, t1, t2, s1, s2',
    );
    expect(() => nodeOf(view, "toString", "task")).toThrow(
      'no task "toString" in plan shop; known: t1, t2, s1, s2',
    );
    expect(() => nodeOf(view, "c", "task")).toThrow(
      "c is a component: verify it with verify_component_completion",
    );
    expect(nodeOf(view, "s1", "task").kind).toBe("subtask");
  });
});
