import { describe, expect, it } from "vitest";
import { replay } from "../engine.js";
import { pipeline } from "../pipeline.js";
import type { EventKind } from "../reins-event.js";
import type { GuardVerdict } from "../decision.js";
import { defaultPolicy, resolvePolicy, type Policy } from "../policy.js";
import { timeline, type Timeline } from "../timeline.js";
import { wipLimits } from "./wip-limits.js";

const only = pipeline([wipLimits]);

/** The WIP guard's result for every event of `kind`, in order, with no other guard in the way. */
function resultsOf(t: Timeline, kind: EventKind, policy: Policy = defaultPolicy): GuardVerdict[] {
  const decisions = replay(policy, t.events, only);
  return decisions.flatMap((d, i) => {
    if (t.events[i]?.kind !== kind) return [];
    const result = d.results.find((r) => r.guard === "wip-limits");
    if (result === undefined) throw new Error(`no wip-limits result for event ${i}`);
    return [result];
  });
}

const requests = (t: Timeline, policy?: Policy) => resultsOf(t, "tool.requested", policy);
const taskStarts = (t: Timeline, policy?: Policy) => resultsOf(t, "task.started", policy);
const verdicts = (results: GuardVerdict[]) => results.map((r) => r.verdict);

/** Starts each task in turn without ending any. */
function start(...tasks: string[]): Timeline {
  const t = timeline("session:w");
  for (const task of tasks) t.startTask(task);
  return t;
}

/** `n` failed runs of `command`, each with a different error so that no other loop rule is involved. */
function failures(n: number, command = "npm test", t = timeline("session:w")): Timeline {
  for (let i = 0; i < n; i++) t.bash(command, { ok: false, output: `failure #${i}` });
  return t;
}

describe("wip-limits: tasks in flight", () => {
  it("allows up to three tasks in flight and blocks a fourth and a fifth", () => {
    const results = taskStarts(start("a", "b", "c", "d", "e"));
    expect(verdicts(results)).toEqual(["allow", "allow", "allow", "block", "block"]);
    expect(results[3]?.message).toBe(
      '3 tasks are already in flight ("a", "b", "c"); the limit is 3. Finish one before starting task "d".',
    );
  });

  it("frees a slot when a task ends", () => {
    const t = start("a", "b", "c").endTask("done").startTask("d");
    expect(verdicts(taskStarts(t))).toEqual(["allow", "allow", "allow", "allow"]);
  });

  it("does not count a task that is started again twice", () => {
    expect(verdicts(taskStarts(start("a", "b", "c", "a")))).toEqual(["allow", "allow", "allow", "allow"]);
  });

  it("follows the policy's cap", () => {
    const policy = resolvePolicy({ wip: { maxInFlightTasks: 1 } });
    const results = taskStarts(start("a", "b"), policy);
    expect(verdicts(results)).toEqual(["allow", "block"]);
    expect(results[1]?.message).toBe(
      '1 task is already in flight ("a"); the limit is 1. Finish one before starting task "b".',
    );
  });
});

describe("wip-limits: changed lines no check has verified", () => {
  it("allows edits up to 1,000 unverified lines and blocks the edit that goes past them", () => {
    const t = timeline("session:w")
      .edit("src/a.ts", "big change", 400)
      .edit("src/b.ts", "bigger change", 599)
      .edit("src/c.ts", "one more line", 1)
      .edit("src/d.ts", "one line too many", 1);
    const results = requests(t);
    expect(verdicts(results)).toEqual(["allow", "allow", "allow", "block"]);
    expect(results[3]?.message).toBe(
      "1,001 changed lines have not passed a check yet (limit 1,000). Run the checks before changing more.",
    );
  });

  it("keeps the lines counted through a failing check", () => {
    const t = timeline("session:w").edit("src/a.ts", "big change", 1000).verify("tests", false);
    t.edit("src/a.ts", "small fix", 1);
    expect(verdicts(requests(t))).toEqual(["allow", "block"]);
  });

  it("clears the count when a check passes", () => {
    const t = timeline("session:w").edit("src/a.ts", "big change", 1000).verify("tests", true);
    t.edit("src/b.ts", "another big change", 1000);
    expect(verdicts(requests(t))).toEqual(["allow", "allow"]);
  });

  it("lets calls that change nothing through, such as running the checks", () => {
    const t = timeline("session:w").edit("src/a.ts", "huge change", 5000).bash("npm test");
    expect(verdicts(requests(t))).toEqual(["block", "allow"]);
  });

  it("follows the policy's cap", () => {
    const policy = resolvePolicy({ wip: { maxUnverifiedLines: 10 } });
    const t = timeline("session:w").edit("src/a.ts", "x", 10).edit("src/a.ts", "y", 1);
    expect(verdicts(requests(t, policy))).toEqual(["allow", "block"]);
  });
});

