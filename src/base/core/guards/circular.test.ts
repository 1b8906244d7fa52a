import { describe, expect, it } from "vitest";
import { replay } from "../engine.js";
import { pipeline } from "../pipeline.js";
import type { EventKind } from "../reins-event.js";
import type { GuardVerdict } from "../decision.js";
import { defaultPolicy, resolvePolicy, type Policy } from "../policy.js";
import { fnv1a, timeline, type Timeline } from "../timeline.js";
import { circular } from "./circular.js";

const only = pipeline([circular]);

/** The circular guard's result for every event of `kind`, in order, with no other guard in the way. */
function resultsOf(t: Timeline, kind: EventKind, policy: Policy = defaultPolicy): GuardVerdict[] {
  const decisions = replay(policy, t.events, only);
  return decisions.flatMap((d, i) => {
    if (t.events[i]?.kind !== kind) return [];
    const result = d.results.find((r) => r.guard === "circular");
    if (result === undefined) throw new Error(`no circular result for event ${i}`);
    return [result];
  });
}

const requests = (t: Timeline, policy?: Policy) => resultsOf(t, "tool.requested", policy);
const completions = (t: Timeline, policy?: Policy) => resultsOf(t, "tool.completed", policy);
const verdicts = (results: GuardVerdict[]) => results.map((r) => r.verdict);

const failing = { ok: false, output: "1 failed: expected 2, got 3" };

describe("circular: the same write again and again", () => {
  it("allows the same change to a file twice and blocks the third", () => {
    const t = timeline("session:c");
    for (let i = 0; i < 4; i++) t.edit("src/a.ts", "return 1");
    const results = requests(t);
    expect(verdicts(results)).toEqual(["allow", "allow", "block", "block"]);
    expect(results[2]?.message).toContain("the same change to `src/a.ts` 3 times");
    expect(results[3]?.message).toContain("`src/a.ts` 4 times");
  });

  it("treats a changed write as progress, and restarts the count after it", () => {
    const t = timeline("session:c")
      .edit("src/a.ts", "return 1")
      .edit("src/a.ts", "return 1")
      .edit("src/a.ts", "return 2")
      .edit("src/a.ts", "return 1")
      .edit("src/a.ts", "return 1");
    expect(verdicts(requests(t))).toEqual(["allow", "allow", "allow", "allow", "allow"]);
  });

  it("counts repeats per file, whatever is written to other files in between", () => {
    const t = timeline("session:c")
      .edit("src/a.ts", "return 1")
      .edit("src/b.ts", "return 1")
      .edit("src/a.ts", "return 1")
      .edit("src/c.ts", "return 1")
      .edit("src/a.ts", "return 1");
    expect(verdicts(requests(t))).toEqual(["allow", "allow", "allow", "allow", "block"]);
  });

  it("follows the policy's threshold", () => {
    const t = timeline("session:c");
    for (let i = 0; i < 4; i++) t.edit("src/a.ts", "return 1");
    const policy = resolvePolicy({ circular: { threshold: 4 } });
    expect(verdicts(requests(t, policy))).toEqual(["allow", "allow", "allow", "block"]);
  });

  it("lets an exempt tool repeat its writes", () => {
    const t = timeline("session:c");
    for (let i = 0; i < 4; i++) t.edit("src/a.ts", "return 1");
    const policy = resolvePolicy({ loops: { tools: { Edit: { exempt: true } } } });
    expect(verdicts(requests(t, policy))).toEqual(["allow", "allow", "allow", "allow"]);
  });

  it("blocks the third identical write in the full engine, with the instruction for the agent", () => {
    const t = timeline("session:c");
    for (let i = 0; i < 3; i++) t.edit("src/a.ts", "return 1");
    const decision = replay(defaultPolicy, t.events)[4];
    expect(decision?.verdict).toBe("block");
    expect(decision?.instructions[0]).toMatch(/same change to `src\/a\.ts` 3 times.*Read the file/);
  });
});

