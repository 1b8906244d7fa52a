import { describe, expect, it } from "vitest";
import { ReinsError } from "./errors.js";
import { defaultPolicy, resolvePolicy } from "./policy.js";

/** The error `resolvePolicy` throws for `input`; fails the test if it throws none or another kind. */
function rejection(input: unknown, source?: string): ReinsError {
  try {
    resolvePolicy(input, source);
  } catch (error) {
    if (!ReinsError.is(error)) throw error;
    return error;
  }
  throw new Error(`resolvePolicy accepted ${JSON.stringify(input)}`);
}

describe("policy defaults (docs/architecture.md, 'Guards and their default policy')", () => {
  it("budgets 500,000 tokens a session and 100,000 a task, with the per-type task budgets", () => {
    expect(defaultPolicy.budget).toMatchObject({
      mode: "hard",
      session: { tokens: 500_000, usd: null, premiumRequests: null, wallTimeMs: null, toolCalls: null },
      task: { tokens: 100_000 },
      taskTypes: {
        planning: 50_000,
        implement: 100_000,
        review: 30_000,
        test: 50_000,
        deploy: 20_000,
        design: 50_000,
      },
    });
  });

  it("warns at 80%, asks a human at 90% and pauses at 100% of a budget", () => {
    expect(defaultPolicy.budget).toMatchObject({ warnAt: 0.8, askAt: 0.9, pauseAt: 1 });
  });

  it("opens the breaker on 5 identical failing calls or 3 failed checks; advises past 50 calls, denies 40 in 10 s", () => {
    expect(defaultPolicy.circuit).toMatchObject({
      maxCallsPerTask: 50,
      duplicateThreshold: 5,
      rapidFireThreshold: 40,
      rapidFireWindowMs: 10_000,
      failedVerificationThreshold: 3,
      cooldownMs: 60_000,
      autoHalfOpenMs: null,
    });
  });

  it("escalates churn at 2, 3 and 5 consecutive failures", () => {
    expect(defaultPolicy.churn).toEqual({ warningAt: 2, interventionAt: 3, haltAt: 5 });
  });

  it("uses the seeds' thresholds for circular behaviour, quality, thrashing and tool discipline", () => {
    expect(defaultPolicy.circular.threshold).toBe(3);
    expect(defaultPolicy.quality.declines).toBe(3);
    expect(defaultPolicy.thrashing.iterations).toBe(5);
    expect(defaultPolicy.discipline).toEqual({
      repeatedReads: 3,
      repeatedCommandFailures: 3,
      editsWithoutTests: 5,
    });
  });

  it("gates progress after 25 unverified edits and keeps work to fixes while a check is red", () => {
    expect(defaultPolicy.verification).toEqual({ maxEditsWithoutVerification: 25, fixOnlyWhileRed: true });
  });

  it("requires tests and task checks for a task, adds lint for a component and build for a module", () => {
    expect(defaultPolicy.completion.required).toEqual({
      session: ["tests"],
      task: ["tests", "task"],
      component: ["tests", "lint", "component"],
      module: ["tests", "lint", "build", "module"],
    });
    // No command is assumed: the shell fills in the project's own (see base/config/load-policy.ts).
    expect(defaultPolicy.completion.commands).toEqual({});
  });

  it("detects loops at 2 and 3 alternating rounds, 6 near-identical calls and 3 or 5 repeated errors", () => {
    expect(defaultPolicy.loops).toEqual({
      alternatingWarnCycles: 2,
      alternatingBlockCycles: 3,
      nearIdenticalThreshold: 6,
      errorRepeatWarn: 3,
      errorRepeatBlock: 5,
      tools: {},
    });
  });

  it("caps work in progress at 3 tasks, 1,000 unverified lines and 8 retries", () => {
    expect(defaultPolicy.wip).toEqual({
      maxInFlightTasks: 3,
      maxUnverifiedLines: 1_000,
      maxRetriesPerFailureClass: 8,
    });
  });

  it("fails open when the store is down", () => {
    expect(defaultPolicy.failClosed).toBe(false);
  });

  it("is what an empty or missing policy resolves to", () => {
    // defaultPolicy is written out by hand: this keeps it equal to what the schema fills in.
    expect(resolvePolicy({})).toStrictEqual(defaultPolicy);
    expect(resolvePolicy(undefined)).toEqual(defaultPolicy);
    expect(resolvePolicy(null)).toEqual(defaultPolicy);
  });
});

