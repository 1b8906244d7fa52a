import { describe, expect, it } from "vitest";
import { replay } from "../engine.js";
import { pipeline } from "../pipeline.js";
import type { EventKind } from "../reins-event.js";
import type { GuardVerdict } from "../decision.js";
import { defaultPolicy, resolvePolicy, type Policy } from "../policy.js";
import { timeline, type Timeline } from "../timeline.js";
import { thrashing } from "./thrashing.js";

const only = pipeline([thrashing]);

/** The thrashing guard's result for every event of `kind`, in order, with no other guard in the way. */
function resultsOf(t: Timeline, kind: EventKind, policy: Policy = defaultPolicy): GuardVerdict[] {
  const decisions = replay(policy, t.events, only);
  return decisions.flatMap((d, i) => {
    if (t.events[i]?.kind !== kind) return [];
    const result = d.results.find((r) => r.guard === "thrashing");
    if (result === undefined) throw new Error(`no thrashing result for event ${i}`);
    return [result];
  });
}

const edits = (t: Timeline, policy?: Policy) => resultsOf(t, "tool.requested", policy);
const checks = (t: Timeline, policy?: Policy) => resultsOf(t, "verification.ran", policy);
const verdicts = (results: GuardVerdict[]) => results.map((r) => r.verdict);

/** `rounds` edit-check rounds that each change `path` and end with the tests failing at the same score. */
function redRounds(rounds: number, path = "src/parser.ts", t = timeline("session:t"), score = 0.2): Timeline {
  for (let i = 0; i < rounds; i++) {
    t.edit(path, `attempt ${t.events.length}`);
    t.verify("tests", false, { score });
  }
  return t;
}

describe("thrashing", () => {
  it("warns when a file is edited in a fifth round without the checks getting greener", () => {
    const results = edits(redRounds(5));
    expect(verdicts(results)).toEqual(["allow", "allow", "allow", "allow", "warn"]);
    expect(results[4]?.message).toBe(
      "`src/parser.ts` has been changed or flagged in 5 iterations without the checks getting greener. Stop editing it: re-read the failing check and the surrounding design, then make one deliberate change.",
    );
  });

  it("keeps warning, with the count, in the rounds after that", () => {
    const results = edits(redRounds(6));
    expect(verdicts(results).slice(4)).toEqual(["warn", "warn"]);
    expect(results[5]?.message).toContain("in 6 iterations");
  });

  it("counts many edits of the file within one round once", () => {
    const t = timeline("session:t");
    for (let i = 0; i < 8; i++) t.edit("src/parser.ts", `small step ${i}`);
    expect(verdicts(edits(t))).not.toContain("warn");
  });

  it("counts each file on its own", () => {
    const t = timeline("session:t");
    for (let i = 0; i < 5; i++) {
      t.edit(i % 2 === 0 ? "src/parser.ts" : "src/lexer.ts", `attempt ${i}`);
      t.verify("tests", false);
    }
    expect(verdicts(edits(t))).not.toContain("warn");
  });

  it("starts counting again when a check gets a better score", () => {
    const t = redRounds(3, "src/parser.ts", timeline("session:t"), 0.2);
    redRounds(1, "src/parser.ts", t, 0.5); // greener: the count restarts after this round
    redRounds(5, "src/parser.ts", t, 0.5);
    expect(verdicts(edits(t))).toEqual([...Array<string>(8).fill("allow"), "warn"]);
  });

  it("starts counting again when a failing check passes", () => {
    const t = redRounds(4, "src/parser.ts").verify("lint", false).verify("lint", true);
    t.edit("src/parser.ts", "next step");
    expect(edits(t).at(-1)?.verdict).toBe("allow");
  });

  it("counts the iterations of an agent loop as rounds, with or without checks", () => {
    const t = timeline("session:t");
    for (let i = 0; i < 5; i++) t.edit("src/parser.ts", `attempt ${i}`).iteration("failure");
    expect(verdicts(edits(t))).toEqual(["allow", "allow", "allow", "allow", "warn"]);
  });

  it("warns on a failing check that flags the same file in a fifth round", () => {
    const t = timeline("session:t");
    for (let i = 0; i < 5; i++) {
      t.edit("src/main.ts", `attempt ${i}`); // another file: only the flags count for the parser
      t.verify("tests", false, { flagged: ["src/parser.ts"] });
    }
    const results = checks(t);
    expect(verdicts(results)).toEqual(["allow", "allow", "allow", "allow", "warn"]);
    expect(results[4]?.message).toContain("`src/parser.ts` has been changed or flagged in 5 iterations");
  });

  it("counts a file edited and flagged in the same round once", () => {
    const t = timeline("session:t");
    for (let i = 0; i < 4; i++) {
      t.edit("src/parser.ts", `attempt ${i}`);
      t.verify("tests", false, { flagged: ["src/parser.ts"] });
    }
    expect(verdicts(checks(t))).not.toContain("warn");
    expect(verdicts(edits(t))).not.toContain("warn");
  });

  it("names every file of a call that is thrashing", () => {
    const t = timeline("session:t");
    for (let i = 0; i < 5; i++) {
      t.call("MultiEdit", { attempt: i }, { writes: ["src/parser.ts", "src/lexer.ts"] });
      t.verify("tests", false);
    }
    expect(edits(t).at(-1)?.message).toMatch(
      /^`src\/parser\.ts`, `src\/lexer\.ts` have been changed or flagged in 5 iterations.*Stop editing them/,
    );
  });

  it("follows the policy's number of iterations", () => {
    const policy = resolvePolicy({ thrashing: { iterations: 2 } });
    expect(verdicts(edits(redRounds(2), policy))).toEqual(["allow", "warn"]);
  });

  it("only warns, even in the full engine", () => {
    const t = timeline("session:t");
    // Lint passes between the red test runs, so the breaker's failed-verification streak never reaches 3.
    for (let i = 0; i < 5; i++)
      t.edit("src/parser.ts", `attempt ${i}`).verify("lint", true).verify("tests", false);
    const decision = replay(defaultPolicy, t.events)[16]; // the fifth edit's request
    expect(thrashing.shortCircuit).toBe(false);
    expect(decision?.results.find((r) => r.guard === "thrashing")?.verdict).toBe("warn");
    expect(decision?.verdict).toBe("warn");
  });

  it("does not call step-by-step work thrashing while every check is green", () => {
    const t = timeline("session:t");
    for (let i = 0; i < 6; i++) t.edit("src/parser.ts", `step ${i}`).verify("tests", true);
    expect(verdicts(edits(t))).not.toContain("warn");
  });
});
