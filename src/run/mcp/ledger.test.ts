/** Tests of folding what reins' MCP tools remember from the plan scope's events. */
import { describe, expect, it } from "vitest";
import type { LogRecord } from "../../base/core/batch.js";
import { foldLedger, memoOf, startOf, type PlanEvent } from "./ledger.js";

const log = (events: PlanEvent[]): LogRecord[] =>
  events.map((event, seq) => ({
    scope: "plan:p",
    seq,
    event: { ...event, scope: "plan:p" },
    decision: { seq, verdict: "allow", needsHuman: false, results: [], instructions: [], alerts: [] },
  }));

describe("foldLedger", () => {
  it("folds statuses, the first start's base and the last verdict of each node", () => {
    const ledger = foldLedger(
      log([
        { kind: "task.started", at: 1, task: "a", commit: "c1" },
        { kind: "verification.ran", at: 2, task: "a", name: "unit", passed: false },
        { kind: "verification.ran", at: 2, task: "a", name: "task:a", passed: false, fingerprint: "t1" },
        { kind: "task.ended", at: 3, task: "a", status: "failed" },
        { kind: "task.started", at: 4, task: "a", commit: "c2" },
        { kind: "verification.ran", at: 5, task: "a", name: "task:a", passed: true, fingerprint: "t2" },
        { kind: "task.ended", at: 6, task: "a", status: "done" },
        { kind: "task.ended", at: 7, task: "b", status: "canceled" },
      ]),
    );
    expect(memoOf(ledger, "a")).toEqual({
      status: "complete",
      base: "c1",
      startedAt: 1,
      verify: { passed: true, fingerprint: "t2", at: 5 },
    });
    expect(memoOf(ledger, "b").status).toBe("canceled");
    expect(memoOf(ledger, "c")).toEqual({ status: "pending", base: null, startedAt: null, verify: null });
  });

  it("takes a verdict only from its own node's verify: a check's event or another node's name is not one", () => {
    const ledger = foldLedger(
      log([
        { kind: "verification.ran", at: 1, task: "a", name: "task", passed: true },
        { kind: "verification.ran", at: 1, task: "a", name: "task:b", passed: true },
        { kind: "verification.ran", at: 1, task: "__proto__", name: "task:__proto__", passed: true },
      ]),
    );
    expect(memoOf(ledger, "a").verify).toBeNull();
    expect(memoOf(ledger, "__proto__").verify?.passed).toBe(true);
    expect(memoOf(ledger, "constructor").status).toBe("pending");
  });

  it("bases a parent's diff on the first of it and its children to start", () => {
    const ledger = foldLedger(
      log([
        { kind: "task.started", at: 5, task: "late", commit: "c5" },
        { kind: "task.started", at: 2, task: "early", commit: "c2" },
        { kind: "task.started", at: 1, task: "no-commit" },
      ]),
    );
    expect(startOf(ledger, ["parent", "late", "early", "no-commit"])).toBe("c2");
    expect(startOf(ledger, ["parent"])).toBeNull();
  });
});