describe("circular: re-running a command that changed nothing", () => {
  it("warns before the third run of a command that gave the same output twice with nothing edited", () => {
    const t = timeline("session:c")
      .bash("npm test", failing)
      .bash("npm test", failing)
      .bash("npm test", failing);
    const results = requests(t);
    expect(verdicts(results)).toEqual(["allow", "allow", "warn"]);
    expect(results[2]?.message).toBe(
      "`npm test` gave the same result twice with nothing changed in between; running it again will not help. Change something first.",
    );
  });

  it("keeps warning on the fourth run, counting three identical results", () => {
    const t = timeline("session:c");
    for (let i = 0; i < 4; i++) t.bash("npm test", failing);
    const results = requests(t);
    expect(verdicts(results)).toEqual(["allow", "allow", "warn", "warn"]);
    expect(results[3]?.message).toContain("the same result 3 times");
  });

  it("does not warn when a file was edited between the first and second run", () => {
    const t = timeline("session:c")
      .bash("npm test", failing)
      .edit("src/a.ts", "return 2")
      .bash("npm test", failing)
      .bash("npm test", failing);
    expect(verdicts(requests(t))).toEqual(["allow", "allow", "allow", "allow"]);
  });

  it("does not warn when a file was edited just before the third run", () => {
    const t = timeline("session:c")
      .bash("npm test", failing)
      .bash("npm test", failing)
      .edit("src/a.ts", "return 2")
      .bash("npm test", failing);
    expect(verdicts(requests(t))).toEqual(["allow", "allow", "allow", "allow"]);
  });

  it("does not warn when the output changed between runs", () => {
    const t = timeline("session:c")
      .bash("npm test", { ok: false, output: "3 failed" })
      .bash("npm test", { ok: false, output: "2 failed" })
      .bash("npm test", { ok: false, output: "1 failed" });
    expect(verdicts(requests(t))).toEqual(["allow", "allow", "allow"]);
  });

  it("treats commands that differ only in white space as the same command", () => {
    const t = timeline("session:c")
      .bash("npm test", failing)
      .bash("npm  test", failing)
      .bash(" npm   test ", failing);
    const results = requests(t);
    expect(verdicts(results)).toEqual(["allow", "allow", "warn"]);
    expect(results[2]?.message).toContain("`npm test` gave the same result twice");
  });

  it("never counts a run whose output is unknown as a repeat", () => {
    const t = timeline("session:c");
    for (let i = 0; i < 3; i++) {
      t.push({ kind: "tool.requested", tool: "Bash", inputHash: fnv1a("npm test"), command: "npm test" });
      t.push({
        kind: "tool.completed",
        tool: "Bash",
        inputHash: fnv1a("npm test"),
        command: "npm test",
        outcome: "failure",
      });
    }
    expect(verdicts(requests(t))).toEqual(["allow", "allow", "allow"]);
  });

  it("lets an exempt tool re-run a command", () => {
    const t = timeline("session:c");
    for (let i = 0; i < 3; i++) t.bash("git status", { output: "clean" });
    const policy = resolvePolicy({ loops: { tools: { Bash: { exempt: true } } } });
    expect(verdicts(requests(t, policy))).toEqual(["allow", "allow", "allow"]);
  });
});

describe("circular: edits that do not reach the problem", () => {
  it("warns when a command gives the same output a third time although files were edited in between", () => {
    const t = timeline("session:c")
      .bash("npm test", failing)
      .edit("src/a.ts", "attempt 1")
      .bash("npm test", failing)
      .edit("src/a.ts", "attempt 2")
      .bash("npm test", failing);
    const results = completions(t).filter((_, i) => i % 2 === 0); // the npm test runs
    expect(verdicts(results)).toEqual(["allow", "allow", "warn"]);
    expect(results[2]?.message).toBe(
      "`npm test` gave the same result 3 times although files were edited in between: the edits are not reaching the problem. Re-read the output and rethink the fix.",
    );
  });

  it("does not warn when the edits change the output", () => {
    const t = timeline("session:c")
      .bash("npm test", { ok: false, output: "3 failed" })
      .edit("src/a.ts", "attempt 1")
      .bash("npm test", { ok: false, output: "2 failed" })
      .edit("src/a.ts", "attempt 2")
      .bash("npm test", { ok: false, output: "1 failed" });
    expect(verdicts(completions(t))).toEqual(["allow", "allow", "allow", "allow", "allow"]);
  });

  it("does not warn about a passing command that keeps its output across edits", () => {
    const t = timeline("session:c").bash("npm test", { output: "all passed" });
    for (let i = 0; i < 3; i++) t.edit("src/a.ts", `step ${i}`).bash("npm test", { output: "all passed" });
    expect(verdicts(completions(t))).not.toContain("warn");
  });

  it("leaves a third identical run with no edits at all to the warning before it ran", () => {
    const t = timeline("session:c");
    for (let i = 0; i < 3; i++) t.bash("npm test", failing);
    expect(verdicts(completions(t))).toEqual(["allow", "allow", "allow"]);
  });
});
