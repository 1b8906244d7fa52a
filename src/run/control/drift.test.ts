/** Spec drift in the control core: what `spec.changed` does to work done, under way, or not started. */
import { describe, expect, it } from "vitest";
import { planNode } from "#test/plans.js";
import { doneProof } from "./done-proof.js";
import { resolveSettings } from "./settings.js";
import { begin, step, type StepResult } from "./step.js";
import { canReopen, canTransition } from "./task-state.js";
import type { CheckDef, CheckResult, PlanNode, RunAction, RunEvent, RunState } from "./types.js";

const node = planNode;

const unit: CheckDef = { name: "unit", command: "npm test", tier: "fast", format: "exit", timeoutMs: 1000 };

const result = (passed: boolean): CheckResult => ({
  name: "unit",
  tier: "fast",
  passed,
  exitCode: passed ? 0 : 1,
  failedTests: [],
  output: passed ? "" : "1 failed",
  durationMs: 5,
});

const SECTION = "spec.md#Accounts > Sign up";

/** A run driven by hand, every answer carrying the ref of the action in flight. */
class Run {
  state: RunState;
  last: StepResult;
  private t = 0;

  constructor(nodes: PlanNode[], checks: CheckDef[] = [unit]) {
    // Every leaf names the check, so its no-op check and its witness have something to go on.
    const named = nodes.map((n) =>
      n.children.length === 0 && n.checks.length === 0 && checks.length > 0
        ? { ...n, checks: [checks[0]!.name] }
        : n,
    );
    this.last = begin({
      kind: "run.started",
      at: 0,
      run: "r",
      nodes: named,
      checks,
      settings: resolveSettings({}),
    });
    this.state = this.last.state;
  }

  feed(event: RunEvent): StepResult {
    this.last = step(this.state, event);
    this.state = this.last.state;
    return this.last;
  }

  private ref(key: string): number {
    const ref = this.state.refs[key];
    if (ref === undefined) throw new Error(`nothing in flight for ${key || "the run"}`);
    return ref;
  }

  private at(): number {
    return (this.t += 1000);
  }

  /** The actions of the last step as `kind:task`. */
  get handed(): string[] {
    return this.last.actions.map((a) => ("task" in a ? `${a.kind}:${a.task}` : a.kind));
  }

  action(kind: RunAction["kind"]): RunAction | undefined {
    return this.last.actions.find((a) => a.kind === kind);
  }

  noop(task: string, passed: boolean) {
    return this.feed({
      kind: "noop.checked",
      at: this.at(),
      ref: this.ref(task),
      task,
      results: [result(passed)],
    });
  }

  agent(task: string) {
    return this.feed({
      kind: "agent.finished",
      at: this.at(),
      ref: this.ref(task),
      task,
      attempt: this.state.tasks[task]!.attempts,
      outcome: "ok",
      turns: 1,
      tokens: 100,
      costUsd: 0.01,
      summary: "ok",
      linesChanged: 3,
      filesChanged: ["a.ts"],
      boundaryTouched: false,
    });
  }

  checks(task: string, passed: boolean) {
    return this.feed({
      kind: "checks.ran",
      at: this.at(),
      ref: this.ref(task),
      task,
      results: [result(passed)],
    });
  }

  /** Answers the witness in flight for `task`: with its change set aside, the check goes red. */
  witness(task: string) {
    return this.feed({
      kind: "witness.ran",
      at: this.at(),
      ref: this.ref(task),
      task,
      setAside: ["a.ts"],
      results: [result(false)],
    });
  }

  committed(task: string, commit = `sha-${task}`) {
    if (this.state.inFlight[task] === "witness") this.witness(task);
    return this.feed({ kind: "task.committed", at: this.at(), ref: this.ref(task), task, commit });
  }

  /** Drives `task` from its no-op check to its commit, all green. */
  complete(task: string, commit?: string) {
    this.noop(task, false);
    this.agent(task);
    this.checks(task, true);
    return this.committed(task, commit);
  }

  drift(tasks: string[], sections = [SECTION]) {
    return this.feed({ kind: "spec.changed", at: this.at(), sections, tasks });
  }
}

