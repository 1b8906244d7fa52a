/** Tests of the done proof: each clause that must hold before a run ends as done. */
import { describe, expect, it } from "vitest";
import { planNode } from "#test/plans.js";
import { doneProof } from "./done-proof.js";
import { resolveSettings } from "./settings.js";
import { initialRunState } from "./step.js";
import type { ProofClause, RunState, TaskRun } from "./types.js";

/** A run of a, b (needs a) and c, every task done and the report written: the proof holds. */
function finished(): RunState {
  const s = initialRunState({
    kind: "run.started",
    at: 0,
    run: "r",
    nodes: [planNode("a"), planNode("b", { deps: ["a"] }), planNode("c")],
    checks: [],
    settings: resolveSettings(),
  });
  for (const id of ["a", "b", "c"])
    s.tasks[id] = { ...s.tasks[id]!, status: "done", commit: `sha-${id}`, evidence: "witnessed" };
  return { ...s, reportWritten: true, now: 10_000 };
}

const set = (s: RunState, id: string, over: Partial<TaskRun>) => {
  s.tasks[id] = { ...s.tasks[id]!, ...over };
  return s;
};

/** The clauses that fail, with their evidence. */
const broken = (s: RunState) =>
  Object.fromEntries(
    doneProof(s)
      .clauses.filter((c) => !c.holds)
      .map((c): [ProofClause["name"], string] => [c.name, c.evidence]),
  );

describe("the done proof", () => {
  it("holds when every task is over, nothing is in flight or pending, and the report is written", () => {
    const proof = doneProof(finished());
    expect(proof.holds).toBe(true);
    expect(proof.clauses.map((c) => c.name)).toEqual([
      "no_runnable_task",
      "nothing_in_flight",
      "no_retry_pending",
      "graph_stable",
      "every_task_terminal",
      "every_change_witnessed",
      "judges_untouched",
      "changed_judges_approved",
      "every_hunk_witnessed",
      "report_written",
    ]);
  });

  it("does not hold while a done task's checks did not witness its change, naming it and why", () => {
    const s = set(finished(), "a", { evidence: "unwitnessed" });
    delete s.tasks.b!.evidence;
    expect(broken(s)).toEqual({ every_change_witnessed: "not witnessed: a (unwitnessed), b (unverified)" });
    const ok = set(set(finished(), "a", { evidence: "already_done" }), "b", { evidence: "no_behaviour" });
    expect(doneProof(ok).holds).toBe(true);
  });

  it("does not hold while an agent touched what judges its work, naming the task and what it did", () => {
    const s = set(finished(), "b", { tampering: ["the agent wrote the git hook pre-commit: removed"] });
    expect(broken(s)).toEqual({
      judges_untouched:
        "a person must look: the agent touched what judges its work, and reins undid it: b (the agent wrote the git hook pre-commit: removed)",
    });
  });

  it("holds with tasks failed for good and canceled: they are over", () => {
    const s = set(set(finished(), "a", { status: "failed", permanent: true }), "b", { status: "canceled" });
    expect(doneProof(s).holds).toBe(true);
  });

  it("does not hold without the report", () => {
    expect(broken({ ...finished(), reportWritten: false })).toEqual({
      report_written: "no report is written yet",
    });
  });

  it("does not hold while anything is in flight, naming it", () => {
    const s = { ...finished(), inFlight: { "": "write_report" as const } };
    expect(broken(s)).toEqual({ nothing_in_flight: "in flight: run (write_report)" });
  });

  it("does not hold while a retry is pending, naming the task and when", () => {
    const s = set(finished(), "c", { status: "failed", permanent: false, retryAt: 20_000 });
    expect(broken(s)).toEqual({
      no_retry_pending: "retry pending: c (at 20000)",
      every_task_terminal: "open: c (failed)",
    });
  });

  it("does not hold while a task is runnable: a retry due, or ready and not started", () => {
    const s = set(finished(), "c", { status: "failed", permanent: false, retryAt: 5000 });
    expect(broken(s).no_runnable_task).toBe("runnable: c (retry due)");
    const ready = set(finished(), "c", { status: "pending" });
    expect(broken(ready)).toEqual({
      no_runnable_task: "runnable: c (ready)",
      graph_stable: "would change: c (unblocked)",
      every_task_terminal: "open: c (pending)",
    });
  });

  it("does not hold while the graph would still change: a pending task whose dependency failed for good", () => {
    const s = set(set(finished(), "a", { status: "failed", permanent: true }), "b", { status: "pending" });
    expect(broken(s)).toEqual({
      graph_stable: "would change: b (dependency a failed)",
      every_task_terminal: "open: b (pending)",
    });
  });

  it("names a started task with nothing in flight (paused, or out of iterations) as runnable", () => {
    const s = set(finished(), "c", { status: "verifying", fixOnly: true });
    expect(broken(s).no_runnable_task).toBe("runnable: c (verifying, nothing in flight)");
  });

  it("counts every task not over against every_task_terminal, even with nothing runnable", () => {
    const s = set(finished(), "c", { status: "in_progress" });
    s.inFlight = { c: "run_agent" };
    expect(broken(s)).toEqual({
      nothing_in_flight: "in flight: c (run_agent)",
      every_task_terminal: "open: c (in_progress)",
    });
  });
});