describe("resolvePolicy: overrides", () => {
  it("changes only the fields given and keeps every other default", () => {
    const policy = resolvePolicy({ circuit: { duplicateThreshold: 7 }, budget: { mode: "soft" } });
    expect(policy.circuit).toEqual({ ...defaultPolicy.circuit, duplicateThreshold: 7 });
    expect(policy.budget).toEqual({ ...defaultPolicy.budget, mode: "soft" });
    expect(policy.wip).toEqual(defaultPolicy.wip);
  });

  it("accepts null as an unlimited budget", () => {
    expect(resolvePolicy({ budget: { session: { tokens: null } } }).budget.session.tokens).toBeNull();
  });

  it("accepts per-tool loop settings", () => {
    const policy = resolvePolicy({
      loops: { tools: { BashOutput: { exempt: true, nearIdenticalThreshold: 8 } } },
    });
    expect(policy.loops.tools).toEqual({ BashOutput: { exempt: true, nearIdenticalThreshold: 8 } });
  });

  it("does not change the default policy", () => {
    const before = JSON.stringify(defaultPolicy);
    resolvePolicy({ circuit: { duplicateThreshold: 7 }, loops: { tools: { Bash: { exempt: true } } } });
    expect(JSON.stringify(defaultPolicy)).toBe(before);
  });
});

describe("resolvePolicy: bad values", () => {
  it("throws an invalid_policy ReinsError naming the field, the value given and the allowed range", () => {
    const error = rejection({ circuit: { duplicateThreshold: 1 } });
    expect(error).toBeInstanceOf(ReinsError);
    expect(error.code).toBe("invalid_policy");
    expect(error.message).toBe(
      "invalid policy: circuit.duplicateThreshold: got 1; Too small: expected number to be >=2",
    );
  });

  it("names the expected type when the value has the wrong one", () => {
    const message = rejection({ budget: { warnAt: "high" } }).message;
    expect(message).toContain("budget.warnAt");
    expect(message).toContain('got "high"');
    expect(message).toContain("expected number");
  });

  it("lists the allowed options of an enumeration", () => {
    const message = rejection({ budget: { mode: "medium" } }).message;
    expect(message).toContain('budget.mode: got "medium"');
    expect(message).toContain('expected one of "hard"|"soft"');
  });

  it("rejects a fraction where a whole number is needed", () => {
    const message = rejection({ circular: { threshold: 2.5 } }).message;
    expect(message).toContain("circular.threshold: got 2.5");
    expect(message).toContain("expected int");
  });

  it("names the full path of a field deep in a record", () => {
    const message = rejection({ loops: { tools: { Bash: { exempt: "yes" } } } }).message;
    expect(message).toContain('loops.tools.Bash.exempt: got "yes"');
    expect(message).toContain("expected boolean");
  });

  it("reports every bad field at once", () => {
    const message = rejection({ circuit: { duplicateThreshold: 1 }, wip: { maxInFlightTasks: 0 } }).message;
    expect(message).toContain("circuit.duplicateThreshold: got 1");
    expect(message).toContain("wip.maxInFlightTasks: got 0");
  });

  it("names where the policy came from", () => {
    const message = rejection({ budget: { warnAt: -1 } }, ".reins/policy.json").message;
    expect(message).toMatch(/^invalid \.reins\/policy\.json: budget\.warnAt: got -1; /);
  });

  it("rejects a policy that is not an object", () => {
    expect(rejection(5).message).toBe(
      "invalid policy: (top level): got 5; Invalid input: expected object, received number",
    );
  });

  it.each([
    ["circular.threshold", { circular: { threshold: 1 } }, { circular: { threshold: 2 } }],
    [
      "loops.alternatingBlockCycles",
      { loops: { alternatingBlockCycles: 5 } },
      { loops: { alternatingBlockCycles: 4 } },
    ],
    [
      "loops.nearIdenticalThreshold",
      { loops: { nearIdenticalThreshold: 9 } },
      { loops: { nearIdenticalThreshold: 8 } },
    ],
    ["thrashing.iterations", { thrashing: { iterations: 1 } }, { thrashing: { iterations: 2 } }],
    ["budget.warnAt", { budget: { warnAt: 0 } }, { budget: { warnAt: 0.01 } }],
    [
      "budget.session.tokens",
      { budget: { session: { tokens: -1 } } },
      { budget: { session: { tokens: 0 } } },
    ],
    [
      "wip.maxRetriesPerFailureClass",
      { wip: { maxRetriesPerFailureClass: 0 } },
      { wip: { maxRetriesPerFailureClass: 1 } },
    ],
  ])("rejects %s just past its bound and accepts it at the bound", (field, bad, good) => {
    expect(rejection(bad).message).toContain(`${field}: got`);
    expect(() => resolvePolicy(good)).not.toThrow();
  });
});

