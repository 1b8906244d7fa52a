import { describe, expect, it } from "vitest";
import type { Decision } from "../decision.js";
import { advance } from "../engine.js";
import { pipeline } from "../pipeline.js";
import type { UsageRecorded } from "../reins-event.js";
import { resolvePolicy, type PolicyInput } from "../policy.js";
import { initialState } from "../state.js";
import { timeline } from "../timeline.js";
import { spendRate } from "./spend-rate.js";

const only = pipeline([spendRate]);
const minute = 60_000;

type Usage = Omit<UsageRecorded, "kind" | "at" | "scope">;

/** A session run through the spend-rate guard alone, its first event at time 0. */
function drive(input: PolicyInput = {}) {
  const policy = resolvePolicy(input);
  const t = timeline("session:s");
  const state = initialState(t.scope);
  /** Records usage at `at` ms and returns its decision. */
  const spend = (at: number, usage: Usage): Decision => {
    t.now = at;
    const event = t.usage(usage).events.at(-1)!;
    return advance(state, event, policy, only);
  };
  return { state, spend };
}

/** A session that spent `perWindow` tokens in each of its first five one-minute windows (0..4). */
function withBaseline(perWindow: number, input: PolicyInput = {}) {
  const s = drive(input);
  for (let w = 0; w < 5; w++) s.spend(w * minute, { inputTokens: perWindow });
  return s;
}

/** The decision for `tokens` spent in window 5 after a steady baseline of `perWindow` tokens a window. */
function burst(perWindow: number, tokens: number): Decision {
  return withBaseline(perWindow).spend(5 * minute + 1_000, { inputTokens: tokens });
}

