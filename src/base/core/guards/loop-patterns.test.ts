import { describe, expect, it } from "vitest";
import { replay } from "../engine.js";
import { pipeline } from "../pipeline.js";
import type { EventKind } from "../reins-event.js";
import type { GuardVerdict } from "../decision.js";
import { defaultPolicy, resolvePolicy, type Policy } from "../policy.js";
import { timeline, type Timeline } from "../timeline.js";
import { loopPatterns } from "./loop-patterns.js";

const only = pipeline([loopPatterns]);

/** The loop-patterns guard's result for every event of `kind`, in order, with no other guard in the way. */
function resultsOf(t: Timeline, kind: EventKind, policy: Policy = defaultPolicy): GuardVerdict[] {
  const decisions = replay(policy, t.events, only);
  return decisions.flatMap((d, i) => {
    if (t.events[i]?.kind !== kind) return [];
    const result = d.results.find((r) => r.guard === "loop-patterns");
    if (result === undefined) throw new Error(`no loop-patterns result for event ${i}`);
    return [result];
  });
}

const requests = (t: Timeline, policy?: Policy) => resultsOf(t, "tool.requested", policy);
const completions = (t: Timeline, policy?: Policy) => resultsOf(t, "tool.completed", policy);
const verdicts = (results: GuardVerdict[]) => results.map((r) => r.verdict);

/** Flip-flops `rounds` times between the same edit and the same failing test run. */
function flipFlop(rounds: number, testOutput: (round: number) => string = () => "1 failed"): Timeline {
  const t = timeline("session:l");
  for (let i = 0; i < rounds; i++) {
    t.edit("src/a.ts", "use the cache");
    t.bash("npm test", { ok: false, output: testOutput(i) });
  }
  return t;
}

/** `n` calls to the same endpoint that differ only in a request id, all with the same answer. */
function nearIdentical(n: number, output: (i: number) => string = () => "404 Not Found"): Timeline {
  const t = timeline("session:l");
  for (let i = 0; i < n; i++) {
    const command = `curl -s localhost:3000/api/jobs?request=${1000 + i}`;
    t.call("Bash", { command }, { command, shapeHash: "curl-api-jobs" }, { output: output(i) });
  }
  return t;
}

describe("loop-patterns: alternating A-B-A-B calls", () => {
  it("warns at two rounds and blocks at three when the results stay the same", () => {
    const results = requests(flipFlop(3));
    expect(verdicts(results)).toEqual(["allow", "allow", "allow", "warn", "warn", "block"]);
    expect(results[3]?.message).toBe(
      "You are alternating between the same two calls (Edit `src/a.ts` and Bash `npm test`), 2 rounds so far, with the same results each time. Neither fix works: stop, compare the two outcomes and find the real cause.",
    );
    expect(results[5]?.message).toContain("(Edit `src/a.ts` and Bash `npm test`), 3 rounds so far");
  });

  it("is progress, not a loop, when one of the two calls gives a new result each round", () => {
    const t = timeline("session:l");
    for (let i = 0; i < 3; i++) {
      t.bash("npm test", { ok: false, output: `${3 - i} failed` });
      t.edit("src/a.ts", "use the cache");
    }
    expect(verdicts(requests(t))).toEqual(["allow", "allow", "allow", "allow", "allow", "allow"]);
  });

  it("stops calling it a loop as soon as a changed result is known", () => {
    // The second test run's new output is only known once it completed: its own request still warns.
    const results = requests(flipFlop(3, (round) => `${3 - round} failed`));
    expect(verdicts(results)).toEqual(["allow", "allow", "allow", "warn", "allow", "allow"]);
  });

  it("follows the policy's warn and block rounds", () => {
    const policy = resolvePolicy({ loops: { alternatingWarnCycles: 3, alternatingBlockCycles: 4 } });
    expect(verdicts(requests(flipFlop(4), policy))).toEqual([
      "allow",
      "allow",
      "allow",
      "allow",
      "allow",
      "warn",
      "warn",
      "block",
    ]);
  });

  it("does not count alternation with a tool the policy exempts", () => {
    const t = timeline("session:l");
    for (let i = 0; i < 3; i++) {
      t.call("BashOutput", { bash_id: "shell-1" }, {}, { output: "still running" });
      t.bash("sleep 30", { output: "" });
    }
    const policy = resolvePolicy({ loops: { tools: { BashOutput: { exempt: true } } } });
    expect(verdicts(requests(t, policy))).toEqual(["allow", "allow", "allow", "allow", "allow", "allow"]);
    expect(verdicts(requests(t))).toContain("block");
  });
});

