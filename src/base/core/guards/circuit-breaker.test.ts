import { describe, expect, it } from "vitest";
import type { Decision } from "../decision.js";
import { pipeline, type Pipeline } from "../pipeline.js";
import { resolvePolicy, type PolicyInput } from "../policy.js";
import { fnv1a } from "../timeline.js";
import { driver } from "#test/drive.js";
import { circuitBreaker } from "./circuit-breaker.js";
import { defaultGuards } from "./index.js";

const only = pipeline([circuitBreaker]);

/** A session run through the circuit breaker alone; each step returns the decisions of the events it added. */
function drive(input: PolicyInput = {}, guards: Pipeline = only) {
  const policy = resolvePolicy(input);
  const { t, state, steps, step } = driver(policy, guards);
  return {
    t,
    state,
    steps,
    step,
    /** `npm test` run to completion with `output`: returns the request's decision. */
    npmTest: (output = "1 failed", ok = false) => steps((t) => t.bash("npm test", { ok, output }))[0]!,
    /** A request only (the call has not come back), distinct per `n`. */
    ask: (n: number | string = 0) => step((t) => t.call("Read", { n }, { reads: [`src/${n}.ts`] }, null)),
    /** The completion of a call requested with `ask(n)`. */
    answer: (n: number | string = 0, ok = true) =>
      step((t) =>
        t.push({
          kind: "tool.completed",
          tool: "Read",
          inputHash: fnv1a(JSON.stringify({ n })),
          outcome: ok ? "success" : "failure",
          outputHash: ok ? "fine" : "broken",
        }),
      ),
  };
}

type Session = ReturnType<typeof drive>;

/** Trips the breaker with five identical failing `npm test` calls; returns the tripping decision. */
function tripOnDuplicates(s: Session): Decision {
  for (let i = 0; i < 4; i++) s.npmTest();
  return s.step((t) => t.call("Bash", { command: "npm test" }, { command: "npm test" }, null));
}

/** An open breaker, acknowledged by a human: half-open, no probe sent yet. */
function halfOpen(input: PolicyInput = {}): Session {
  const s = drive(input);
  tripOnDuplicates(s);
  s.step((t) => t.ack());
  return s;
}

/** Requests at the given times, each a distinct call. */
function requestsAt(s: Session, times: number[]): Decision[] {
  return times.map((at, i) => {
    s.t.now = at;
    return s.ask(`at-${i}`);
  });
}

/** `n` times, `gap` ms apart, from 0. */
const spaced = (n: number, gap: number) => Array.from({ length: n }, (_, i) => i * gap);

const verdicts = (decisions: Decision[]) => decisions.map((d) => d.verdict);

