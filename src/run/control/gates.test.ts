/** Tests of the verification gates: which checks a unit of work runs, and when. */
import { describe, expect, it } from "vitest";
import { planNode } from "#test/plans.js";
import {
  completedAncestors,
  completionGate,
  isRed,
  iterationGate,
  noopGate,
  skippedResult,
  spendSlow,
} from "./gates.js";
import { resolveSettings } from "./settings.js";
import { initialRunState } from "./step.js";
import type { CheckDef, CheckTier, RunState } from "./types.js";

const check = (name: string, tier: CheckTier): CheckDef => ({
  name,
  command: name,
  tier,
  format: "exit",
  timeoutMs: 1000,
});

/** Module m (names e2e) > component c (names api, perf) > leaves x (names smoke) and y; plus z outside. */
function plan(slowCheckRuns = 10): RunState {
  const nodes = [
    planNode("m", { kind: "module", checks: ["e2e"], children: ["c"] }),
    planNode("c", { kind: "component", parent: "m", checks: ["api", "perf"], children: ["x", "y"] }),
    planNode("x", { parent: "c", checks: ["smoke"] }),
    planNode("y", { parent: "c" }),
    planNode("z", { checks: ["lint"] }),
  ];
  const checks = [
    check("lint", "fast"),
    check("unit", "fast"),
    check("api", "medium"),
    check("db", "medium"),
    check("e2e", "slow"),
    check("perf", "slow"),
    check("smoke", "slow"),
  ];
  return initialRunState({
    kind: "run.started",
    at: 0,
    run: "r",
    nodes,
    checks,
    settings: resolveSettings({ slowCheckRuns }),
  });
}

describe("gates", () => {
  it("the no-op check runs every fast check, the medium ones the leaf and its ancestors name, and its own slow ones", () => {
    const s = plan();
    expect(noopGate(s, "x")).toEqual(["lint", "unit", "api", "smoke"]);
    expect(noopGate(s, "z")).toEqual(["lint", "unit"]);
  });

  it("the iteration gate runs the fast checks, and the medium ones too when a boundary was touched", () => {
    const s = plan();
    expect(iterationGate(s, "x", false)).toEqual(["lint", "unit"]);
    expect(iterationGate(s, "x", true)).toEqual(["lint", "unit", "api"]);
  });

  it("the completion gate runs the medium checks the iteration gate skipped and the leaf's own slow ones", () => {
    const s = plan();
    expect(completionGate(s, "x", false)).toEqual(["api", "smoke"]);
    expect(completionGate(s, "x", true)).toEqual(["smoke"]);
  });

  it("adds the slow checks of every ancestor the leaf's completion completes", () => {
    const s = plan();
    expect(completedAncestors(s, "x")).toEqual([]);
    s.tasks.y = { ...s.tasks.y!, status: "done" };
    expect(completedAncestors(s, "x")).toEqual(["c", "m"]);
    expect(completionGate(s, "x", true)).toEqual(["e2e", "perf", "smoke"]);
  });

  it("does not count a canceled sibling as done: the component will not be complete", () => {
    const s = plan();
    s.tasks.y = { ...s.tasks.y!, status: "canceled" };
    expect(completedAncestors(s, "x")).toEqual([]);
  });

  it("runs slow checks while the run's budget lasts and skips the rest", () => {
    const s = { ...plan(3), slowCheckRuns: 1 };
    expect(spendSlow(s, ["lint", "e2e", "api", "perf", "smoke"])).toEqual({
      run: ["lint", "e2e", "api", "perf"],
      skipped: ["smoke"],
      slow: 2,
    });
  });

  it("a skipped check is neither green nor red", () => {
    const skipped = skippedResult("e2e");
    expect(skipped).toMatchObject({
      passed: false,
      skipped: true,
      output: "skipped: slow-check budget spent",
    });
    expect(isRed(skipped)).toBe(false);
    expect(isRed({ ...skipped, skipped: false })).toBe(true);
  });
});
