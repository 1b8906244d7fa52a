import { describe, expect, it } from "vitest";
import { replay } from "../engine.js";
import { pipeline } from "../pipeline.js";
import type { EventKind } from "../reins-event.js";
import type { GuardVerdict } from "../decision.js";
import { defaultPolicy, resolvePolicy, type Policy } from "../policy.js";
import { timeline, type Timeline } from "../timeline.js";
import { verificationGate } from "./verification-gate.js";

const only = pipeline([verificationGate]);

/** The seeds' threshold, 10 edits: the mechanics are the same at the default, 25. */
const ten = resolvePolicy({ verification: { maxEditsWithoutVerification: 10 } });

/** The verification gate's result for every event of `kind`, in order, with no other guard in the way. */
function resultsOf(t: Timeline, kind: EventKind, policy: Policy = ten): GuardVerdict[] {
  const decisions = replay(policy, t.events, only);
  return decisions.flatMap((d, i) => {
    if (t.events[i]?.kind !== kind) return [];
    const result = d.results.find((r) => r.guard === "verification-gate");
    if (result === undefined) throw new Error(`no verification-gate result for event ${i}`);
    return [result];
  });
}

const requests = (t: Timeline, policy?: Policy) => resultsOf(t, "tool.requested", policy);
const taskStarts = (t: Timeline, policy?: Policy) => resultsOf(t, "task.started", policy);
const verdicts = (results: GuardVerdict[]) => results.map((r) => r.verdict);

/** `n` edits, each a different change to one of a few files. */
function edits(t: Timeline, n: number, from = 0): Timeline {
  for (let i = from; i < from + n; i++) t.edit(`src/file-${i % 3}.ts`, `change ${i}`);
  return t;
}

const allow = (n: number) => Array<string>(n).fill("allow");

describe("verification-gate: edits without a check", () => {
  it("allows ten edits without a check and blocks the eleventh and later ones", () => {
    const results = requests(edits(timeline("session:v"), 12));
    expect(verdicts(results)).toEqual([...allow(10), "block", "block"]);
    expect(results[10]?.message).toBe(
      "You have made 10 edits since the last check ran. Run a check (for example the project's tests) before editing more.",
    );
  });

  it("lets ten more edits through after a passing check", () => {
    const t = edits(timeline("session:v"), 10).verify("tests", true);
    const results = requests(edits(t, 11, 10));
    expect(verdicts(results)).toEqual([...allow(20), "block"]);
  });

  it("counts a failing check, or any check other than the tests, as a check", () => {
    const failing = edits(timeline("session:v"), 10).verify("tests", false);
    expect(verdicts(requests(edits(failing, 10, 10)))).toEqual(allow(20));
    const lint = edits(timeline("session:v"), 10).verify("lint", true);
    expect(verdicts(requests(edits(lint, 10, 10)))).toEqual(allow(20));
  });

  it("never holds back a call that edits nothing, however many edits came before", () => {
    const t = edits(timeline("session:v"), 11).bash("npm test").read("src/file-0.ts");
    expect(verdicts(requests(t)).slice(11)).toEqual(["allow", "allow"]);
  });

  it("suggests the command last seen running the tests", () => {
    const t = timeline("session:v").verify("tests", true, { command: "pnpm vitest run" });
    const results = requests(edits(t, 11));
    expect(results[10]?.message).toContain("(for example `pnpm vitest run`)");
  });

  it("follows the policy's number of edits", () => {
    const policy = resolvePolicy({ verification: { maxEditsWithoutVerification: 3 } });
    const results = requests(edits(timeline("session:v"), 4), policy);
    expect(verdicts(results)).toEqual(["allow", "allow", "allow", "block"]);
    expect(results[3]?.message).toContain("You have made 3 edits since the last check ran.");
  });

  it("blocks the 26th edit in the full engine with the default policy: a deny, never a stop", () => {
    const t = edits(timeline("session:v"), 26);
    const decisions = replay(defaultPolicy, t.events);
    expect(
      decisions
        .slice(0, 50)
        .some((d) => d.results.some((r) => r.guard === "verification-gate" && r.verdict === "block")),
    ).toBe(false);
    const decision = decisions[50];
    expect([decision?.verdict, decision?.needsHuman]).toEqual(["block", false]);
    expect(decision?.results.find((r) => r.guard === "verification-gate")?.verdict).toBe("block");
    expect(decision?.instructions[0]).toContain("25 edits since the last check ran");
  });
});

describe("verification-gate: fix-only while a check is red", () => {
  it("blocks starting a task while a check is failing, naming the check and its command", () => {
    const t = timeline("session:v")
      .startTask("a")
      .verify("tests", false, { command: "npm test -- --run" })
      .startTask("b");
    const results = taskStarts(t);
    expect(verdicts(results)).toEqual(["allow", "block"]);
    expect(results[1]?.message).toBe(
      'tests is failing. Fix it (run `npm test -- --run` to see why) before starting task "b".',
    );
  });

  it("names every failing check", () => {
    const t = timeline("session:v").verify("tests", false).verify("lint", false).startTask("b");
    expect(taskStarts(t)[0]?.message).toBe(
      'tests, lint are failing. Fix them (run the project\'s tests to see why) before starting task "b".',
    );
  });

  it("lets a task start once the red check passes again", () => {
    const t = timeline("session:v")
      .verify("tests", false)
      .startTask("b")
      .verify("tests", true)
      .startTask("c");
    expect(verdicts(taskStarts(t))).toEqual(["block", "allow"]);
  });

  it("lets a task start before any check ran, and while every check passes", () => {
    const t = timeline("session:v").startTask("a").verify("tests", true).startTask("b");
    expect(verdicts(taskStarts(t))).toEqual(["allow", "allow"]);
  });

  it("lets fixing work go on while a check is red", () => {
    const t = timeline("session:v").verify("tests", false).edit("src/a.ts", "fix").bash("npm test");
    expect(verdicts(requests(t))).toEqual(["allow", "allow"]);
  });

  it("lets tasks start while red when the policy turns fix-only off", () => {
    const policy = resolvePolicy({ verification: { fixOnlyWhileRed: false } });
    const t = timeline("session:v").verify("tests", false).startTask("b");
    expect(verdicts(taskStarts(t, policy))).toEqual(["allow"]);
  });
});