describe("circuit breaker", () => {
  describe("closed → open on identical calls", () => {
    it("opens after 5 identical consecutive calls failing the same way", () => {
      const s = drive();
      const first = [s.npmTest(), s.npmTest(), s.npmTest(), s.npmTest()];
      expect(verdicts(first)).toEqual(["allow", "allow", "allow", "allow"]);
      expect(s.state.calls.streak).toBe(4);

      const trip = s.step((t) => t.call("Bash", { command: "npm test" }, { command: "npm test" }, null));
      expect(trip.verdict).toBe("block");
      expect(trip.needsHuman).toBe(true);
      expect(trip.alerts.map((a) => a.kind)).toEqual(["circuit_tripped"]);
      expect(trip.instructions).toEqual([
        "The same Bash call `npm test` was made 5 times in a row, failing the same way each time. The circuit breaker is now open: stop, explain what you were trying and why it is not working. A person must acknowledge before work goes on.",
      ]);
      expect(s.state.breaker).toEqual({
        status: "open",
        reason: "duplicate_calls",
        detail: "The same Bash call `npm test` was made 5 times in a row, failing the same way each time",
        openedAt: s.t.now - 1_000,
        probe: "none",
        probeAt: null,
        trips: 1,
      });
    });

    it("restarts the streak when the same call produces a different output (progress)", () => {
      const s = drive();
      for (let i = 0; i < 3; i++) s.npmTest("3 failed");
      // The fourth run changed its output: it starts a new streak of one.
      expect(s.npmTest("2 failed").verdict).toBe("allow");
      expect(s.state.calls.streak).toBe(1);
      expect(verdicts([s.npmTest("2 failed"), s.npmTest("2 failed"), s.npmTest("2 failed")])).toEqual([
        "allow",
        "allow",
        "allow",
      ]);
      expect(s.npmTest("2 failed").verdict).toBe("block");
      expect(s.state.breaker.reason).toBe("duplicate_calls");
    });

    it("restarts the streak when a different call comes in between", () => {
      const s = drive();
      for (let i = 0; i < 4; i++) s.npmTest();
      s.steps((t) => t.bash("npm run lint"));
      const after = [s.npmTest(), s.npmTest(), s.npmTest(), s.npmTest()];
      expect(verdicts(after)).toEqual(["allow", "allow", "allow", "allow"]);
      expect(s.state.breaker.status).toBe("closed");
    });

    it("only advises on identical calls that succeed the same way (a poll waiting for a change)", () => {
      const s = drive();
      const polls = Array.from({ length: 10 }, () => s.npmTest("queued", true));
      expect(verdicts(polls)).toEqual([...Array(4).fill("allow"), "warn", ...Array(4).fill("allow"), "warn"]);
      expect(polls[4]?.instructions[0]).toMatch(
        /^The same Bash call `npm test` has been made 5 times in a row with the same result\. If you are waiting for something, wait longer/,
      );
      expect(s.state.breaker.status).toBe("closed");
    });

    it("uses a tool's own duplicateThreshold from policy.loops.tools", () => {
      // (A high errorRepeatBlock, or the same error would open the breaker first.)
      const s = drive({ loops: { errorRepeatBlock: 20, tools: { Bash: { duplicateThreshold: 8 } } } });
      const runs = Array.from({ length: 8 }, () => s.npmTest());
      expect(verdicts(runs)).toEqual([...Array(7).fill("allow"), "block"]);
      expect(runs[7]?.instructions[0]).toMatch(/^The same Bash call `npm test` was made 8 times in a row/);

      const other = drive({ loops: { tools: { Read: { duplicateThreshold: 8 } } } });
      expect(tripOnDuplicates(other).verdict).toBe("block");
    });

    it("never counts an exempt tool's identical calls as duplicates", () => {
      const s = drive({ loops: { tools: { Read: { exempt: true } } } });
      const reads = Array.from({ length: 12 }, () => s.steps((t) => t.read("src/a.ts"))[0]!);
      expect(reads.every((d) => d.verdict === "allow")).toBe(true);
      expect(s.state.calls.streak).toBe(12);
      expect(s.state.breaker.status).toBe("closed");
    });
  });

  describe("rapid fire is a rule of thumb: denied, never a stop", () => {
    it("denies the call that makes 40 within 10 s and leaves the breaker closed", () => {
      const s = drive();
      const decisions = requestsAt(s, spaced(40, 250));
      expect(verdicts(decisions)).toEqual([...Array(39).fill("allow"), "block"]);
      expect(decisions[39]?.needsHuman).toBe(false);
      expect(decisions[39]?.instructions[0]).toMatch(
        /^40 tool calls came within 10 s \(limit 40 per 10 s\)\. Slow down/,
      );
      expect(s.state.breaker.status).toBe("closed");
    });

    it.each([
      [9_999, "block"],
      [10_000, "allow"],
      [10_001, "allow"],
    ] as const)("with the 40th call %i ms after the first, answers %s", (last, verdict) => {
      const s = drive();
      const decisions = requestsAt(s, [...spaced(39, 100), last]);
      expect(decisions.at(-1)?.verdict).toBe(verdict);
    });

    it("does not deny 39 calls in two seconds", () => {
      const s = drive();
      const decisions = requestsAt(s, spaced(39, 50));
      expect(decisions.every((d) => d.verdict === "allow")).toBe(true);
    });

    it("does not deny 40 calls spread over more than 10 s", () => {
      const s = drive();
      const decisions = requestsAt(s, spaced(50, 260));
      expect(decisions.every((d) => d.verdict === "allow")).toBe(true);
    });
  });

  describe("calls per task is a rule of thumb: advice, never a stop", () => {
    /** `n` distinct requests, one a second. */
    const calls = (s: Session, n: number, prefix: string) =>
      Array.from({ length: n }, (_, i) => s.ask(`${prefix}-${i}`));

    it("allows 50 calls in a task and advises at the 51st, leaving the breaker closed", () => {
      const s = drive();
      s.step((t) => t.startTask("t1"));
      expect(calls(s, 50, "t1").every((d) => d.verdict === "allow")).toBe(true);
      const advice = s.ask("t1-50");
      expect([advice.verdict, advice.needsHuman]).toEqual(["warn", false]);
      expect(advice.instructions[0]).toMatch(
        /^Task "t1" has made 51 tool calls, more than 50\. If you are going round in circles/,
      );
      expect(s.state.breaker.status).toBe("closed");
    });

    it("advises again at each further 50 calls, not in between", () => {
      const s = drive();
      s.step((t) => t.startTask("t1"));
      const answers = calls(s, 151, "t1").map((d) => d.verdict);
      expect(answers.flatMap((v, i) => (v === "warn" ? [i + 1] : []))).toEqual([51, 101, 151]);
    });

    it("starts counting afresh when the task changes", () => {
      const s = drive();
      s.step((t) => t.startTask("t1"));
      calls(s, 50, "t1");
      s.step((t) => t.startTask("t2"));
      expect(calls(s, 50, "t2").every((d) => d.verdict === "allow")).toBe(true);
      expect(s.state.calls).toMatchObject({ task: "t2", taskCalls: 50 });
      expect(s.ask("t2-50").verdict).toBe("warn");
    });

    it("counts a session without a task as one task", () => {
      const s = drive({ circuit: { maxCallsPerTask: 3 } });
      const answers = calls(s, 4, "x");
      expect(verdicts(answers)).toEqual(["allow", "allow", "allow", "warn"]);
      expect(answers[3]?.instructions[0]).toMatch(/^This session has made 4 tool calls, more than 3/);
    });
  });

  describe("closed → open on failed verifications with nothing improving", () => {
    const failing = (n: number, fingerprint = "same") => ({ fingerprint, failing: n });

    it("opens at the 3rd failure of a check that fails the same way with nothing changed", () => {
      const s = drive();
      expect(
        verdicts(s.steps((t) => t.verify("tests", false, failing(2)).verify("tests", false, failing(2)))),
      ).toEqual(["allow", "allow"]);
      const trip = s.step((t) => t.verify("tests", false, failing(2)));
      expect([trip.verdict, trip.needsHuman]).toEqual(["block", true]);
      expect(trip.instructions[0]).toMatch(
        /^tests failed 3 times in a row the same way, with nothing changed in between\. The circuit breaker is now open/,
      );
      expect(s.state.breaker).toMatchObject({ status: "open", reason: "failed_verifications", trips: 1 });
    });

    it("restarts the count after a passing verification", () => {
      const s = drive();
      const decisions = s.steps((t) =>
        t.verify("tests", false).verify("tests", false).verify("tests", true).verify("tests", false),
      );
      expect(decisions.every((d) => d.verdict === "allow")).toBe(true);
      expect(s.state.failedVerifications).toBe(1);
    });

    it("never opens while each run fails with fewer failing tests", () => {
      const s = drive();
      const decisions = s.steps((t) => {
        for (const n of [9, 7, 7, 4, 4, 1]) t.verify("tests", false, failing(n));
      });
      // 7 then 7 and 4 then 4 are repeats, but each streak is cut by the drop that follows.
      expect(decisions.every((d) => d.verdict === "allow")).toBe(true);
      expect(s.state.breaker.status).toBe("closed");
    });

    it("never opens when each failure is a different one (a test written to fail before its fix)", () => {
      const s = drive();
      const decisions = s.steps((t) => {
        for (const f of ["new test fails", "import error", "assertion in helper", "off by one"])
          t.verify("tests", false, failing(1, f));
      });
      expect(decisions.every((d) => d.verdict === "allow")).toBe(true);
    });

    it("never opens when a file was edited between the failures", () => {
      const s = drive();
      const decisions = s.steps((t) => {
        for (let i = 0; i < 5; i++) t.edit("src/fix.ts", `attempt ${i}`).verify("tests", false, failing(3));
      });
      expect(decisions.some((d) => d.needsHuman)).toBe(false);
      expect(s.state.breaker.status).toBe("closed");
    });

    it("does not count a failure of another check as the same failure", () => {
      const s = drive();
      const decisions = s.steps((t) =>
        t
          .verify("tests", false, failing(2))
          .verify("lint", false, failing(2))
          .verify("tests", false, failing(2)),
      );
      expect(decisions.every((d) => d.verdict === "allow")).toBe(true);
    });
  });

  describe("open", () => {
    it("blocks tool calls and task starts and says how to acknowledge", () => {
      const s = drive();
      tripOnDuplicates(s);
      const blocked = s.ask("other");
      expect([blocked.verdict, blocked.needsHuman]).toEqual(["block", true]);
      expect(blocked.alerts).toEqual([]);
      expect(blocked.instructions[0]).toContain("The circuit breaker is open");
      expect(blocked.instructions[0]).toContain("5 times in a row");
      expect(blocked.instructions[0]).toContain("`reins circuit ack session:s`");
      expect(s.step((t) => t.startTask("t2")).verdict).toBe("block");
      expect(s.state.breaker.trips).toBe(1);
    });

    it("lets facts that start no work through", () => {
      const s = drive();
      tripOnDuplicates(s);
      const facts = s.steps((t) => {
        t.push({ kind: "tool.completed", tool: "Bash", inputHash: "x", outcome: "failure" });
        t.usage({ inputTokens: 10 }).verify("tests", true).iteration("failure").claim("task");
      });
      expect(verdicts(facts)).toEqual(["allow", "allow", "allow", "allow", "allow"]);
      expect(s.state.breaker.status).toBe("open");
    });

    it("stays open however long it waits when autoHalfOpenMs is null", () => {
      const s = drive();
      tripOnDuplicates(s);
      s.t.wait(24 * 3_600_000);
      expect(s.ask("later").verdict).toBe("block");
      expect(s.state.breaker.status).toBe("open");
    });

    it("half-opens by itself after autoHalfOpenMs, letting the next call through as the probe", () => {
      const s = drive({ circuit: { autoHalfOpenMs: 30_000 } });
      tripOnDuplicates(s);
      const openedAt = s.state.breaker.openedAt!;
      s.t.now = openedAt + 29_999;
      expect(s.ask("early").verdict).toBe("block");
      s.t.now = openedAt + 30_000;
      expect(s.ask("probe").verdict).toBe("allow");
      expect(s.state.breaker).toMatchObject({
        status: "half_open",
        probe: "in_flight",
        probeAt: openedAt + 30_000,
      });
    });
  });

  describe("half-open", () => {
    it("is entered when a human acknowledges an open breaker, clearing the counters", () => {
      const s = drive();
      tripOnDuplicates(s);
      const ack = s.step((t) => t.ack());
      expect([ack.verdict, ack.results]).toEqual(["allow", []]);
      expect(s.state.breaker).toMatchObject({ status: "half_open", probe: "none", probeAt: null, trips: 1 });
      expect(s.state.calls).toMatchObject({ streak: 0, taskCalls: 0, times: [] });
    });

    it("lets exactly one probe through and blocks a second call while the probe is in flight", () => {
      const s = halfOpen();
      const probe = s.ask("probe");
      expect(probe.verdict).toBe("allow");
      expect(s.state.breaker).toMatchObject({ probe: "in_flight", probeAt: s.t.now - 1_000 });

      const second = s.ask("second");
      expect(second.verdict).toBe("block");
      expect(second.needsHuman).toBe(false);
      expect(second.instructions).toEqual([
        "The circuit breaker is half-open and its one probe call has not finished yet. Wait for its result.",
      ]);
      expect(s.state.breaker.status).toBe("half_open");
    });

    it("closes once 60 s pass after a successful probe, not at 59 s", () => {
      const s = halfOpen();
      s.ask("probe");
      s.answer("probe");
      const passedAt = s.state.breaker.probeAt!;
      expect(s.state.breaker.probe).toBe("passed");

      // Calls may go on during the cooldown.
      expect(s.ask("during").verdict).toBe("allow");
      s.t.now = passedAt + 59_999;
      s.ask("almost");
      expect(s.state.breaker.status).toBe("half_open");
      s.t.now = passedAt + 60_000;
      expect(s.step((t) => t.usage({ inputTokens: 1 })).verdict).toBe("allow");
      expect(s.state.breaker).toMatchObject({ status: "closed", reason: null, detail: null, probe: "none" });
    });

    it("uses the policy's cooldown", () => {
      const s = halfOpen({ circuit: { cooldownMs: 5_000 } });
      s.ask("probe");
      s.answer("probe");
      s.t.now = s.state.breaker.probeAt! + 5_000;
      s.ask("after");
      expect(s.state.breaker.status).toBe("closed");
    });

    it("opens again when the probe fails", () => {
      const s = halfOpen();
      s.ask("probe");
      const failed = s.answer("probe", false);
      expect([failed.verdict, failed.needsHuman]).toEqual(["block", true]);
      expect(failed.alerts.map((a) => a.kind)).toEqual(["circuit_tripped"]);
      expect(failed.instructions[0]).toMatch(
        /^The probe call after the breaker was acknowledged failed \(Read\)\. The circuit breaker is now open/,
      );
      expect(s.state.breaker).toMatchObject({ status: "open", reason: "probe_failed", trips: 2 });
      expect(s.ask("next").verdict).toBe("block");
    });

    it("opens again on another anomaly during the cooldown", () => {
      const s = halfOpen();
      s.ask("probe");
      s.answer("probe");
      const repeats = [s.npmTest(), s.npmTest(), s.npmTest(), s.npmTest(), s.npmTest()];
      expect(verdicts(repeats)).toEqual(["allow", "allow", "allow", "allow", "block"]);
      expect(s.state.breaker).toMatchObject({ status: "open", reason: "duplicate_calls", trips: 2 });
    });

    it("opens again when verifications keep failing", () => {
      const s = halfOpen();
      s.ask("probe");
      s.answer("probe");
      const checks = s.steps((t) => t.verify("tests", false).verify("tests", false).verify("tests", false));
      expect(verdicts(checks)).toEqual(["allow", "allow", "block"]);
      expect(s.state.breaker).toMatchObject({ status: "open", reason: "failed_verifications" });
    });

    it("after an automatic half-open, clears the counters so the probe is judged on its own", () => {
      const s = drive({ circuit: { autoHalfOpenMs: 30_000 } });
      tripOnDuplicates(s);
      s.t.wait(30_000);
      const probe = s.step((t) => t.call("Bash", { command: "npm test" }, { command: "npm test" }, null));
      expect(probe.verdict).toBe("allow");
      expect(s.state.breaker).toMatchObject({ status: "half_open", probe: "in_flight", trips: 1 });
      expect(s.state.calls.streak).toBe(1);
    });
  });

  describe("human reset", () => {
    it("closes an open breaker and clears the counters, keeping the trip count", () => {
      const s = drive();
      tripOnDuplicates(s);
      expect(s.step((t) => t.resetCircuit()).verdict).toBe("allow");
      expect(s.state.breaker).toEqual({
        status: "closed",
        reason: null,
        detail: null,
        openedAt: s.state.breaker.openedAt,
        probe: "none",
        probeAt: null,
        trips: 1,
      });
      expect(verdicts([s.npmTest(), s.npmTest(), s.npmTest(), s.npmTest()])).toEqual([
        "allow",
        "allow",
        "allow",
        "allow",
      ]);
    });

    it("closes a half-open breaker whose probe is in flight", () => {
      const s = halfOpen();
      s.ask("probe");
      s.step((t) => t.resetCircuit());
      expect(s.state.breaker.status).toBe("closed");
      expect(s.ask("next").verdict).toBe("allow");
    });
  });

  describe("in the default pipeline", () => {
    it("does not mark a probe in flight when another guard blocks the call", () => {
      const s = drive({}, pipeline(defaultGuards));
      s.steps((t) => t.edit("src/a.ts", "same").edit("src/a.ts", "same"));
      tripOnDuplicates(s);
      expect(s.state.breaker.status).toBe("open");
      s.step((t) => t.ack());

      // The same content written a third time: the circular guard blocks it, so it never runs.
      const retry = s.step((t) =>
        t.call("Edit", { file_path: "src/a.ts", change: "same" }, { writes: ["src/a.ts"] }, null),
      );
      expect(retry.verdict).toBe("block");
      expect(retry.results.find((r) => r.guard === "circular")?.verdict).toBe("block");
      expect(s.state.breaker.probe).toBe("none");

      const probe = s.steps((t) => t.read("src/a.ts"))[0]!;
      expect(probe.verdict).toBe("allow");
      expect(s.state.breaker.probe).toBe("passed");
    });
  });
});

