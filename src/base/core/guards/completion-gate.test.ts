import { describe, expect, it } from "vitest";
import type { Decision, GuardVerdict } from "../decision.js";
import { replay } from "../engine.js";
import { pipeline } from "../pipeline.js";
import type { CompletionLevel } from "../reins-event.js";
import { defaultPolicy, resolvePolicy, type Policy } from "../policy.js";
import { timeline, type Timeline } from "../timeline.js";
import { completionGate } from "./completion-gate.js";

const only = pipeline([completionGate]);

function gateResult(decision: Decision | undefined): GuardVerdict {
  const result = decision?.results.find((r) => r.guard === "completion-gate");
  if (result === undefined) throw new Error("no completion-gate result");
  return result;
}

/** The gate's result for the timeline's last event (the claim), with no other guard in the way. */
function claimResult(t: Timeline, policy: Policy = defaultPolicy): GuardVerdict {
  return gateResult(replay(policy, t.events, only).at(-1));
}

/** The same, through every guard of the engine, so their effects (a paused budget, an open breaker) apply. */
function claimInEngine(t: Timeline, policy: Policy = defaultPolicy): GuardVerdict {
  return gateResult(replay(policy, t.events).at(-1));
}

/** How the gate says to run a check nobody has run yet, with no project command known: in words. */
function suggested(check: string): string {
  const words: Record<string, string> = {
    tests: "the project's tests",
    lint: "the project's linter",
    build: "the project's build",
  };
  return words[check] ?? `the ${check} verification`;
}

const levels: [CompletionLevel, string[]][] = [
  ["session", ["tests"]],
  ["task", ["tests", "task"]],
  ["component", ["tests", "lint", "component"]],
  ["module", ["tests", "lint", "build", "module"]],
];

/** An edit, then every check in `checks` passing after it. */
function editedThenVerified(checks: string[]): Timeline {
  const t = timeline("session:g").edit("src/a.ts", "the fix");
  for (const check of checks) t.verify(check, true);
  return t;
}

describe.each(levels)("completion-gate: a %s claim", (level, required) => {
  it(`needs ${required.join(", ")} and says what to run when none of them ran`, () => {
    const result = claimResult(timeline("session:g").edit("src/a.ts", "the fix").claim(level));
    expect(result.verdict).toBe("block");
    for (const check of required) {
      expect(result.message).toContain(`${check} has not run (run ${suggested(check)})`);
    }
  });

  it("passes once every required check passed after the last edit", () => {
    expect(claimResult(editedThenVerified(required).claim(level)).verdict).toBe("allow");
  });

  it.each(required)("blocks while %s never ran, naming it and its command", (check) => {
    const t = editedThenVerified(required.filter((c) => c !== check)).claim(level);
    const result = claimResult(t);
    expect(result.verdict).toBe("block");
    expect(result.message).toBe(
      `Not done yet: ${check} has not run (run ${suggested(check)}). Claim completion again once it passes.`,
    );
  });

  it.each(required)("blocks while %s is failing", (check) => {
    const t = editedThenVerified(required.filter((c) => c !== check))
      .verify(check, false)
      .claim(level);
    const result = claimResult(t);
    expect(result.verdict).toBe("block");
    expect(result.message).toBe(
      `Not done yet: ${check} is failing (run ${suggested(check)} and fix it). Claim completion again once it passes.`,
    );
  });

  it.each(required)("blocks when %s passed only before the last edit", (check) => {
    const t = timeline("session:g").verify(check, true).edit("src/a.ts", "one more change");
    for (const other of required.filter((c) => c !== check)) t.verify(other, true);
    const result = claimResult(t.claim(level));
    expect(result.verdict).toBe("block");
    expect(result.message).toBe(
      `Not done yet: ${check} has not run since the last edit (run ${suggested(check)}). Claim completion again once it passes.`,
    );
  });
});