describe("resolvePolicy: unknown keys", () => {
  it("rejects an unknown top-level section", () => {
    expect(rejection({ budgett: {} }).message).toBe(
      'invalid policy: (top level): got {"budgett":{}}; Unrecognized key: "budgett"',
    );
  });

  it("rejects an unknown field inside a section, naming the section and the key", () => {
    const message = rejection({ budget: { warn: 0.5 } }).message;
    expect(message).toMatch(/^invalid policy: budget: /);
    expect(message).toContain('Unrecognized key: "warn"');
  });

  it("rejects an unknown per-tool setting", () => {
    const message = rejection({ loops: { tools: { Bash: { exmpt: true } } } }).message;
    expect(message).toContain("loops.tools.Bash: ");
    expect(message).toContain('Unrecognized key: "exmpt"');
  });
});

describe("resolvePolicy: budget thresholds in order", () => {
  it("accepts warnAt <= askAt <= pauseAt, equal values included", () => {
    expect(resolvePolicy({ budget: { warnAt: 0.9, askAt: 0.9, pauseAt: 0.9 } }).budget).toMatchObject({
      warnAt: 0.9,
      askAt: 0.9,
      pauseAt: 0.9,
    });
    expect(() => resolvePolicy({ budget: { warnAt: 0.5, askAt: 1.5, pauseAt: 2 } })).not.toThrow();
  });

  it("rejects warnAt above askAt", () => {
    const message = rejection({ budget: { warnAt: 0.91 } }).message;
    expect(message).toMatch(/^invalid policy: budget: got .*"warnAt":0\.91/);
    expect(message).toContain("must satisfy warnAt <= askAt <= pauseAt");
  });

  it("rejects askAt above pauseAt", () => {
    expect(rejection({ budget: { askAt: 1.01 } }).message).toContain(
      "must satisfy warnAt <= askAt <= pauseAt",
    );
  });

  it("keeps the churn levels in order too", () => {
    expect(rejection({ churn: { warningAt: 4 } }).message).toContain(
      "must satisfy warningAt <= interventionAt <= haltAt",
    );
    expect(() => resolvePolicy({ churn: { warningAt: 3, interventionAt: 3, haltAt: 3 } })).not.toThrow();
  });

  it("adds to the default task types instead of replacing them, and takes the commands given", () => {
    const policy = resolvePolicy({
      budget: { taskTypes: { spike: 10_000 } },
      completion: { commands: { tests: "pnpm test" } },
    });
    expect(policy.budget.taskTypes).toMatchObject({ spike: 10_000, review: 30_000, planning: 50_000 });
    expect(policy.completion.commands).toEqual({ tests: "pnpm test" });
  });
});

describe("resolvePolicy: the oracle", () => {
  it("is off by default, through claude's haiku when enabled", () => {
    expect(resolvePolicy({}).oracle).toEqual({
      enabled: false,
      via: "claude",
      model: null,
      url: null,
      apiKeyEnv: null,
      timeoutMs: 60_000,
      maxDiffBytes: 24 * 1024,
    });
    expect(resolvePolicy({ oracle: { enabled: true } }).oracle.enabled).toBe(true);
  });

  it("takes an endpoint with its model, URL and key variable", () => {
    const oracle = resolvePolicy({
      oracle: {
        enabled: true,
        via: "openai",
        model: "gpt-5-mini",
        url: "http://127.0.0.1:8080/v1",
        apiKeyEnv: "MY_KEY",
      },
    }).oracle;
    expect(oracle).toMatchObject({ via: "openai", model: "gpt-5-mini", url: "http://127.0.0.1:8080/v1" });
  });

  it("rejects an enabled endpoint without a model, an unknown via, a bad URL or key variable", () => {
    expect(rejection({ oracle: { enabled: true, via: "anthropic" } }).message).toContain(
      "an endpoint oracle (via anthropic or openai) needs a model",
    );
    expect(() => resolvePolicy({ oracle: { via: "anthropic" } })).not.toThrow();
    expect(rejection({ oracle: { via: "copilot" } }).message).toContain("oracle.via");
    expect(rejection({ oracle: { url: "file:///etc/passwd" } }).message).toContain("oracle.url");
    expect(rejection({ oracle: { apiKeyEnv: "A-B" } }).message).toContain("oracle.apiKeyEnv");
    expect(rejection({ oracle: { timeoutMs: 10 } }).message).toContain("oracle.timeoutMs");
  });
});