describe("loop-patterns: near-identical calls", () => {
  it("denies the sixth call in a row that differs only in noise, and the ones after it", () => {
    const results = requests(nearIdentical(7));
    expect(verdicts(results)).toEqual(["allow", "allow", "allow", "allow", "allow", "block", "block"]);
    expect(results[5]?.needsHuman).toBeUndefined();
    expect(results[5]?.message).toBe(
      "This is the 6th Bash call in a row that differs from the last only in details (ids, counters, comments, timestamps, temporary paths), and each gave the same result. It was not run: change the approach, not the details.",
    );
    expect(results[6]?.message).toContain("This is the 7th Bash call in a row");
  });

  it("does not warn when the results differ", () => {
    const results = requests(nearIdentical(7, (i) => `job ${i} queued`));
    expect(verdicts(results)).toEqual(["allow", "allow", "allow", "allow", "allow", "allow", "allow"]);
  });

  it("leaves truly identical calls to the circuit breaker", () => {
    const t = timeline("session:l");
    for (let i = 0; i < 7; i++) {
      t.call("Bash", { command: "curl -s localhost:3000/health" }, { shapeHash: "curl-health" });
    }
    // Neither a warning nor a block from this guard: the breaker's duplicate-call count handles them.
    expect(verdicts(requests(t))).toEqual(Array(7).fill("allow"));
  });

  it("starts counting again after a call of another shape", () => {
    const t = nearIdentical(5).read("src/server.ts");
    const command = "curl -s localhost:3000/api/jobs?request=2000";
    t.call("Bash", { command }, { command, shapeHash: "curl-api-jobs" }, { output: "404 Not Found" });
    expect(verdicts(requests(t))).toEqual(["allow", "allow", "allow", "allow", "allow", "allow", "allow"]);
  });

  it("follows a per-tool threshold from the policy", () => {
    const policy = resolvePolicy({ loops: { tools: { Bash: { nearIdenticalThreshold: 3 } } } });
    const results = requests(nearIdentical(3), policy);
    expect(verdicts(results)).toEqual(["allow", "allow", "block"]);
    expect(results[2]?.message).toContain("This is the 3rd Bash call in a row");
  });

  it("lets an exempt tool repeat near-identical calls", () => {
    const policy = resolvePolicy({ loops: { tools: { Bash: { exempt: true } } } });
    expect(verdicts(requests(nearIdentical(8), policy))).toEqual(Array(8).fill("allow"));
  });
});

describe("loop-patterns: the same error text repeating", () => {
  /** `n` failing runs of different commands that all end in the same error. */
  function sameError(n: number): Timeline {
    const t = timeline("session:l");
    for (let i = 0; i < n; i++) {
      t.bash(`node scripts/migrate.js --step ${i}`, {
        ok: false,
        output: "Error: ECONNREFUSED 127.0.0.1:5432",
      });
    }
    return t;
  }

  it("warns at the third and fourth identical error, and leaves the fifth to the circuit breaker", () => {
    const results = completions(sameError(6));
    expect(verdicts(results)).toEqual(["allow", "allow", "warn", "warn", "allow", "allow"]);
    expect(results[2]?.message).toBe(
      "The same error came back 3 times in a row (last from Bash). Retrying will not change it: read the error, find its cause, and fix that.",
    );
    expect(results[3]?.message).toContain("came back 4 times in a row");
  });

  it("starts counting again after a different error", () => {
    const t = sameError(2).bash("psql -c 'select 1'", { ok: false, output: "role does not exist" });
    t.bash("node scripts/migrate.js", { ok: false, output: "Error: ECONNREFUSED 127.0.0.1:5432" });
    t.bash("node scripts/migrate.js", { ok: false, output: "Error: ECONNREFUSED 127.0.0.1:5432" });
    expect(verdicts(completions(t))).toEqual(["allow", "allow", "allow", "allow", "allow"]);
  });

  it("starts counting again after a success", () => {
    const t = sameError(2).bash("docker compose up -d db");
    t.bash("node scripts/migrate.js", { ok: false, output: "Error: ECONNREFUSED 127.0.0.1:5432" });
    t.bash("node scripts/migrate.js", { ok: false, output: "Error: ECONNREFUSED 127.0.0.1:5432" });
    expect(verdicts(completions(t))).toEqual(["allow", "allow", "allow", "allow", "allow"]);
  });

  it("follows the policy's warn and block counts", () => {
    const policy = resolvePolicy({ loops: { errorRepeatWarn: 2, errorRepeatBlock: 4 } });
    expect(verdicts(completions(sameError(4), policy))).toEqual(["allow", "warn", "warn", "allow"]);
  });

  it("lets an exempt tool, such as a status poll, fail the same way again and again", () => {
    const t = timeline("session:l");
    for (let i = 0; i < 6; i++) {
      t.call("CheckStatus", { run: 42 }, {}, { ok: false, output: "checks still failing" });
    }
    const policy = resolvePolicy({ loops: { tools: { CheckStatus: { exempt: true } } } });
    expect(verdicts(completions(t, policy))).toEqual(Array(6).fill("allow"));
  });

  it("opens the circuit breaker at the fifth identical error in the full engine: a stop", () => {
    const t = sameError(5);
    const decision = replay(defaultPolicy, t.events).at(-1);
    expect([decision?.verdict, decision?.needsHuman]).toEqual(["block", true]);
    expect(decision?.instructions[0]).toMatch(
      /^The same error came back 5 times in a row \(last from Bash\), with nothing succeeding in between\. The circuit breaker is now open/,
    );
  });

  it("does not count failures that say nothing (grep finding no match) as the same error", () => {
    const t = timeline("session:l");
    for (let i = 0; i < 6; i++)
      t.push({
        kind: "tool.completed",
        tool: "Bash",
        inputHash: `g${i}`,
        command: `grep -rn x${i} src`,
        outcome: "failure",
        outputHash: "empty",
      });
    expect(replay(defaultPolicy, t.events).every((d) => d.verdict === "allow")).toBe(true);
  });
});
