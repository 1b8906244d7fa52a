import { describe, expect, it } from "vitest";
import { decide } from "./engine.js";
import { pipeline } from "./pipeline.js";
import type { ReinsEvent } from "./reins-event.js";
import { gradeOf, heldGrade } from "./grade.js";
import { block, warn, type Guard, type GuardResult } from "./guard.js";
import { defaultPolicy } from "./policy.js";
import { initialState } from "./state.js";

/** A guard that declares `grades` and answers `result` to every event. */
function custom(grades: Guard["grades"], result: (name: string) => GuardResult): Guard {
  return {
    name: "custom",
    order: 1,
    category: "tool-discipline",
    shortCircuit: true,
    grades,
    evaluate: () => result("custom"),
  };
}

const event: ReinsEvent = {
  kind: "tool.requested",
  at: 1,
  scope: "session:g",
  tool: "Bash",
  inputHash: "h",
  command: "ls",
};

function answer(guard: Guard) {
  const { decision } = decide(initialState("session:g"), event, defaultPolicy, pipeline([guard]));
  return decision;
}

describe("a guard's declared grades", () => {
  it("turn a stop from a guard that may only advise or deny into a deny", () => {
    const guard = custom(["advise", "deny"], (name) =>
      block(name, "Stop everything.", { needsHuman: true, alert: "circuit_tripped" }),
    );
    const decision = answer(guard);
    expect(gradeOf(decision)).toBe("deny");
    expect(decision).toMatchObject({
      verdict: "block",
      needsHuman: false,
      instructions: ["Stop everything."],
    });
    expect(decision.results[0]).not.toHaveProperty("needsHuman");
  });

  it("leave an answer in a declared grade as it is", () => {
    const stop = block("custom", "Stop.", { needsHuman: true });
    const decision = answer(custom(["advise", "stop"], () => stop));
    expect(gradeOf(decision)).toBe("stop");
    expect(decision.results[0]).toBe(stop);
  });

  it("turn a deny from a guard that may only advise into advice", () => {
    const decision = answer(custom(["advise"], (name) => warn(name, "Confirm first.", { needsHuman: true })));
    expect(gradeOf(decision)).toBe("advise");
    expect(decision.instructions).toEqual(["Confirm first."]);
  });

  it("silence an answer below every declared grade", () => {
    const decision = answer(custom(["stop"], (name) => warn(name, "Careful.")));
    expect(decision).toMatchObject({ verdict: "allow", needsHuman: false, instructions: [], alerts: [] });
  });

  it("hold a grade to the strongest declared one at or below it", () => {
    expect(heldGrade("stop", ["advise", "deny"])).toBe("deny");
    expect(heldGrade("stop", ["advise"])).toBe("advise");
    expect(heldGrade("deny", ["advise", "stop"])).toBe("advise");
    expect(heldGrade("advise", ["deny", "stop"])).toBe("allow");
    expect(heldGrade("deny", ["deny"])).toBe("deny");
    expect(heldGrade("allow", [])).toBe("allow");
  });
});
