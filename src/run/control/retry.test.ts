/** Tests of retries: what a failed attempt leads to. */
import { describe, expect, it } from "vitest";
import { backoffMs, judgeFailure } from "./retry.js";
import { resolveSettings } from "./settings.js";
import { initialTask } from "./task-state.js";

const settings = resolveSettings();

describe("retries", () => {
  it("backs off base × 2^(n-1), capped at max", () => {
    const b = { baseMs: 2000, maxMs: 60_000 };
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffMs(b, n))).toEqual([
      2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000,
    ]);
    expect(backoffMs(b, 10_000)).toBe(60_000);
    expect(backoffMs({ baseMs: 0, maxMs: 0 }, 10_000)).toBe(0);
  });

  it("red checks get a fix iteration at once while the checks budget lasts", () => {
    const task = { ...initialTask(), attempts: 1, failures: { ...initialTask().failures, checks: 4 } };
    expect(judgeFailure(task, "checks", settings, 100)).toEqual({ kind: "fix" });
    task.failures.checks = 5;
    expect(judgeFailure(task, "checks", settings, 100)).toEqual({
      kind: "give_up",
      why: "checks retries spent (4 of 4)",
    });
  });

  it("an agent failure is retried after the backoff of its class's failure count", () => {
    const task = { ...initialTask(), attempts: 1, failures: { ...initialTask().failures, agent: 2 } };
    expect(judgeFailure(task, "agent", settings, 1000)).toEqual({ kind: "retry", at: 5000 });
    task.failures.agent = 3;
    expect(judgeFailure(task, "agent", settings, 1000).kind).toBe("give_up");
  });

  it("gives up once the attempts are spent, whatever the class budget", () => {
    const task = { ...initialTask(), attempts: 5, failures: { ...initialTask().failures, transient: 1 } };
    expect(judgeFailure(task, "transient", settings, 0)).toEqual({
      kind: "give_up",
      why: "attempts spent (5 of 5)",
    });
  });
});
