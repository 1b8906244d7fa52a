import { describe, expect, it } from "vitest";
import { replay } from "../engine.js";
import { pipeline } from "../pipeline.js";
import type { GuardVerdict } from "../decision.js";
import { defaultPolicy, resolvePolicy, type Policy } from "../policy.js";
import { timeline, type Timeline } from "../timeline.js";
import { qualityRegression } from "./quality-regression.js";

const only = pipeline([qualityRegression]);

/** The guard's result for every verification of the timeline, in order, with no other guard in the way. */
function checkResults(t: Timeline, policy: Policy = defaultPolicy): GuardVerdict[] {
  const decisions = replay(policy, t.events, only);
  return decisions.flatMap((d, i) => {
    if (t.events[i]?.kind !== "verification.ran") return [];
    const result = d.results.find((r) => r.guard === "quality-regression");
    if (result === undefined) throw new Error(`no quality-regression result for event ${i}`);
    return [result];
  });
}

/** Runs the `tests` check once per score; a score below 1 fails it. */
function scores(...values: number[]): Timeline {
  const t = timeline("session:q");
  for (const score of values) t.verify("tests", score === 1, { score });
  return t;
}

const verdicts = (results: GuardVerdict[]) => results.map((r) => r.verdict);

describe("quality-regression", () => {
  it("lets a score decline twice in a row and warns at the third decline", () => {
    const results = checkResults(scores(0.9, 0.8, 0.7, 0.6));
    expect(verdicts(results)).toEqual(["allow", "allow", "allow", "warn"]);
    expect(results[3]?.message).toBe(
      "The tests score declined 3 times in a row (now 0.60). The recent changes make things worse: go back to the last version that scored better and change approach.",
    );
  });

  it("keeps warning while the score goes on declining", () => {
    const results = checkResults(scores(0.9, 0.8, 0.7, 0.6, 0.5));
    expect(verdicts(results)).toEqual(["allow", "allow", "allow", "warn", "warn"]);
    expect(results[4]?.message).toContain("declined 4 times in a row (now 0.50)");
  });

  it("starts counting again after the score improves", () => {
    expect(verdicts(checkResults(scores(0.9, 0.8, 0.7, 0.75, 0.7, 0.6)))).toEqual([
      "allow",
      "allow",
      "allow",
      "allow",
      "allow",
      "allow",
    ]);
  });

  it("starts counting again after a score that holds steady", () => {
    expect(verdicts(checkResults(scores(0.9, 0.8, 0.8, 0.7, 0.6)))).not.toContain("warn");
  });

  it("counts declines per check, not across checks", () => {
    const t = timeline("session:q");
    for (const score of [0.9, 0.8, 0.7]) {
      t.verify("tests", false, { score });
      t.verify("lint", false, { score });
    }
    expect(verdicts(checkResults(t))).not.toContain("warn");
    const results = checkResults(t.verify("tests", false, { score: 0.6 }));
    expect(results.at(-1)?.verdict).toBe("warn");
    expect(results.at(-1)?.message).toContain("The tests score declined 3 times");
  });

  it("scores a check without an explicit score as 1 when it passes and 0 when it fails", () => {
    // pass → fail is one decline; staying red is no further decline.
    const t = timeline("session:q").verify("tests", true).verify("tests", false).verify("tests", false);
    t.verify("tests", false);
    expect(verdicts(checkResults(t))).not.toContain("warn");
  });

  it("follows the policy's number of declines", () => {
    const policy = resolvePolicy({ quality: { declines: 2 } });
    expect(verdicts(checkResults(scores(0.9, 0.8, 0.7), policy))).toEqual(["allow", "allow", "warn"]);
  });

  it("only warns, and shows in the full engine's decision", () => {
    // Passing runs with a falling score (coverage, say), so the breaker's failed-check count stays out of it.
    const t = timeline("session:q");
    for (const score of [0.9, 0.8, 0.7, 0.6]) t.verify("tests", true, { score });
    const decision = replay(defaultPolicy, t.events).at(-1);
    expect(qualityRegression.shortCircuit).toBe(false);
    expect(decision?.verdict).toBe("warn");
    expect(decision?.instructions).toContain(
      "The tests score declined 3 times in a row (now 0.60). The recent changes make things worse: go back to the last version that scored better and change approach.",
    );
  });
});
