/** Tests of aggregate statuses: a parent's status summed up from its leaves. */
import { describe, expect, it } from "vitest";
import { linked, planNode } from "#test/plans.js";
import { aggregates, noCounts, statusOfCounts, type StatusCounts } from "./aggregate.js";
import { initialTask } from "./task-state.js";
import type { RunState, TaskStatus } from "./types.js";

const counts = (over: Partial<StatusCounts>): StatusCounts => ({ ...noCounts(), ...over });

/** A module m with component c (leaves a, b) and leaf d. */
function state(statuses: Record<"a" | "b" | "d", TaskStatus>): Pick<RunState, "nodes" | "order" | "tasks"> {
  const nodes = linked([
    planNode("m", { kind: "module" }),
    planNode("c", { parent: "m" }),
    planNode("a", { parent: "c" }),
    planNode("b", { parent: "c" }),
    planNode("d", { parent: "m" }),
  ]);
  return {
    nodes: Object.fromEntries(nodes.map((n) => [n.id, n])),
    order: ["m", "c", "a", "b", "d"],
    tasks: Object.fromEntries(
      Object.entries(statuses).map(([id, status]) => [id, { ...initialTask(), status }]),
    ),
  };
}

describe("aggregate status", () => {
  it("a failed leaf makes every ancestor failed, whatever the others", () => {
    const agg = aggregates(state({ a: "failed", b: "done", d: "in_progress" }));
    expect(agg).toMatchObject({ c: "failed", m: "failed" });
  });

  it("a parent is done when all its leaves are done", () => {
    expect(aggregates(state({ a: "done", b: "done", d: "done" }))).toMatchObject({ c: "done", m: "done" });
  });

  it("a parent is pending while none of its leaves started", () => {
    expect(aggregates(state({ a: "pending", b: "pending", d: "done" }))).toMatchObject({
      c: "pending",
      m: "in_progress",
    });
  });

  it("canceled never counts as done: a parent over with a canceled leaf is canceled", () => {
    expect(aggregates(state({ a: "done", b: "canceled", d: "done" }))).toMatchObject({
      c: "canceled",
      m: "canceled",
    });
    expect(statusOfCounts(counts({ canceled: 2 }))).toBe("canceled");
  });

  it("a canceled leaf among pending ones leaves the parent pending; among started ones, in progress", () => {
    expect(statusOfCounts(counts({ pending: 1, canceled: 1 }))).toBe("pending");
    expect(statusOfCounts(counts({ verifying: 1, canceled: 1 }))).toBe("in_progress");
  });

  it("a leaf's aggregate is its own status", () => {
    expect(aggregates(state({ a: "verifying", b: "pending", d: "failed" }))).toMatchObject({
      a: "verifying",
      b: "pending",
      d: "failed",
      c: "in_progress",
    });
  });
});