describe("circuit breaker: a call denied again and again", () => {
  /** The same write, denied by the circular guard from its third time on, with the tests run between. */
  function rewrites(n: number, input: PolicyInput = {}) {
    const s = drive(input, pipeline(defaultGuards));
    const decisions: Decision[] = [];
    for (let i = 0; i < n; i++) {
      decisions.push(
        s.step((t) =>
          t.call("Edit", { file_path: "src/a.ts", change: "same" }, { writes: ["src/a.ts"] }, null),
        ),
      );
      s.npmTest("1 failed");
    }
    return { s, decisions };
  }

  it("stops an agent that makes a denied call a third time, nothing let through between", () => {
    const { decisions } = rewrites(5);
    expect(decisions.map((d) => d.verdict)).toEqual(["allow", "allow", "block", "block", "block"]);
    expect(decisions[3]?.needsHuman).toBe(false);
    expect(decisions[4]?.needsHuman).toBe(true);
    expect(decisions[4]?.instructions.join(" ")).toMatch(
      /^The same Edit call was denied 2 times and made again, with no change let through in between\. The circuit breaker is now open/,
    );
  });

  it("starts counting again once a write is let through", () => {
    const s = drive({}, pipeline(defaultGuards));
    const same = () =>
      s.step((t) =>
        t.call("Edit", { file_path: "src/a.ts", change: "same" }, { writes: ["src/a.ts"] }, null),
      );
    for (let i = 0; i < 4; i++) same();
    s.step((t) => t.edit("src/b.ts", "another file"));
    expect(same().needsHuman).toBe(false);
  });

  it("never stops on a rule of thumb's denials: the same read retried after rapid-fire denials", () => {
    const s = drive(
      { circuit: { rapidFireThreshold: 2, rapidFireWindowMs: 60_000 } },
      pipeline(defaultGuards),
    );
    const read = () =>
      s.step((t) => t.call("Read", { file_path: "src/a.ts" }, { reads: ["src/a.ts"] }, null));
    s.step((t) => t.read("src/b.ts"));
    const answers = [read(), read(), read(), read()];
    expect(answers.map((d) => d.verdict)).toContain("block");
    expect(answers.some((d) => d.needsHuman)).toBe(false);
  });

  it("follows circuit.deniedRetryThreshold", () => {
    expect(rewrites(5, { circuit: { deniedRetryThreshold: 3 } }).decisions[4]?.needsHuman).toBe(false);
    expect(rewrites(6, { circuit: { deniedRetryThreshold: 3 } }).decisions[5]?.needsHuman).toBe(true);
  });
});
