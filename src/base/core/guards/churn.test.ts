import { describe, expect, it } from "vitest";
import { advance } from "../engine.js";
import { pipeline } from "../pipeline.js";
import { defaultPolicy, resolvePolicy, type Policy } from "../policy.js";
import { initialState } from "../state.js";
import { timeline } from "../timeline.js";
import { driver } from "#test/drive.js";
import { churn } from "./churn.js";

const only = pipeline([churn]);

/** A session working on task "t1", run through the churn guard alone. */
function drive(policy: Policy = defaultPolicy) {
  const { t, state, steps, step } = driver(policy, only);
  steps((t) => t.startTask("t1", "implement"));
  return {
    t,
    state,
    step,
    /** Ends an iteration of the current task with a failure. */
    fail: () => step((t) => t.iteration("failure")),
    /** Asks to run a tool for the current task (request only). */
    work: () => step((t) => t.call("Bash", { command: "npm test" }, { command: "npm test" }, null)),
    confirm: () => step((t) => t.confirm()),
  };
}

/** A session whose task "t1" has failed `n` times in a row. */
function failedTimes(n: number, policy?: Policy) {
  const s = drive(policy);
  for (let i = 0; i < n; i++) s.fail();
  return s;
}

describe("churn guard", () => {
  it("stays Normal after one failure", () => {
    const s = drive();
    expect(s.fail().verdict).toBe("allow");
    expect(s.work().verdict).toBe("allow");
    expect(s.state.churn.t1).toEqual({ failures: 1, confirmed: 0 });
  });

  it("warns at the second consecutive failure (Warning) but lets work go on", () => {
    const s = failedTimes(1);
    const warning = s.fail();
    expect(warning.verdict).toBe("warn");
    expect(warning.needsHuman).toBe(false);
    expect(warning.instructions).toEqual([
      'Task "t1" has failed 2 times in a row (escalation: Warning). Consider a different approach before the next attempt.',
    ]);
    expect(s.work().verdict).toBe("allow");
  });

  it("blocks at the third consecutive failure (Intervention) and asks a human", () => {
    const s = failedTimes(2);
    const intervention = s.fail();
    expect(intervention.verdict).toBe("block");
    expect(intervention.needsHuman).toBe(true);
    expect(intervention.alerts.map((a) => a.kind)).toEqual(["churn_intervention"]);
    expect(intervention.instructions).toEqual([
      'Task "t1" has failed 3 times in a row (escalation: Intervention). You must change strategy; a person must confirm before work on it goes on.',
    ]);
  });

  it("blocks the task's tool calls and restarts in Intervention until a human confirms", () => {
    const s = failedTimes(3);
    const blocked = s.work();
    expect([blocked.verdict, blocked.needsHuman]).toEqual(["block", true]);
    expect(blocked.alerts).toEqual([]);
    expect(s.step((t) => t.startTask("t1")).verdict).toBe("block");
    // Facts that start no work are not judged.
    expect(s.step((t) => t.usage({ inputTokens: 10 })).verdict).toBe("allow");
    expect(s.step((t) => t.verify("tests", false)).verdict).toBe("allow");

    expect(s.confirm().verdict).toBe("allow");
    expect(s.state.churn.t1).toEqual({ failures: 3, confirmed: 2 });
    expect(s.work().verdict).toBe("allow");
  });

  it("after a confirmation in Intervention, warns at the fourth failure without blocking", () => {
    const s = failedTimes(3);
    s.confirm();
    const fourth = s.fail();
    expect(fourth.verdict).toBe("warn");
    expect(fourth.instructions).toEqual([
      'Task "t1" has failed 4 times in a row (escalation: Intervention). A person let work go on; change strategy now.',
    ]);
    expect(s.work().verdict).toBe("allow");
  });

  it("halts at the fifth consecutive failure, lifting the earlier confirmation", () => {
    const s = failedTimes(3);
    s.confirm();
    s.fail();
    const halted = s.fail();
    expect([halted.verdict, halted.needsHuman]).toEqual(["block", true]);
    expect(halted.alerts.map((a) => a.kind)).toEqual(["churn_halted"]);
    expect(halted.instructions).toEqual([
      'Task "t1" has failed 5 times in a row (escalation: Halted). Work on it is halted until a person confirms going on (`reins confirm session:s`).',
    ]);
    expect(s.work().verdict).toBe("block");

    s.confirm();
    expect(s.state.churn.t1?.confirmed).toBe(3);
    expect(s.work().verdict).toBe("allow");
    expect(s.fail().verdict).toBe("warn");
  });

  it("confirmation at Warning does not lift the Intervention block", () => {
    const s = failedTimes(2);
    s.confirm();
    expect(s.state.churn.t1?.confirmed).toBe(1);
    expect(s.fail().verdict).toBe("block");
    expect(s.work().verdict).toBe("block");
  });

  it("a confirmation with no failures on record changes nothing", () => {
    const s = drive();
    s.confirm();
    expect(s.state.churn).toEqual({});
    expect(s.fail().verdict).toBe("allow");
  });

  it("a successful iteration resets the failures and the confirmation", () => {
    const s = failedTimes(3);
    s.confirm();
    expect(s.step((t) => t.iteration("success")).verdict).toBe("allow");
    expect(s.state.churn.t1).toEqual({ failures: 0, confirmed: 0 });
    expect(s.fail().verdict).toBe("allow");
    expect(s.fail().verdict).toBe("warn");
    expect(s.fail().verdict).toBe("block");
  });

  it("counts a task that ends failed as a failure, and one that ends done as a reset", () => {
    const s = failedTimes(2);
    const ended = s.step((t) => t.endTask("failed"));
    expect(ended.verdict).toBe("block");
    expect(s.state.churn.t1?.failures).toBe(3);
    expect(s.step((t) => t.startTask("t1")).verdict).toBe("block");

    const done = failedTimes(2);
    done.step((t) => t.endTask("done"));
    expect(done.state.churn.t1).toEqual({ failures: 0, confirmed: 0 });
  });

  it("escalates each task on its own", () => {
    const s = failedTimes(3);
    expect(s.step((t) => t.startTask("t2")).verdict).toBe("allow");
    expect(s.work().verdict).toBe("allow");
    expect(s.fail().verdict).toBe("allow");
    expect(s.step((t) => t.startTask("t1")).verdict).toBe("block");
    expect(s.work().instructions[0]).toContain('Task "t1" has failed 3 times in a row');
  });

  it("names the session's work when no task is known", () => {
    const t = timeline("session:s").iteration("failure").iteration("failure");
    const state = initialState(t.scope);
    const decisions = t.events.map((event) => advance(state, event, defaultPolicy, only));
    expect(decisions.at(-1)?.instructions[0]).toMatch(/^The session's work has failed 2 times in a row/);
  });

  it("uses the policy's escalation levels", () => {
    const s = drive(resolvePolicy({ churn: { warningAt: 1, interventionAt: 2, haltAt: 2 } }));
    expect(s.fail().verdict).toBe("warn");
    const halted = s.fail();
    expect(halted.verdict).toBe("block");
    expect(halted.instructions[0]).toContain("(escalation: Halted)");
  });
});
