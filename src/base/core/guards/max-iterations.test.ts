import { describe, expect, it } from "vitest";
import type { Decision } from "../decision.js";
import { pipeline } from "../pipeline.js";
import { defaultPolicy, resolvePolicy, type Policy } from "../policy.js";
import { driver } from "#test/drive.js";
import { maxIterations } from "./max-iterations.js";

const only = pipeline([maxIterations]);

/** A session run through the max-iterations guard alone; each step returns the decisions of the events it added. */
function drive(policy: Policy = defaultPolicy) {
  const { t, state, steps, step } = driver(policy, only);
  return { t, state, steps, step };
}

/** Ends `n` iterations and returns their decisions. */
function iterations(s: ReturnType<typeof drive>, n: number): Decision[] {
  return s.steps((t) => {
    for (let i = 0; i < n; i++) t.iteration("success");
  });
}

describe("max-iterations guard", () => {
  it("allows every iteration up to the default maximum of 30", () => {
    const s = drive();
    const decisions = iterations(s, 30);
    expect(decisions.map((d) => d.verdict)).toEqual(Array(30).fill("allow"));
    expect(s.state.iterations).toBe(30);
    expect(s.step((t) => t.bash("npm test")).verdict).toBe("allow");
  });

  it("blocks the 31st iteration and asks a human, raising the alert once", () => {
    const s = drive();
    iterations(s, 30);
    const crossing = s.step((t) => t.iteration("success"));
    expect(crossing.verdict).toBe("block");
    expect(crossing.needsHuman).toBe(true);
    expect(crossing.instructions).toEqual([
      "Iteration 31 exceeds the maximum of 30. Stop here and report what is done and what is left.",
    ]);
    expect(crossing.alerts).toEqual([
      { kind: "max_iterations", guard: "max-iterations", message: crossing.instructions[0] },
    ]);

    const next = s.step((t) => t.iteration("failure"));
    expect(next.verdict).toBe("block");
    expect(next.instructions[0]).toMatch(/^Iteration 32 exceeds the maximum of 30\./);
    expect(next.alerts).toEqual([]);
  });

  it("blocks further tool calls and task starts once past the maximum", () => {
    const s = drive();
    iterations(s, 31);
    const [request] = s.steps((t) => t.call("Bash", { command: "ls" }, { command: "ls" }, null));
    expect(request?.verdict).toBe("block");
    expect(request?.needsHuman).toBe(true);
    expect(request?.alerts).toEqual([]);
    expect(s.step((t) => t.startTask("t2")).verdict).toBe("block");
  });

  it("does not judge events that start no work, such as usage, completions and claims", () => {
    const s = drive();
    iterations(s, 31);
    const decisions = s.steps((t) => t.usage({ inputTokens: 10 }).claim("session").verify("tests", true));
    expect(decisions.map((d) => d.verdict)).toEqual(["allow", "allow", "allow"]);
  });

  it("counts failed and successful iterations alike", () => {
    const s = drive(resolvePolicy({ iterations: { max: 2 } }));
    expect(s.step((t) => t.iteration("failure")).verdict).toBe("allow");
    expect(s.step((t) => t.iteration("success")).verdict).toBe("allow");
    expect(s.step((t) => t.iteration("failure")).verdict).toBe("block");
  });

  it("uses the policy's maximum", () => {
    const s = drive(resolvePolicy({ iterations: { max: 5 } }));
    expect(iterations(s, 5).every((d) => d.verdict === "allow")).toBe(true);
    const sixth = s.step((t) => t.iteration("success"));
    expect(sixth.verdict).toBe("block");
    expect(sixth.instructions[0]).toContain("Iteration 6 exceeds the maximum of 5");
  });
});