describe("completion-gate: evidence", () => {
  it("names the command last seen running the check rather than the policy's", () => {
    const t = timeline("session:g")
      .verify("tests", false, { command: "pnpm vitest run --reporter=dot" })
      .claim("session");
    expect(claimResult(t).message).toContain(
      "tests is failing (run `pnpm vitest run --reporter=dot` and fix it)",
    );
  });

  it("passes again when the checks are re-run after a further edit", () => {
    const t = editedThenVerified(["tests"]).claim("session").edit("src/a.ts", "a tweak").claim("session");
    t.verify("tests", true).claim("session");
    const claims = replay(defaultPolicy, t.events, only).filter(
      (_, i) => t.events[i]?.kind === "completion.claimed",
    );
    expect(claims.map((d) => gateResult(d).verdict)).toEqual(["allow", "block", "allow"]);
  });

  it("blocks when the last run of a check failed, even though an earlier one passed after the edit", () => {
    const t = editedThenVerified(["tests"]).verify("tests", false).claim("session");
    expect(claimResult(t).message).toContain("tests is failing");
  });

  it("needs no edit at all to pass, only the checks", () => {
    expect(claimResult(timeline("session:g").verify("tests", true).claim("session")).verdict).toBe("allow");
  });

  it("lists every missing check and asks to claim again once they pass", () => {
    const t = timeline("session:g").verify("lint", false).claim("component");
    expect(claimResult(t).message).toBe(
      "Not done yet: tests has not run (run the project's tests); lint is failing (run the project's linter and fix it); component has not run (run the component verification). Claim completion again once they pass.",
    );
  });

  it("follows the checks the policy requires for a level", () => {
    const policy = resolvePolicy({ completion: { required: { session: ["tests", "typecheck"] } } });
    const t = timeline("session:g").verify("tests", true).claim("session");
    expect(claimResult(t, policy).message).toBe(
      "Not done yet: typecheck has not run (run the project's type check). Claim completion again once it passes.",
    );
  });

  it("says nothing about events other than a claim", () => {
    const t = timeline("session:g").edit("src/a.ts", "x").verify("tests", false).ended();
    const results = replay(defaultPolicy, t.events, only).map(gateResult);
    expect(results.map((r) => r.verdict)).toEqual(["allow", "allow", "allow", "allow"]);
  });

  it("blocks an unproven claim in the full engine", () => {
    const decision = replay(defaultPolicy, timeline("session:g").claim("task").events).at(-1);
    expect(decision?.verdict).toBe("block");
    expect(decision?.instructions).toEqual([
      "Not done yet: tests has not run (run the project's tests); task has not run (run the task verification). Claim completion again once they pass.",
    ]);
  });
});

describe("completion-gate: stopping when the agent cannot go on", () => {
  it("lets the agent stop with a warning when the budget is paused", () => {
    const t = timeline("session:g").usage({ inputTokens: 500_000 }).claim("session");
    const result = claimInEngine(t);
    expect(result.verdict).toBe("warn");
    expect(result.message).toBe(
      "Stopping without evidence because the budget is paused: tests has not run (run the project's tests).",
    );
  });

  it("still blocks when the budget is nearly, but not yet, spent", () => {
    const t = timeline("session:g").usage({ inputTokens: 499_999 }).claim("session");
    expect(claimInEngine(t).verdict).toBe("block");
  });

  it("lets the agent stop with a warning when the circuit breaker is open", () => {
    const t = timeline("session:g");
    for (let i = 0; i < 3; i++) t.verify("tests", false);
    const result = claimInEngine(t.claim("session"));
    expect(result.verdict).toBe("warn");
    expect(result.message).toBe(
      "Stopping without evidence because the circuit breaker is open: tests is failing (run the project's tests and fix it).",
    );
  });

  it("still blocks while the breaker is closed, one failed check short of tripping", () => {
    const t = timeline("session:g").verify("tests", false).verify("tests", false).claim("session");
    expect(claimInEngine(t).verdict).toBe("block");
  });
});

describe("completion-gate: bounded refusals and the completion promise", () => {
  it("refuses 5 unproven claims in a row, then lets the 6th stop with the reason", () => {
    const t = timeline("session:s").edit("src/a.ts", "x");
    for (let i = 0; i < 6; i++) t.claim();
    const results = replay(defaultPolicy, t.events, only).slice(-6).map(gateResult);
    expect(results.map((r) => r.verdict)).toEqual(["block", "block", "block", "block", "block", "warn"]);
    expect(results[5]?.message).toContain('"done" was already refused 5 times in a row');
  });

  it("counts refusals again from zero after an accepted claim", () => {
    const t = timeline("session:s").edit("src/a.ts", "x");
    for (let i = 0; i < 4; i++) t.claim();
    t.verify("tests", true).claim().edit("src/a.ts", "y");
    for (let i = 0; i < 5; i++) t.claim();
    const verdicts = replay(resolvePolicy({}), t.events, only)
      .map((d) => gateResult(d).verdict)
      .slice(-5);
    expect(verdicts).toEqual(["block", "block", "block", "block", "block"]);
  });

  it("refuses a claim whose last message lacks the completion promise", () => {
    const policy = resolvePolicy({ completion: { promise: "ALL TESTS GREEN" } });
    const t = timeline("session:s").verify("tests", true);
    t.push({ kind: "completion.claimed", level: "session", promiseMet: false });
    t.push({ kind: "completion.claimed", level: "session", promiseMet: true });
    const [refused, accepted] = replay(policy, t.events, only).slice(-2).map(gateResult);
    expect(refused?.verdict).toBe("block");
    expect(refused?.message).toContain('your last message does not say "ALL TESTS GREEN"');
    expect(accepted?.verdict).toBe("allow");
  });
});
