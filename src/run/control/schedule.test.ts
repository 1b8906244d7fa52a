/** Tests of scheduling: which units of work start, in what order, and what holds one back. */
import { describe, expect, it } from "vitest";
import { linked, planNode } from "#test/plans.js";
import { aggregates } from "./aggregate.js";
import { blockOf, candidates, priorityOf } from "./schedule.js";
import { resolveSettings, type RunSettingsInput } from "./settings.js";
import { initialRunState } from "./step.js";
import type { PlanNode, RunState, TaskRun } from "./types.js";

function runOf(nodes: PlanNode[], settings: RunSettingsInput = {}): RunState {
  return initialRunState({
    kind: "run.started",
    at: 0,
    run: "r",
    nodes: linked(nodes),
    checks: [],
    settings: resolveSettings(settings),
  });
}

const patch = (s: RunState, id: string, over: Partial<TaskRun>) => {
  s.tasks[id] = { ...s.tasks[id]!, ...over };
};

const order = (s: RunState) => candidates(s, aggregates(s)).map((c) => `${c.kind}:${c.task}`);

describe("schedule order", () => {
  it("starts higher priority first, then plan order", () => {
    const s = runOf([
      planNode("a"),
      planNode("b", { priority: 2 }),
      planNode("c"),
      planNode("d", { priority: 2 }),
    ]);
    expect(order(s)).toEqual(["new:b", "new:d", "new:a", "new:c"]);
  });

  it("among equal priorities, a task tried fewer times goes first, so a flaky task does not starve others", () => {
    const s = runOf([planNode("a"), planNode("b")]);
    patch(s, "a", {
      status: "failed",
      attempts: 2,
      retryAt: 0,
      failures: { checks: 0, agent: 2, transient: 0, conflict: 0 },
    });
    expect(order(s)).toEqual(["new:b", "retry:a"]);
  });

  it("a subtask takes its parent's priority when that is higher", () => {
    const s = runOf([
      planNode("t", { priority: 5 }),
      planNode("s", { parent: "t" }),
      planNode("u", { priority: 3 }),
    ]);
    expect(priorityOf(s, "s")).toBe(5);
    expect(order(s)).toEqual(["new:s", "new:u"]);
  });

  it("offers a retry only once it is due, and never a task with work in flight or waiting on deps", () => {
    const s = runOf([planNode("a"), planNode("b"), planNode("c", { deps: ["a"] })]);
    patch(s, "a", { status: "failed", attempts: 1, retryAt: 5000 });
    s.inFlight.b = "run_agent";
    expect(order(s)).toEqual([]);
    expect(order({ ...s, now: 5000 })).toEqual(["retry:a"]);
  });
});

describe("what holds a start back", () => {
  const fresh = { fresh: true, takesSlot: true, agent: true };

  it("a pause holds everything, with its reason", () => {
    const s = { ...runOf([planNode("a")]), paused: "budget spent" };
    expect(blockOf(s, { fresh: false, takesSlot: false, agent: false })).toBe("paused: budget spent");
  });

  it("the iteration cap holds every agent start and every new leaf", () => {
    const s = { ...runOf([planNode("a")], { maxIterations: 2 }), iterations: 2 };
    expect(blockOf(s, fresh)).toBe("iteration cap reached: 2 of 2");
    expect(blockOf(s, { fresh: false, takesSlot: false, agent: false })).toBeNull();
  });

  it("a full WIP holds a start that needs a slot, not work continuing in its own slot", () => {
    const s = runOf([planNode("a"), planNode("b")]);
    s.inFlight.a = "run_checks";
    expect(blockOf(s, fresh)).toBe("wip limit reached: 1 of 1 in flight");
    expect(blockOf(s, { fresh: false, takesSlot: false, agent: true })).toBeNull();
  });

  it("a red leaf holds new leaves but not retries of started ones", () => {
    const s = runOf([planNode("a"), planNode("b")], { wip: 3 });
    patch(s, "a", { status: "verifying", fixOnly: true, attempts: 1 });
    expect(blockOf(s, fresh)).toBe("fix-only: a red");
    expect(blockOf(s, { fresh: false, takesSlot: true, agent: true })).toBeNull();
  });
});
