/** Tests of work in progress and its limits. */
import { describe, expect, it } from "vitest";
import { resolveSettings } from "./settings.js";
import { initialTask } from "./task-state.js";
import type { RunState, TaskRun } from "./types.js";
import { leavesInFlight, newWorkBlock, redLeaves, slotBlock, unverifiedLines } from "./wip.js";

const task = (over: Partial<TaskRun>): TaskRun => ({ ...initialTask(), ...over });

const state = (tasks: Record<string, TaskRun>, inFlight: RunState["inFlight"] = {}, wip = 2) => ({
  tasks,
  inFlight,
  settings: resolveSettings({ wip, maxUnverifiedLines: 100 }),
});

describe("work in progress", () => {
  it("counts leaves with work in flight; a rollback and run-wide actions hold no slot", () => {
    const s = state({}, { a: "run_agent", b: "rollback", c: "commit", "": "wait" });
    expect(leavesInFlight(s)).toEqual(["a", "c"]);
    expect(slotBlock(s)).toBe("wip limit reached: 2 of 2 in flight");
    expect(slotBlock(state({}, { a: "run_agent" }))).toBeNull();
  });

  it("sums unverified lines over open leaves only", () => {
    const s = state({
      a: task({ status: "in_progress", unverifiedLines: 40 }),
      b: task({ status: "failed", permanent: false, unverifiedLines: 30 }),
      c: task({ status: "failed", permanent: true, unverifiedLines: 500 }),
    });
    expect(unverifiedLines(s)).toBe(70);
    expect(newWorkBlock(s)).toBeNull();
    s.tasks.a!.unverifiedLines = 70;
    expect(newWorkBlock(s)).toBe("unverified lines: 100 of 100");
  });

  it("a red open leaf makes the run fix-only; a red leaf that is over does not", () => {
    const s = state({
      a: task({ status: "verifying", fixOnly: true }),
      b: task({ status: "failed", permanent: true, fixOnly: true }),
    });
    expect(redLeaves(s)).toEqual(["a"]);
    expect(newWorkBlock(s)).toBe("fix-only: a red");
  });
});