describe("spend-rate guard", () => {
  describe("bursts against the session's own baseline", () => {
    it.each([
      [24_999, "allow"],
      [25_000, "allow"],
      [25_001, "warn"],
    ] as const)("answers %i tokens in a window after a baseline of 5,000 with %s", (tokens, verdict) => {
      expect(burst(5_000, tokens).verdict).toBe(verdict);
    });

    it("says how far the window is above the recent rate, without asking a human", () => {
      const decision = burst(5_000, 50_000);
      expect(decision.verdict).toBe("warn");
      expect(decision.needsHuman).toBe(false);
      expect(decision.alerts.map((a) => a.kind)).toEqual(["spend_rate"]);
      expect(decision.instructions).toEqual([
        "Token spend jumped to 50,000 in the last 1m, 10x the session's recent rate of 5,000. Check for a runaway loop or an oversized context before going on.",
      ]);
    });

    it("warns once per window, and again in a later window that bursts", () => {
      const s = withBaseline(5_000);
      expect(s.spend(5 * minute, { inputTokens: 30_000 }).verdict).toBe("warn");
      expect(s.state.rate.firedWindow).toBe(5);
      expect(s.spend(5 * minute + 30_000, { inputTokens: 30_000 }).verdict).toBe("allow");
      // Windows 1..5 now average (4 × 5,000 + 60,000) / 5 = 16,000 tokens: the burst line is 80,000.
      expect(s.spend(6 * minute, { inputTokens: 80_000 }).verdict).toBe("allow");
      expect(s.spend(6 * minute + 1_000, { inputTokens: 1 }).verdict).toBe("warn");
      expect(s.state.rate.firedWindow).toBe(6);
    });

    it("ignores bursts below the minimum of 20,000 tokens a window", () => {
      expect(burst(100, 19_999).verdict).toBe("allow");
      const decision = burst(100, 20_000);
      expect(decision.verdict).toBe("warn");
      expect(decision.instructions[0]).toContain("200x the session's recent rate of 100");
    });

    it("measures the baseline over the last five windows only", () => {
      const s = drive();
      s.spend(0, { inputTokens: 1_000_000 });
      for (let w = 1; w <= 5; w++) s.spend(w * minute, { inputTokens: 1_000 });
      const decision = s.spend(6 * minute, { inputTokens: 20_000 });
      expect(decision.verdict).toBe("warn");
      expect(decision.instructions[0]).toContain("20x the session's recent rate of 1,000");
    });

    it("counts idle windows as zero, so a burst after a quiet spell is far above the baseline", () => {
      const s = drive();
      s.spend(0, { inputTokens: 0 });
      const decision = s.spend(5 * minute, { inputTokens: 20_000 });
      expect(decision.verdict).toBe("warn");
      expect(decision.instructions[0]).toContain("far above the session's recent rate of 0");
    });

    it("has no baseline in a session younger than its five baseline windows", () => {
      const young = drive();
      young.spend(0, { inputTokens: 100 });
      expect(young.spend(4 * minute + 59_999, { inputTokens: 1_000_000 }).verdict).toBe("allow");

      // Started 1 ms into window 0: window 5 has only four full windows behind it, window 6 has five.
      const startedLate = () => {
        const s = drive();
        s.spend(1, { inputTokens: 100 });
        return s;
      };
      expect(startedLate().spend(5 * minute, { inputTokens: 1_000_000 }).verdict).toBe("allow");
      expect(startedLate().spend(6 * minute, { inputTokens: 1_000_000 }).verdict).toBe("warn");
    });

    it("follows the policy's window, baseline length, factor and minimum", () => {
      const s = drive({ spendRate: { windowMs: 10_000, baselineWindows: 2, burstFactor: 2, minTokens: 0 } });
      s.spend(0, { inputTokens: 100 });
      s.spend(10_000, { inputTokens: 100 });
      expect(s.spend(20_000, { inputTokens: 200 }).verdict).toBe("allow");
      const decision = s.spend(25_000, { inputTokens: 1 });
      expect(decision.verdict).toBe("warn");
      expect(decision.instructions[0]).toContain("Token spend jumped to 201 in the last 10s");
    });
  });

  describe("ceilings", () => {
    it("asks a human once a window spends more than maxTokensPerWindow, even in a young session", () => {
      const s = drive({ spendRate: { maxTokensPerWindow: 10_000 } });
      expect(s.spend(0, { inputTokens: 6_000 }).verdict).toBe("allow");
      expect(s.spend(1_000, { inputTokens: 4_000 }).verdict).toBe("allow");
      const over = s.spend(2_000, { outputTokens: 1 });
      expect(over.verdict).toBe("warn");
      expect(over.needsHuman).toBe(true);
      expect(over.alerts.map((a) => a.kind)).toEqual(["spend_rate"]);
      expect(over.instructions).toEqual([
        "The session spent 10,001 tokens in the last 1m, over the ceiling of 10,000. Slow down: a person must confirm before work goes on.",
      ]);
      expect(s.spend(3_000, { inputTokens: 50_000 }).verdict).toBe("allow");
    });

    it("asks again in the next window that goes over the ceiling", () => {
      const s = drive({ spendRate: { maxTokensPerWindow: 10_000 } });
      expect(s.spend(0, { inputTokens: 10_001 }).needsHuman).toBe(true);
      expect(s.spend(minute, { inputTokens: 10_000 }).verdict).toBe("allow");
      expect(s.spend(2 * minute, { inputTokens: 10_001 }).needsHuman).toBe(true);
    });

    it("asks a human once a window costs more than maxUsdPerWindow", () => {
      const s = drive({ spendRate: { maxUsdPerWindow: 1 } });
      expect(s.spend(0, { costUsd: 1 }).verdict).toBe("allow");
      const over = s.spend(1_000, { costUsd: 0.01 });
      expect([over.verdict, over.needsHuman]).toEqual(["warn", true]);
      expect(over.instructions[0]).toBe(
        "The session spent $1.01 in the last 1m, over the ceiling of $1.00. Slow down: a person must confirm before work goes on.",
      );
    });

    it("judges only usage events", () => {
      const policy = resolvePolicy({ spendRate: { maxTokensPerWindow: 10 } });
      const t = timeline("session:s").usage({ inputTokens: 0 }).bash("npm test").verify("tests", true);
      const state = initialState(t.scope);
      const decisions = t.events.map((event) => advance(state, event, policy, only));
      expect(decisions.every((d) => d.verdict === "allow" && d.results[0]?.verdict === "allow")).toBe(true);
    });
  });
});