describe("wip-limits: retries of the same failing command", () => {
  it("allows eight failed runs of a command and blocks the ninth request", () => {
    const t = failures(8);
    t.bash("npm test", { ok: false, output: "failure #8" });
    const results = requests(t);
    expect(verdicts(results)).toEqual([...Array<string>(8).fill("allow"), "block"]);
    expect(results[8]?.message).toBe(
      "`npm test` has failed 8 times in a row, the most retries allowed. Do something else: read the error, change the code or the approach.",
    );
  });

  it("starts counting again after the command succeeds", () => {
    const t = failures(7).bash("npm test", { output: "all passed" });
    failures(8, "npm test", t);
    expect(verdicts(requests(t))).not.toContain("block");
  });

  it("holds back only the failing command, not others", () => {
    const t = failures(8).bash("npm run lint").read("src/a.ts");
    expect(verdicts(requests(t)).slice(8)).toEqual(["allow", "allow"]);
  });

  it("treats a command written with other white space as the same command", () => {
    const t = failures(8).bash("npm  test ");
    expect(requests(t).at(-1)?.verdict).toBe("block");
  });

  it("classes the failures of a tool that runs no command by the tool", () => {
    const t = timeline("session:w");
    for (let i = 0; i < 9; i++) t.call("WebFetch", { url: `https://example.test/${i}` }, {}, { ok: false });
    const results = requests(t);
    expect(verdicts(results)).toEqual([...Array<string>(8).fill("allow"), "block"]);
    expect(results[8]?.message).toMatch(/^WebFetch has failed 8 times in a row/);
  });

  it("follows the policy's number of retries", () => {
    const policy = resolvePolicy({ wip: { maxRetriesPerFailureClass: 2 } });
    expect(verdicts(requests(failures(3), policy))).toEqual(["allow", "allow", "block"]);
  });

  it("blocks the ninth retry in the full engine", () => {
    const t = failures(8);
    t.bash("npm test", { ok: false, output: "failure #8" });
    const decision = replay(defaultPolicy, t.events).at(-2);
    expect(decision?.verdict).toBe("block");
    expect(decision?.instructions[0]).toContain("`npm test` has failed 8 times in a row");
  });
});

describe("wip-limits: a suite fixed one test at a time", () => {
  /** `n` rounds of an edit, then `npm test` failing with one failure fewer each time. */
  function fixing(n: number, from = n + 1): Timeline {
    const t = timeline("session:w");
    for (let i = 0; i < n; i++) {
      t.edit("src/a.ts", `fix ${i}`);
      t.bash("npm test", { ok: false, output: `${from - i} failed` });
      t.verify("tests", false, { command: "npm test", failing: from - i, fingerprint: `f${i}` });
    }
    return t;
  }

  it("is progress, not retries: twelve runs, each with fewer failures, are never held back", () => {
    const t = fixing(12).bash("npm test");
    expect(verdicts(requests(t))).not.toContain("block");
  });

  it("still counts runs that fail as often as before as retries", () => {
    const t = timeline("session:w");
    for (let i = 0; i < 8; i++) {
      t.bash("npm test", { ok: false, output: `3 failed (#${i})` });
      t.verify("tests", false, { command: "npm test", failing: 3, fingerprint: `f${i}` });
    }
    t.bash("npm test");
    expect(requests(t).at(-1)?.verdict).toBe("block");
  });
});
