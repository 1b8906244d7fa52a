import { describe, expect, it } from "vitest";
import { defaultGuards } from "./guards/index.js";
import { pipeline } from "./pipeline.js";
import { defaultPolicy, resolvePolicy } from "./policy.js";
import { initialState } from "./state.js";
import { TALLY_TOOLS, tallyOf } from "./tally.js";
import { driver } from "#test/drive.js";

const all = pipeline(defaultGuards);

describe("tally (the running totals metrics are derived from)", () => {
  it("counts the agent, tokens by type, cost, tools and decisions by verdict and guard", () => {
    const { state, steps } = driver(defaultPolicy, all);
    steps((t) =>
      t
        .started("claude")
        .usage({ inputTokens: 100, outputTokens: 20, cacheReadTokens: 7, cacheWriteTokens: 3, costUsd: 0.1 })
        .usage({ inputTokens: 1, costUsd: 0.7 })
        .read("a.ts")
        .bash("ls"),
    );
    const t = tallyOf(state);
    expect(t.agent).toBe("claude");
    expect(t.tokens).toEqual({ input: 101, output: 20, cacheRead: 7, cacheWrite: 3 });
    expect(t.usd).toBe(0.8);
    expect(t.tools).toEqual({ Read: 1, Bash: 1 });
    // started, 2 usage, and a request plus a completion per call: all allowed.
    expect(t.decisions).toEqual({ "allow none": 7 });
  });

  it("counts a pause once as an alert and the blocks after it under the budget guard", () => {
    const policy = resolvePolicy({ budget: { session: { tokens: 1_000 } } });
    const { state, steps } = driver(policy, all);
    steps((t) => t.usage({ inputTokens: 1_000 }).bash("ls").bash("ls -la"));
    const t = tallyOf(state);
    expect(t.alerts.budget_paused).toBe(1);
    expect(t.decisions["block budget"]).toBeGreaterThanOrEqual(2);
  });

  it("counts a breaker trip under its reason", () => {
    const { state, steps } = driver(defaultPolicy, all);
    steps((t) => {
      for (let i = 0; i < 12; i++) t.bash("npm test", { ok: false, exitCode: 1, output: "1 failed" });
    });
    const t = tallyOf(state);
    expect(state.breaker.trips).toBeGreaterThan(0);
    expect(Object.values(t.trips).reduce((a, b) => a + b, 0)).toBe(state.breaker.trips);
    expect(t.trips[state.breaker.reason ?? ""]).toBeGreaterThan(0);
    expect(t.alerts.circuit_tripped).toBe(state.breaker.trips);
  });

  it(`names at most ${TALLY_TOOLS} tools; the rest count as "other"`, () => {
    const { state, steps } = driver(defaultPolicy, all);
    steps((t) => {
      for (let i = 0; i < TALLY_TOOLS + 10; i++) t.call(`mcp__tool_${i}`, { i }, {}, null);
    });
    const t = tallyOf(state);
    expect(Object.keys(t.tools)).toHaveLength(TALLY_TOOLS + 1);
    expect(t.tools.other).toBe(10);
  });

  it("starts from zero for a snapshot written before tallies existed", () => {
    const old = initialState("session:old");
    delete old.tally;
    const restored = JSON.parse(JSON.stringify(old)) as typeof old;
    expect(tallyOf(restored).decisions).toEqual({});
    expect(restored.tally).toBeDefined();
  });
});
