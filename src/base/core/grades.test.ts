import { describe, expect, it } from "vitest";
import { decide } from "./engine.js";
import { pipeline } from "./pipeline.js";
import type { ReinsEvent } from "./reins-event.js";
import { gradeOf, heldGrade } from "./grade.js";
import { advise, deny, pass, stop, type Guard, type GuardResult } from "./guard.js";
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
      stop(name, "Stop everything.", { alert: "circuit_tripped" }),
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
    const decision = answer(custom(["advise", "stop"], (name) => stop(name, "Stop.")));
    expect(gradeOf(decision)).toBe("stop");
    expect(decision.results[0]).toStrictEqual({
      guard: "custom",
      verdict: "block",
      message: "Stop.",
      needsHuman: true,
    });
  });

  it("turn a deny that asks a person from a guard that may only advise into advice", () => {
    const decision = answer(custom(["advise"], (name) => deny(name, "Confirm first.", { ask: true })));
    expect(gradeOf(decision)).toBe("advise");
    expect(decision).toMatchObject({ verdict: "warn", needsHuman: false, instructions: ["Confirm first."] });
  });

  it("silence an answer below every declared grade", () => {
    const decision = answer(custom(["stop"], (name) => advise(name, "Careful.")));
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

describe("a guard's grades, as a decision records them", () => {
  const all: Guard["grades"] = ["advise", "deny", "stop"];
  const recordOf = (result: (name: string) => GuardResult) => answer(custom(all, result));

  it("record a pass as one shared frozen allow", () => {
    const first = recordOf(pass).results[0];
    expect(first).toStrictEqual({ guard: "custom", verdict: "allow" });
    expect(Object.isFrozen(first)).toBe(true);
    expect(recordOf(pass).results[0]).toBe(first);
  });

  it.each([
    ["advise", (name: string) => advise(name, "m"), "warn", false],
    ["deny", (name: string) => deny(name, "m"), "block", false],
    ["deny that asks a person", (name: string) => deny(name, "m", { ask: true }), "warn", true],
    ["stop", (name: string) => stop(name, "m"), "block", true],
  ] as const)("record a %s as %s", (_grade, result, verdict, needsHuman) => {
    const decision = recordOf(result);
    expect([decision.verdict, decision.needsHuman]).toEqual([verdict, needsHuman]);
    expect(decision.results[0]).toStrictEqual({
      guard: "custom",
      verdict,
      message: "m",
      ...(needsHuman ? { needsHuman } : {}),
    });
  });

  it("ask a person only with a deny: a stop already waits for one, advice never does", () => {
    const asking = { ask: true } as const;
    expect(recordOf((name) => ({ ...advise(name, "m"), ...asking })).needsHuman).toBe(false);
    expect(recordOf((name) => ({ ...stop(name, "m"), ...asking })).results[0]).toMatchObject({
      verdict: "block",
      needsHuman: true,
    });
  });
});
