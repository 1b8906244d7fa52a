/** Tests of the spec-driven workflow's definition and its Mermaid chart. */
import { describe, expect, it } from "vitest";
import { checkDefinition, stepsText, toMermaid, WORKFLOW, type WorkflowDefinition } from "./definition.js";

describe("the workflow definition", () => {
  it("has three phases and seven steps, numbered in order, with the gate between requirements and planning", () => {
    expect(WORKFLOW.phases.map((p) => p.id)).toEqual(["requirements", "planning", "building"]);
    expect(WORKFLOW.steps.map((s) => [s.n, s.phase, s.title])).toEqual([
      [1, "requirements", "Draft the specification"],
      [2, "planning", "Determine dependencies"],
      [3, "planning", "Identify components"],
      [4, "planning", "Select the next component"],
      [5, "planning", "Break it into tasks"],
      [6, "building", "Iterate through the tasks"],
      [7, "building", "Repeat for the next component"],
    ]);
    const gated = WORKFLOW.transitions.filter((t) => t.gate !== undefined);
    expect(gated).toEqual([
      { from: "draft-spec", to: "determine-dependencies", when: "spec approved", gate: "spec-approval" },
    ]);
  });

  it("holds together: every step reachable, the loop from step 7 back to step 4, and an end", () => {
    expect(checkDefinition(WORKFLOW)).toEqual([]);
    expect(WORKFLOW.transitions).toContainEqual(
      expect.objectContaining({ from: "repeat-component", to: "select-component" }),
    );
  });

  it("names what is wrong with a broken definition", () => {
    const broken: WorkflowDefinition = {
      ...WORKFLOW,
      transitions: [
        ...WORKFLOW.transitions.filter((t) => t.to !== "done" && t.from !== "break-into-tasks"),
        { from: "draft-spec", to: "determine-dependencies", when: "x", gate: "nobody" },
      ],
    };
    expect(checkDefinition(broken)).toEqual([
      "transition through unknown gate nobody",
      "step iterate-tasks cannot be reached",
      "step repeat-component cannot be reached",
      "the workflow never ends",
    ]);
  });

  it("exports a Mermaid flowchart: a subgraph per phase, the gate as a hexagon, an edge per transition", () => {
    const chart = toMermaid(WORKFLOW);
    expect(chart.startsWith("flowchart TD\n")).toBe(true);
    expect(chart).toContain(
      '  subgraph requirements["Requirements"]\n    draft_spec["1. Draft the specification"]\n  end',
    );
    expect(chart).toContain(
      'gate_spec_approval{{"gate: a person approves the spec<br/>reins approve #lt;spec#gt; --reason #quot;...#quot;"}}',
    );
    expect(chart).toContain("  draft_spec --> gate_spec_approval\n");
    expect(chart).toContain('  gate_spec_approval -->|"spec approved"| determine_dependencies\n');
    expect(chart).toContain('  repeat_component -->|"every task done"| done\n');
    const edges = chart.split("\n").filter((l) => l.includes("-->"));
    expect(edges).toHaveLength(WORKFLOW.transitions.length + 1);
  });

  it("lists the steps under their phases with the gate after step 1", () => {
    const text = stepsText(WORKFLOW).split("\n");
    expect(text[0]).toBe("Requirements");
    expect(text[1]).toMatch(/^ {2}1\. Draft the specification: /);
    expect(text[2]).toBe('  -- human gate: a person approves the spec (reins approve <spec> --reason "...")');
    expect(text[3]).toBe("Planning");
  });
});
