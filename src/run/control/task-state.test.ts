/** Tests of a unit of work's statuses and the transitions between them. */
import { describe, expect, it } from "vitest";
import { ReinsError } from "../../base/core/errors.js";
import { assertTransition, canTransition, initialTask, isTerminal } from "./task-state.js";
import type { TaskStatus } from "./types.js";

const ALL: TaskStatus[] = ["pending", "in_progress", "verifying", "done", "failed", "canceled"];

describe("task states", () => {
  it("a task starts pending with nothing tried and no budget spent", () => {
    expect(initialTask()).toMatchObject({
      status: "pending",
      attempts: 0,
      failures: { checks: 0, agent: 0, transient: 0, conflict: 0 },
      fixOnly: false,
      commit: null,
    });
  });

  it("done, canceled and a permanent failure are terminal; a retryable failure is not", () => {
    expect(isTerminal({ status: "done", permanent: false })).toBe(true);
    expect(isTerminal({ status: "canceled", permanent: false })).toBe(true);
    expect(isTerminal({ status: "failed", permanent: true })).toBe(true);
    expect(isTerminal({ status: "failed", permanent: false })).toBe(false);
    for (const s of ["pending", "in_progress", "verifying"] as const)
      expect(isTerminal({ status: s, permanent: false })).toBe(false);
  });

  it("nothing leaves a terminal status", () => {
    for (const to of ALL) {
      expect(canTransition("done", false, to)).toBe(false);
      expect(canTransition("canceled", false, to)).toBe(false);
      expect(canTransition("failed", true, to)).toBe(false);
    }
  });

  it("follows the flow of a unit of work: pending → in_progress → verifying → done, red back to in_progress", () => {
    expect(canTransition("pending", false, "in_progress")).toBe(true);
    expect(canTransition("in_progress", false, "verifying")).toBe(true);
    expect(canTransition("verifying", false, "in_progress")).toBe(true);
    expect(canTransition("verifying", false, "done")).toBe(true);
    expect(canTransition("failed", false, "in_progress")).toBe(true);
  });

  it("never skips verification: an iteration cannot go straight from pending to verifying or fail before it ran", () => {
    expect(canTransition("pending", false, "verifying")).toBe(false);
    expect(canTransition("pending", false, "failed")).toBe(false);
    expect(canTransition("in_progress", false, "pending")).toBe(false);
    expect(canTransition("verifying", false, "pending")).toBe(false);
  });

  it("throws invalid_transition naming the task and both statuses for a move the table forbids", () => {
    let error: unknown;
    try {
      assertTransition("t1", { status: "failed", permanent: true }, "in_progress");
    } catch (e) {
      error = e;
    }
    expect(ReinsError.is(error) && error.code).toBe("invalid_transition");
    expect((error as Error).message).toBe("task t1 cannot go from failed (permanent) to in_progress");
  });
});