describe("spec drift", () => {
  it("reopens a done task: done → pending with the section as why, its history and spend kept", () => {
    const run = new Run([node("a"), node("b", { deps: ["a"] })]);
    run.complete("a");
    const before = run.state.tasks.a!;
    const r = run.drift(["a"]);
    expect(r.decisions[0]).toEqual({
      kind: "transition",
      task: "a",
      from: "done",
      to: "pending",
      why: `reopened: spec section ${SECTION} changed`,
    });
    expect(run.state.tasks.a).toMatchObject({
      status: "pending",
      attempts: before.attempts,
      tokens: before.tokens,
      costUsd: before.costUsd,
      commit: "sha-a",
      specChanged: [SECTION],
      reason: `reopened: spec section ${SECTION} changed`,
    });
  });

  it("redoes a reopened task with an iteration told of the change, never a no-op check, and commits it again", () => {
    const run = new Run([node("a")]);
    run.complete("a");
    // Nothing else to do: the run was writing its report when the spec changed.
    expect(run.handed).toEqual(["write_report"]);
    run.drift(["a"]);
    expect(run.handed).toEqual(["run_agent:a"]);
    expect(run.action("run_agent")).toMatchObject({ attempt: 2, mode: "implement", specChanged: [SECTION] });
    expect(run.state.tasks.a!.specChanged).toBeUndefined();
    run.agent("a");
    run.checks("a", true);
    run.committed("a", "sha-a2");
    expect(run.state.tasks.a).toMatchObject({ status: "done", commit: "sha-a2", attempts: 2 });
    expect(run.handed).toEqual(["write_report"]);
  });

  it("never lets the done proof hold while a reopened task is pending", () => {
    const run = new Run([node("a"), node("b")]);
    run.complete("a");
    // b's no-op check is in flight and WIP is 1: reopened a waits, pending.
    run.drift(["a"]);
    expect(run.state.tasks.a!.status).toBe("pending");
    const proof = doneProof({ ...run.state, inFlight: {}, refs: {}, reportWritten: true });
    expect(proof.holds).toBe(false);
    expect(proof.clauses.find((c) => c.name === "every_task_terminal")?.evidence).toContain("a (pending)");
    expect(proof.clauses.find((c) => c.name === "no_runnable_task")?.evidence).toContain("a (ready)");
  });

  it("tells a task at work in its next iteration, and does not commit it before one", () => {
    const run = new Run([node("a")]);
    run.noop("a", false);
    expect(run.state.tasks.a!.status).toBe("in_progress");
    const r = run.drift(["a"]);
    expect(r.decisions).toEqual([
      {
        kind: "drift",
        task: "a",
        sections: [SECTION],
        why: `spec section ${SECTION} changed while it was at work: its next iteration is told, and it is not committed before one`,
      },
    ]);
    expect(r.actions).toEqual([]);
    run.agent("a");
    // Green, but the iteration that just ended may have read the old spec: one more, told, instead of the commit.
    run.checks("a", true);
    expect(run.handed).toEqual(["run_agent:a"]);
    expect(run.action("run_agent")).toMatchObject({ attempt: 2, specChanged: [SECTION] });
    run.agent("a");
    run.checks("a", true);
    expect(run.handed).toEqual(["witness:a"]);
  });

  it("tells a red task's fix iteration, which then suffices for the commit", () => {
    const run = new Run([node("a")]);
    run.noop("a", false);
    run.agent("a");
    run.drift(["a"]);
    run.checks("a", false);
    expect(run.action("run_agent")).toMatchObject({ mode: "fix", specChanged: [SECTION] });
    run.agent("a");
    run.checks("a", true);
    expect(run.handed).toEqual(["witness:a"]);
  });

  it("changes nothing for a task not started: it reads the spec when it starts, after its no-op check", () => {
    const run = new Run([node("a"), node("b")]);
    const r = run.drift(["b"]);
    expect(r.decisions.filter((d) => d.kind !== "held")).toEqual([
      {
        kind: "drift",
        task: "b",
        sections: [SECTION],
        why: `spec section ${SECTION} changed; not started, it reads the spec when it starts`,
      },
    ]);
    expect(run.state.tasks.b).toEqual(
      begin({
        kind: "run.started",
        at: 0,
        run: "r",
        nodes: [node("a"), node("b")],
        checks: [unit],
        settings: resolveSettings({}),
      }).state.tasks.b,
    );
  });

  it("takes a parent for its leaves, and reopens only the done ones among them", () => {
    const nodes = [
      node("m", { kind: "module", children: ["t1", "t2"] }),
      node("t1", { parent: "m" }),
      node("t2", { parent: "m" }),
      node("other"),
    ];
    const run = new Run(nodes);
    run.complete("t1");
    run.noop("t2", false);
    const r = run.drift(["m"], ["spec.md#A", "spec.md#A > B"]);
    const told = r.decisions.filter((d) => d.kind !== "held");
    expect(told.map((d) => [d.kind, "task" in d ? d.task : ""])).toEqual([
      ["transition", "t1"],
      ["drift", "t2"],
    ]);
    expect(r.decisions[0]).toMatchObject({ why: "reopened: spec sections spec.md#A, spec.md#A > B changed" });
    expect(run.state.tasks.other!.status).toBe("pending");
  });

  it("adds up the sections a task is told of across changes, each once", () => {
    const run = new Run([node("a")]);
    run.noop("a", false);
    run.drift(["a"], ["spec.md#X"]);
    run.drift(["a"], ["spec.md#Y", "spec.md#X"]);
    expect(run.state.tasks.a!.specChanged).toEqual(["spec.md#X", "spec.md#Y"]);
  });

  it("ignores a change naming no task, no section, a node outside the plan, or coming after the end", () => {
    const run = new Run([node("a")]);
    expect(run.drift([]).decisions).toEqual([
      { kind: "ignored", event: "spec.changed", why: "no task implements the changed sections" },
    ]);
    expect(run.drift(["a"], []).decisions[0]).toMatchObject({ why: "no section changed" });
    expect(run.drift(["zz"]).decisions[0]).toMatchObject({ why: "zz is not in the plan" });
    run.complete("a");
    run.feed({ kind: "report.written", at: 99_000, ref: run.state.refs[""]!, path: "report.md" });
    expect(run.state.finished).toEqual({ proven: true });
    expect(run.drift(["a"]).decisions[0]).toMatchObject({ kind: "ignored", why: "the run has finished" });
  });

  it("leaves terminal tasks that failed or were canceled alone", () => {
    const run = new Run([node("a"), node("b")]);
    run.feed({ kind: "task.canceled", at: 1, task: "b", by: "me", reason: "not needed" });
    const r = run.drift(["b"]);
    expect(r.decisions).toEqual([
      expect.objectContaining({
        kind: "drift",
        task: "b",
        why: expect.stringContaining("canceled, nothing to redo"),
      }),
    ]);
    expect(run.state.tasks.b!.status).toBe("canceled");
  });

  it("on resume, does not take the commit that closed a reopened task before for a new one", () => {
    const run = new Run([node("a")]);
    run.complete("a", "sha-old");
    run.drift(["a"]);
    expect(run.state.tasks.a!.status).toBe("in_progress");
    run.feed({ kind: "run.resumed", at: 50_000, commits: { a: "sha-old" } });
    expect(run.state.tasks.a!.status).toBe("verifying");
    run.feed({ kind: "run.resumed", at: 60_000, commits: { a: "sha-new" } });
    expect(run.state.tasks.a).toMatchObject({ status: "done", commit: "sha-new" });
  });

  it("is pure: the state passed in is not touched, and the same input gives the same output", () => {
    const run = new Run([node("a")]);
    run.complete("a");
    const frozen = JSON.stringify(run.state);
    const event: RunEvent = { kind: "spec.changed", at: 10_000, sections: [SECTION], tasks: ["a"] };
    const one = step(run.state, event);
    expect(JSON.stringify(run.state)).toBe(frozen);
    expect(JSON.stringify(step(run.state, event))).toBe(JSON.stringify(one));
  });
});

describe("the reopen transition", () => {
  it("is done → pending only, and only for drift: the run's own flow still never leaves done", () => {
    const all = ["pending", "in_progress", "verifying", "done", "failed", "canceled"] as const;
    for (const from of all)
      for (const to of all) expect(canReopen(from, to)).toBe(from === "done" && to === "pending");
    for (const to of all) expect(canTransition("done", false, to)).toBe(false);
  });
});

describe("spec drift while a commit is being made", () => {
  it("keeps the commit but does not call the task done: one more iteration, told, then a new commit", () => {
    const run = new Run([node("a")]);
    run.noop("a", false);
    run.agent("a");
    run.checks("a", true);
    run.witness("a");
    expect(run.handed).toEqual(["commit:a"]);
    run.drift(["a"]);
    const r = run.committed("a", "sha-1");
    expect(r.decisions.filter((d) => d.kind === "transition")).toEqual([
      {
        kind: "transition",
        task: "a",
        from: "verifying",
        to: "in_progress",
        why: `committed sha-1, but spec ${SECTION} changed since its work began`,
      },
    ]);
    expect(run.state.tasks.a).toMatchObject({ status: "in_progress", commit: "sha-1" });
    expect(run.action("run_agent")).toMatchObject({ specChanged: [SECTION] });
    run.agent("a");
    run.checks("a", true);
    run.committed("a", "sha-2");
    expect(run.state.tasks.a).toMatchObject({ status: "done", commit: "sha-2" });
  });

  it("on resume, a commit found for a task told of a change is kept and its tree verified, not taken for done", () => {
    const run = new Run([node("a")]);
    run.noop("a", false);
    run.agent("a");
    run.checks("a", true);
    run.drift(["a"]);
    run.feed({ kind: "run.resumed", at: 50_000, commits: { a: "sha-1" } });
    expect(run.state.tasks.a).toMatchObject({ status: "verifying", commit: "sha-1", specChanged: [SECTION] });
    expect(run.handed).toEqual(["run_checks:a"]);
  });
});
