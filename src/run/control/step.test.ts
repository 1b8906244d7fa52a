/** The control loop, event by event: the flows of /tmp/drive-design.md "Semantics", driven by hand. */
import { describe, expect, it } from "vitest";
import { linked, planNode } from "#test/plans.js";
import { ReinsError } from "../../base/core/errors.js";
import { resolveSettings, type RunSettingsInput } from "./settings.js";
import { outcomeOf } from "./outcome.js";
import { begin, initialRunState, step, type StepResult } from "./step.js";
import type { CheckDef, CheckResult, CheckTier, PlanNode, RunAction, RunEvent, RunState } from "./types.js";

const check = (name: string, tier: CheckTier = "fast"): CheckDef => ({
  name,
  command: `npm run ${name}`,
  tier,
  format: "exit",
  timeoutMs: 600_000,
});

const started = (nodes: PlanNode[], checks: CheckDef[] = [], settings: RunSettingsInput = {}) =>
  ({ kind: "run.started", at: 0, run: "run-1", nodes, checks, settings: resolveSettings(settings) }) as const;

/** A run driven by hand: each helper answers the action in flight for a task, with its ref. */
class Run {
  state: RunState;
  log: StepResult[] = [];
  private t = 0;

  constructor(nodes: PlanNode[], checks: CheckDef[] = [], settings: RunSettingsInput = {}) {
    const first = begin(started(nodes, checks, settings));
    this.state = first.state;
    this.log.push(first);
  }

  get last(): StepResult {
    return this.log[this.log.length - 1]!;
  }

  /** The last step's actions as `kind:task` (or `kind` for run-wide ones). */
  get handed(): string[] {
    return this.last.actions.map((a) => ("task" in a ? `${a.kind}:${a.task}` : a.kind));
  }

  action(task: string): RunAction {
    const found = this.log
      .flatMap((r) => r.actions)
      .filter((a) => "task" in a && a.task === task)
      .pop();
    if (found === undefined) throw new Error(`no action for ${task}`);
    return found;
  }

  feed(event: RunEvent): StepResult {
    const r = step(this.state, event);
    this.state = r.state;
    this.log.push(r);
    return r;
  }

  ref(key: string): number {
    const ref = this.state.refs[key];
    if (ref === undefined) throw new Error(`nothing in flight for ${key || "the run"}`);
    return ref;
  }

  at(ms = 1000): number {
    this.t += ms;
    return this.t;
  }

  noop(task: string, results: CheckResult[]) {
    return this.feed({ kind: "noop.checked", at: this.at(), ref: this.ref(task), task, results });
  }

  agent(task: string, over: Partial<Extract<RunEvent, { kind: "agent.finished" }>> = {}) {
    return this.feed({
      kind: "agent.finished",
      at: this.at(),
      ref: this.ref(task),
      task,
      attempt: this.state.tasks[task]!.attempts,
      outcome: "ok",
      turns: 3,
      tokens: 1000,
      costUsd: 0.01,
      summary: "done",
      linesChanged: 10,
      filesChanged: ["src/a.ts"],
      boundaryTouched: false,
      ...over,
    });
  }

  checks(task: string, results: CheckResult[]) {
    return this.feed({ kind: "checks.ran", at: this.at(), ref: this.ref(task), task, results });
  }

  /**
   * Answers the witness in flight for `task`: its change set aside, the first check red (`seen`) or none;
   * `edited`: tests that were there before the task and its change touched.
   */
  witness(task: string, seen = true, setAside = ["src/a.ts"], edited?: string[], passedAsTheyWere = true) {
    const a = this.action(task);
    if (a.kind !== "witness") throw new Error(`${task} runs ${a.kind}`);
    const results = a.checks.map((name, i) =>
      seen && i === 0
        ? fail(name, "without the change", this.state.checks[name]!.tier)
        : pass(name, this.state.checks[name]!.tier),
    );
    return this.feed({
      kind: "witness.ran",
      at: this.at(),
      ref: this.ref(task),
      task,
      setAside,
      results,
      ...(edited !== undefined
        ? {
            judges: {
              kept: ["test/other.test.ts"],
              keptTotal: 1,
              changed: edited,
              diff: `--- ${edited[0]}\n-  expect(5)\n+  expect(-1)`,
              passedAsTheyWere: passedAsTheyWere,
            },
          }
        : {}),
    });
  }

  committed(task: string) {
    return this.feed({
      kind: "task.committed",
      at: this.at(),
      ref: this.ref(task),
      task,
      commit: `sha-${task}`,
    });
  }

  commitFailed(task: string, conflict: boolean) {
    return this.feed({
      kind: "commit.failed",
      at: this.at(),
      ref: this.ref(task),
      task,
      reason: "merge",
      conflict,
    });
  }

  rolledBack(task: string) {
    return this.feed({ kind: "task.rolled_back", at: this.at(), ref: this.ref(task), task, to: "base" });
  }

  tick(at: number) {
    this.t = Math.max(this.t, at);
    return this.feed({ kind: "clock.ticked", at, ref: this.ref("") });
  }

  report() {
    return this.feed({ kind: "report.written", at: this.at(), ref: this.ref(""), path: "report.md" });
  }

  /** Answers every check a run_checks or check_noop in flight for `task` asks for, green. */
  green(task: string) {
    const a = this.action(task);
    if (a.kind !== "run_checks" && a.kind !== "check_noop") throw new Error(`${task} runs ${a.kind}`);
    const results = a.checks.map((name) => pass(name, this.state.checks[name]!.tier));
    return a.kind === "check_noop" ? this.noop(task, results) : this.checks(task, results);
  }

  /** Runs `task` from its first action to its commit, every answer green. */
  complete(task: string) {
    if (this.state.inFlight[task] === "check_noop") this.noop(task, [fail("unit")]);
    this.agent(task);
    while (this.state.inFlight[task] === "run_checks") this.green(task);
    if (this.state.inFlight[task] === "witness") this.witness(task);
    return this.committed(task);
  }
}

const pass = (name: string, tier: CheckTier = "fast"): CheckResult => ({
  name,
  tier,
  passed: true,
  exitCode: 0,
  failedTests: [],
  output: "ok",
  durationMs: 5,
});

const fail = (name: string, output = "expected 2, got 3", tier: CheckTier = "fast"): CheckResult => ({
  ...pass(name, tier),
  passed: false,
  exitCode: 1,
  failedTests: ["adds"],
  output,
});

const transitions = (r: StepResult) =>
  r.decisions.flatMap((d) => (d.kind === "transition" ? [`${d.task}:${d.from}>${d.to}`] : []));

describe("a run's happy path", () => {
  it("runs a leaf through the agent, its checks and its witness to its commit, and proves the run done", () => {
    const run = new Run([planNode("a", { checks: ["unit"] })], [check("unit", "medium")]);
    expect(run.handed).toEqual(["check_noop:a"]);
    run.noop("a", [fail("unit", "not yet", "medium")]);
    expect(run.action("a")).toMatchObject({ attempt: 1, mode: "implement", failing: [] });
    run.agent("a");
    expect(run.action("a")).toMatchObject({ kind: "run_checks", checks: ["unit"] });
    expect(run.green("a").actions).toEqual([
      { kind: "witness", task: "a", checks: ["unit"], hunks: 8, ref: run.state.seq },
    ]);
    expect(run.witness("a").actions).toEqual([{ kind: "commit", task: "a", ref: run.state.seq }]);
    expect(run.state.tasks.a).toMatchObject({
      evidence: "witnessed",
      witness: { setAside: ["src/a.ts"], red: ["unit"] },
    });
    run.committed("a");
    expect(run.state.tasks.a).toMatchObject({ status: "done", commit: "sha-a", unverifiedLines: 0 });
    expect(run.handed).toEqual(["write_report"]);
    const end = run.report();
    expect(end.actions).toEqual([{ kind: "finish", proven: true }]);
    const proof = end.decisions.find((d) => d.kind === "proof");
    expect(proof).toMatchObject({ proof: { holds: true } });
    expect(run.state.finished).toEqual({ proven: true });
  });

  it("commits a leaf no check verifies without a witness, and never proves the run: it is unverified", () => {
    const run = new Run([planNode("a")]);
    expect(run.handed).toEqual(["run_agent:a"]);
    expect(run.agent("a").actions).toEqual([{ kind: "commit", task: "a", ref: run.state.seq }]);
    run.committed("a");
    expect(run.state.tasks.a).toMatchObject({ status: "done", evidence: "unverified" });
    const end = run.report();
    expect(end.actions).toEqual([{ kind: "finish", proven: false }]);
    const proof = end.decisions.find((d) => d.kind === "proof");
    expect(proof?.kind === "proof" && proof.proof.clauses.filter((c) => !c.holds)).toEqual([
      { name: "every_change_witnessed", holds: false, evidence: "not witnessed: a (unverified)" },
    ]);
  });

  it("keeps a change its checks do not witness, and does not prove the run: it is unwitnessed", () => {
    const run = new Run([planNode("a", { checks: ["unit"] })], [check("unit", "medium")]);
    run.noop("a", [fail("unit", "not yet", "medium")]);
    run.agent("a");
    run.green("a");
    expect(run.witness("a", false).actions).toEqual([{ kind: "commit", task: "a", ref: run.state.seq }]);
    expect(run.state.tasks.a).toMatchObject({
      evidence: "unwitnessed",
      witness: { setAside: ["src/a.ts"], red: [] },
    });
    run.committed("a");
    expect(run.report().actions).toEqual([{ kind: "finish", proven: false }]);
  });

  it("holds a task whose red checks went green after its agent changed their tests until a person approves", () => {
    const run = new Run([planNode("a", { checks: ["unit"] })], [check("unit", "medium")]);
    run.noop("a", [fail("unit", "expected 5, got -1", "medium")]);
    run.agent("a", { filesChanged: ["src/a.ts", "test/a.test.ts"] });
    run.green("a");
    // Witnessed (the implementation set aside, the edited test fails), and committed: the work is kept.
    expect(run.witness("a", true, ["src/a.ts"], ["test/a.test.ts"]).actions).toEqual([
      { kind: "commit", task: "a", ref: run.state.seq },
    ]);
    expect(run.state.tasks.a).toMatchObject({
      evidence: "witnessed",
      judgeChanges: { files: ["test/a.test.ts"], approved: null },
    });
    run.committed("a");
    const end = run.report();
    expect(end.actions).toEqual([{ kind: "finish", proven: false }]);
    expect(outcomeOf(run.state, run.state.finished)).toMatchObject({ kind: "awaiting_approval" });
    expect(outcomeOf(run.state, run.state.finished).cause).toContain(
      `reins approve --run ${run.state.run} --task a`,
    );
    // A person approves; the resumed run writes its report again and ends proven.
    const resumed = run.feed({
      kind: "run.resumed",
      at: run.at(),
      commits: {},
      approvals: [{ task: "a", by: "alice", reason: "the old expectation was wrong" }],
    });
    expect(resumed.decisions).toContainEqual({
      kind: "approved",
      task: "a",
      by: "alice",
      reason: "the old expectation was wrong",
    });
    expect(run.handed).toEqual(["write_report"]);
    expect(run.report().actions).toEqual([{ kind: "finish", proven: true }]);
    expect(outcomeOf(run.state, run.state.finished).kind).toBe("proven");
  });

  it("needs no approval when the shell saw no judge changed, and needs one when it did, red seen or not", () => {
    const run = new Run([planNode("a", { checks: ["unit"] })], [check("unit", "medium")]);
    run.noop("a", [fail("unit", "not yet", "medium")]);
    run.agent("a");
    run.green("a");
    run.witness("a", true, ["src/a.ts"]);
    expect(run.state.tasks.a?.judgeChanges).toBeUndefined();
    const never = new Run([planNode("b")], [check("lint")]);
    never.agent("b");
    never.green("b");
    never.witness("b", true, ["src/b.ts"], ["package.json scripts.test"]);
    expect(never.state.tasks.b?.judgeChanges).toMatchObject({
      files: ["package.json scripts.test"],
      approved: null,
    });
    never.committed("b");
    expect(never.report().actions).toEqual([{ kind: "finish", proven: false }]);
  });

  it("takes checks that pass only through the agent's change to their judges as changed_judges: proven only once a person approves", () => {
    const run = new Run([planNode("a", { checks: ["unit"] })], [check("unit", "medium")]);
    run.noop("a", [fail("unit", "not yet", "medium")]);
    run.agent("a");
    run.green("a");
    run.witness("a", true, [], ["conftest.py (new)"], false);
    expect(run.state.tasks.a).toMatchObject({
      evidence: "changed_judges",
      judgeChanges: { files: ["conftest.py (new)"], passedAsTheyWere: false, approved: null },
    });
    run.committed("a");
    expect(run.report().actions).toEqual([{ kind: "finish", proven: false }]);
    expect(outcomeOf(run.state, run.state.finished)).toMatchObject({ kind: "awaiting_approval" });
    expect(outcomeOf(run.state, run.state.finished).cause).toContain("its checks pass only with that change");
    run.feed({
      kind: "run.resumed",
      at: run.at(),
      commits: {},
      approvals: [{ task: "a", by: "alice", reason: "the new harness is right" }],
    });
    expect(run.report().actions).toEqual([{ kind: "finish", proven: true }]);
    expect(outcomeOf(run.state, run.state.finished).cause).toContain(
      "1 on a person's approval of changed judges",
    );
  });

  it("ignores an approval of a task with nothing awaiting one", () => {
    const run = new Run([planNode("a", { checks: ["unit"] })], [check("unit", "medium")]);
    run.complete("a");
    run.report();
    const r = run.feed({
      kind: "run.resumed",
      at: run.at(),
      commits: {},
      approvals: [{ task: "a", by: "mallory", reason: "x" }],
    });
    expect(r.decisions.filter((d) => d.kind === "approved")).toEqual([]);
    expect(run.state.tasks.a?.judgeChanges).toBeUndefined();
  });

  it("takes a change with nothing outside its tests as unwitnessed, whatever the checks say", () => {
    const run = new Run([planNode("a", { checks: ["unit"] })], [check("unit", "medium")]);
    run.noop("a", [fail("unit", "not yet", "medium")]);
    run.agent("a");
    run.green("a");
    run.witness("a", true, []);
    expect(run.state.tasks.a).toMatchObject({ evidence: "unwitnessed" });
  });

  it("commits a task of a type that changes no behaviour without a witness, and counts it toward the proof", () => {
    const run = new Run([planNode("a", { checks: ["unit"], type: "docs" })], [check("unit", "medium")]);
    run.noop("a", [fail("unit", "not yet", "medium")]);
    run.agent("a");
    expect(run.green("a").actions).toEqual([{ kind: "commit", task: "a", ref: run.state.seq }]);
    run.committed("a");
    expect(run.state.tasks.a).toMatchObject({ evidence: "no_behaviour" });
    expect(run.report().actions).toEqual([{ kind: "finish", proven: true }]);
  });

  it("closes a task whose checks already pass as a no-op, without the agent and without a commit", () => {
    const run = new Run([planNode("a", { checks: ["unit"] })], [check("lint"), check("unit", "medium")]);
    expect(run.action("a")).toMatchObject({ kind: "check_noop", checks: ["lint", "unit"] });
    const r = run.noop("a", [pass("lint"), pass("unit", "medium")]);
    expect(transitions(r)).toEqual(["a:pending>done"]);
    expect(run.state.tasks.a).toMatchObject({
      noop: true,
      commit: null,
      attempts: 0,
      evidence: "already_done",
    });
    expect(run.state.iterations).toBe(0);
  });

  it("checks no task as a no-op when only plan-wide checks would: the agent works on it", () => {
    const run = new Run([planNode("a")], [check("lint"), check("unit", "medium")]);
    expect(run.handed).toEqual(["run_agent:a"]);
  });

  it("starts the first iteration in the same slot when the no-op check is red", () => {
    const run = new Run([planNode("a", { checks: ["unit"] })], [check("unit")]);
    const r = run.noop("a", [fail("unit")]);
    expect(run.handed).toEqual(["run_agent:a"]);
    expect(transitions(r)).toEqual(["a:pending>in_progress"]);
    expect(run.state.tasks.a!.fixOnly).toBe(false);
  });

  it("starts a dependent only once its dependency is committed", () => {
    const run = new Run([planNode("a"), planNode("b", { deps: ["a"] })], [], { wip: 3 });
    expect(run.handed).toEqual(["run_agent:a"]);
    run.agent("a");
    expect(run.handed).toEqual(["commit:a"]);
    run.committed("a");
    expect(run.handed).toEqual(["run_agent:b"]);
  });

  it("treats a parent's deps as its subtasks' and a non-leaf dep as met when all its leaves are done", () => {
    const nodes = linked([
      planNode("c1", { kind: "component" }),
      planNode("x", { parent: "c1" }),
      planNode("y", { parent: "c1" }),
      planNode("t", { deps: ["c1"] }),
      planNode("p", { deps: ["x"] }),
      planNode("s", { parent: "p", kind: "subtask" }),
    ]);
    const run = new Run(nodes, [], { wip: 5 });
    expect(run.handed).toEqual(["run_agent:x", "run_agent:y"]);
    run.complete("x");
    expect(run.handed).toEqual(["run_agent:s"]);
    run.complete("y");
    expect(run.handed).toEqual(["run_agent:t"]);
  });
});

describe("verification gates", () => {
  const checks = [check("lint"), check("contract", "medium"), check("e2e", "slow"), check("perf", "slow")];

  it("a task with a red check gets a fix-only iteration with the failing output", () => {
    const run = new Run([planNode("a")], [check("unit")]);
    run.noop("a", [fail("unit")]);
    run.agent("a");
    const red = fail("unit", "AssertionError: expected 2, got 3");
    const r = run.checks("a", [red]);
    expect(r.actions).toEqual([
      { kind: "run_agent", task: "a", attempt: 2, mode: "fix", failing: [red], ref: run.state.seq },
    ]);
    expect(transitions(r)).toEqual(["a:verifying>in_progress"]);
    expect(run.state.tasks.a).toMatchObject({ fixOnly: true, failures: { checks: 1 } });
  });

  it("runs medium checks after an iteration only when it touched a boundary, else in the completion gate", () => {
    const run = new Run(
      [planNode("a", { checks: ["contract"] }), planNode("b", { checks: ["contract"] })],
      checks,
      { wip: 2 },
    );
    run.noop("a", [fail("lint")]);
    run.noop("b", [fail("lint")]);
    run.agent("a", { boundaryTouched: true });
    expect(run.action("a")).toMatchObject({ kind: "run_checks", checks: ["lint", "contract"] });
    run.agent("b", { boundaryTouched: false });
    expect(run.action("b")).toMatchObject({ kind: "run_checks", checks: ["lint"] });
    run.green("a");
    expect(run.action("a")).toMatchObject({ kind: "witness", checks: ["lint", "contract"] });
    run.green("b");
    expect(run.action("b")).toMatchObject({ kind: "run_checks", checks: ["contract"] });
  });

  it("runs a component's slow checks in the completion gate of the leaf that completes it", () => {
    const nodes = linked([
      planNode("c", { kind: "component", checks: ["e2e"] }),
      planNode("x", { parent: "c" }),
      planNode("y", { parent: "c", checks: ["perf"] }),
    ]);
    const run = new Run(nodes, checks, { wip: 1 });
    expect(run.action("x")).toMatchObject({ kind: "check_noop", checks: ["lint"] });
    run.noop("x", [fail("lint")]);
    run.agent("x");
    run.green("x");
    expect(run.action("x")).toMatchObject({ kind: "witness" });
    run.witness("x");
    run.committed("x");
    expect(run.action("y")).toMatchObject({ kind: "check_noop", checks: ["lint", "perf"] });
    run.noop("y", [pass("lint"), fail("perf", "slow", "slow")]);
    run.agent("y");
    run.green("y");
    expect(run.action("y")).toMatchObject({ kind: "run_checks", checks: ["e2e", "perf"] });
    expect(run.state.slowCheckRuns).toBe(3);
  });

  it("skips slow checks past the run's slow-check budget and keeps the skip as evidence", () => {
    const run = new Run([planNode("a", { checks: ["e2e", "perf"] })], checks, { slowCheckRuns: 1 });
    expect(run.action("a")).toMatchObject({ kind: "check_noop", checks: ["lint", "e2e"] });
    const held = run.log[0]!.decisions.find((d) => d.kind === "held");
    expect(held).toEqual({ kind: "held", task: "a", why: "skipped: slow-check budget spent (perf)" });
    run.noop("a", [pass("lint"), fail("e2e", "boom", "slow")]);
    run.agent("a");
    run.green("a");
    const r = run.last;
    expect(r.actions.map((a) => a.kind)).toEqual(["witness"]);
    expect(r.decisions).toContainEqual({
      kind: "held",
      task: "a",
      why: "skipped: slow-check budget spent (e2e, perf)",
    });
    expect(run.state.tasks.a!.lastChecks.filter((c) => c.skipped === true).map((c) => c.name)).toEqual([
      "e2e",
      "perf",
    ]);
  });

  it("never closes a leaf without checks as a no-op", () => {
    const run = new Run([planNode("a")], [check("e2e", "slow")]);
    expect(run.handed).toEqual(["run_agent:a"]);
  });
});

describe("failures and retries", () => {
  it("fails a task for good once its checks budget is spent, rolls it back and cancels its dependents", () => {
    const run = new Run(
      [planNode("a"), planNode("b", { deps: ["a"] }), planNode("c", { deps: ["b"] })],
      [check("unit")],
      {
        retries: { checks: 1 },
      },
    );
    run.noop("a", [fail("unit")]);
    run.agent("a");
    run.checks("a", [fail("unit")]);
    run.agent("a");
    const r = run.checks("a", [fail("unit")]);
    expect(transitions(r)).toEqual(["a:verifying>failed", "b:pending>canceled", "c:pending>canceled"]);
    expect(run.handed).toEqual(["rollback:a"]);
    expect(run.state.tasks.a).toMatchObject({
      permanent: true,
      reason: "red checks (unit); checks retries spent (1 of 1)",
    });
    expect(run.state.tasks.c!.reason).toBe("dependency b canceled");
    expect(run.state.tasks.b!.reason).toBe("dependency a failed");
    run.rolledBack("a");
    expect(run.handed).toEqual(["write_report"]);
    expect(run.report().actions).toEqual([{ kind: "finish", proven: true }]);
  });

  it("fails a task for good when its attempts are spent, whatever the class budgets", () => {
    const run = new Run([planNode("a")], [check("unit")], { maxAttempts: 2 });
    run.noop("a", [fail("unit")]);
    run.agent("a");
    run.checks("a", [fail("unit")]);
    run.agent("a");
    run.checks("a", [fail("unit")]);
    expect(run.state.tasks.a).toMatchObject({ status: "failed", permanent: true, attempts: 2 });
  });

  it("retries a transient failure after the backoff: the run waits, and the tick starts the retry", () => {
    const run = new Run([planNode("a")], [], { backoff: { baseMs: 2000, maxMs: 5000 } });
    const r = run.agent("a", { outcome: "transient", summary: "rate limited" });
    expect(r.decisions).toContainEqual({ kind: "retry_queued", task: "a", class: "transient", at: 3000 });
    expect(run.handed).toEqual(["wait"]);
    expect(r.actions[0]).toMatchObject({ until: 3000 });
    run.tick(3000);
    expect(run.handed).toEqual(["run_agent:a"]);
    run.agent("a", { outcome: "transient" });
    expect(run.state.tasks.a!.retryAt).toBe(run.state.now + 4000);
    run.tick(run.state.tasks.a!.retryAt!);
    run.agent("a", { outcome: "transient" });
    // Third transient failure: 5000 is the cap, not 8000.
    expect(run.state.tasks.a!.retryAt).toBe(run.state.now + 5000);
  });

  it("keeps a red task in fix mode across an agent retry", () => {
    const run = new Run([planNode("a")], [check("unit")]);
    run.noop("a", [fail("unit")]);
    run.agent("a");
    run.checks("a", [fail("unit")]);
    run.agent("a", { outcome: "failed", summary: "crashed" });
    run.tick(run.state.tasks.a!.retryAt!);
    expect(run.action("a")).toMatchObject({
      kind: "run_agent",
      attempt: 3,
      mode: "fix",
      failing: [fail("unit")],
    });
  });

  it("retries a commit conflict and fails a commit without conflict for good", () => {
    const run = new Run([planNode("a"), planNode("b")], [], { wip: 2 });
    run.agent("a");
    run.agent("b");
    const r = run.commitFailed("a", true);
    expect(r.decisions).toContainEqual(
      expect.objectContaining({ kind: "retry_queued", task: "a", class: "conflict" }),
    );
    run.commitFailed("b", false);
    expect(run.state.tasks.b).toMatchObject({
      status: "failed",
      permanent: true,
      reason: "commit failed: merge",
    });
    expect(run.handed).toEqual(["rollback:b"]);
  });

  it("ignores a repeated answer and leaves the state exactly as it was", () => {
    const run = new Run([planNode("a")], [check("unit")]);
    const answer: RunEvent = {
      kind: "noop.checked",
      at: 5,
      ref: run.ref("a"),
      task: "a",
      results: [fail("unit")],
    };
    run.feed(answer);
    const before = run.state;
    const again = run.feed(answer);
    expect(again.state).toBe(before);
    expect(again.actions).toEqual([]);
    expect(again.decisions).toEqual([
      { kind: "ignored", event: "noop.checked", why: "no check_noop in flight for a" },
    ]);
  });

  it("ignores an answer whose ref is not the action's in flight", () => {
    const run = new Run([planNode("a")], [check("unit")]);
    run.noop("a", [fail("unit")]);
    run.agent("a");
    const stale: RunEvent = { kind: "checks.ran", at: 9_000, ref: 1, task: "a", results: [pass("unit")] };
    expect(run.feed(stale).decisions[0]).toMatchObject({ kind: "ignored", event: "checks.ran" });
    expect(run.feed({ ...stale, task: "zz" }).decisions[0]).toMatchObject({
      why: "zz is no unit of work of this run",
    });
  });
});

describe("backpressure", () => {
  it("holds new work while a task is red and says why; only the red task's fix proceeds", () => {
    const run = new Run(
      [
        planNode("a", { checks: ["unit"] }),
        planNode("b", { checks: ["unit"] }),
        planNode("c", { checks: ["unit"] }),
      ],
      [check("unit")],
      { wip: 2 },
    );
    expect(run.handed).toEqual(["check_noop:a", "check_noop:b"]);
    run.noop("a", [fail("unit")]);
    run.agent("a");
    run.checks("a", [fail("unit")]);
    const r = run.noop("b", [fail("unit")]);
    expect(r.actions).toEqual([]);
    expect(r.decisions).toContainEqual({ kind: "held", task: "b", why: "fix-only: a red" });
    expect(run.state.tasks.b!.status).toBe("pending");
    run.agent("a");
    run.checks("a", [pass("unit")]);
    expect(run.handed).toEqual(["witness:a", "check_noop:b"]);
  });

  it("never has more leaves in flight than wip", () => {
    const run = new Run([planNode("a"), planNode("b"), planNode("c")], [], { wip: 2 });
    expect(run.handed).toEqual(["run_agent:a", "run_agent:b"]);
    expect(run.last.decisions).toContainEqual({
      kind: "held",
      task: "c",
      why: "wip limit reached: 2 of 2 in flight",
    });
  });

  it("holds new work while too many changed lines wait for verification", () => {
    const run = new Run(
      [planNode("a", { checks: ["unit"] }), planNode("b", { checks: ["unit"] })],
      [check("unit")],
      {
        wip: 2,
        maxUnverifiedLines: 100,
      },
    );
    run.noop("a", [fail("unit")]);
    run.agent("a", { linesChanged: 150 });
    const r = run.noop("b", [fail("unit")]);
    expect(r.decisions).toContainEqual({ kind: "held", task: "b", why: "unverified lines: 150 of 100" });
    run.green("a");
    expect(run.handed).toEqual(["witness:a", "check_noop:b"]);
  });

  it("hands out no run_agent past the iteration cap and ends the run without proof", () => {
    const run = new Run([planNode("a"), planNode("b")], [], { maxIterations: 1 });
    run.complete("a");
    expect(run.handed).toEqual(["write_report"]);
    expect(run.last.decisions).toContainEqual({
      kind: "held",
      task: "b",
      why: "iteration cap reached: 1 of 1",
    });
    const end = run.report();
    expect(end.actions).toEqual([{ kind: "finish", proven: false }]);
  });

  it("pauses on an agent's budget pause: nothing new starts, the report is written, the run ends unproven", () => {
    const run = new Run([planNode("a"), planNode("b")], [], { wip: 2 });
    run.agent("a", { outcome: "budget_paused", summary: "session budget spent" });
    expect(run.state.paused).toBe("session budget spent");
    expect(run.handed).toEqual([]);
    run.agent("b");
    expect(run.handed).toEqual(["commit:b"]);
    run.committed("b");
    expect(run.handed).toEqual(["write_report"]);
    const proof = run.report().decisions.find((d) => d.kind === "proof");
    expect(proof?.kind === "proof" && proof.proof.clauses.filter((c) => !c.holds).map((c) => c.name)).toEqual(
      ["no_runnable_task", "every_task_terminal", "every_change_witnessed"],
    );
  });

  it("drops a wait when a guard pauses the run, and winds down", () => {
    const run = new Run([planNode("a")]);
    run.agent("a", { outcome: "transient" });
    expect(run.handed).toEqual(["wait"]);
    run.feed({ kind: "run.paused", at: run.at(), reason: "breaker open" });
    expect(run.handed).toEqual(["write_report"]);
    expect(run.state.inFlight).toEqual({ "": "write_report" });
  });
});

describe("resume, cancel and the end", () => {
  it("resumes after a crash: a committed task is done, an interrupted one is verified as its tree is", () => {
    const nodes = [planNode("a"), planNode("b", { checks: ["api"] }), planNode("c"), planNode("d")];
    const run = new Run(nodes, [check("lint"), check("api", "medium")], {
      wip: 4,
      retries: { checks: 0 },
    });
    for (const id of ["a", "b", "c", "d"]) run.noop(id, [fail("lint")]);
    run.agent("a");
    run.green("a");
    run.agent("c");
    run.checks("c", [fail("lint")]); // no checks retries: c fails for good, its rollback is in flight
    const r = run.feed({ kind: "run.resumed", at: run.at(), commits: { a: "sha-a" } });
    expect(transitions(r)).toEqual([
      "a:verifying>done",
      "b:in_progress>verifying",
      "d:in_progress>verifying",
    ]);
    expect(run.state.tasks.a!.commit).toBe("sha-a");
    expect(run.handed).toEqual(["run_checks:b", "rollback:c", "run_checks:d"]);
    expect(run.action("b")).toMatchObject({ checks: ["lint", "api"] });
  });

  it("checks again a task whose no-op check was interrupted", () => {
    const run = new Run([planNode("a", { checks: ["lint"] })], [check("lint")]);
    const r = run.feed({ kind: "run.resumed", at: run.at(), commits: {} });
    expect(run.state.tasks.a!.status).toBe("pending");
    expect(r.actions).toEqual([{ kind: "check_noop", task: "a", checks: ["lint"], ref: run.state.seq }]);
  });

  it("goes on when a run that ended without proof is resumed", () => {
    const run = new Run([planNode("a")]);
    run.agent("a", { outcome: "budget_paused" });
    run.report();
    expect(run.state.finished).toEqual({ proven: false });
    run.feed({ kind: "run.resumed", at: run.at(), commits: {} });
    expect(run.state).toMatchObject({ paused: null, finished: null, reportWritten: false });
    expect(run.handed).toEqual(["commit:a"]);
  });

  it("hands out nothing after finish and ignores every event but a resume of an unproven run", () => {
    const run = new Run([planNode("a", { checks: ["unit"] })], [check("unit", "medium")]);
    run.complete("a");
    run.report();
    const before = run.state;
    for (const e of [
      { kind: "clock.ticked", at: 99_000, ref: 1 },
      { kind: "run.resumed", at: 99_000, commits: {} },
      { kind: "run.paused", at: 99_000, reason: "x" },
    ] as const) {
      const r = run.feed(e);
      expect(r.actions).toEqual([]);
      expect(r.state).toBe(before);
    }
  });

  it("cancels every open leaf under a node a person cancels, rolling back work already started", () => {
    const nodes = linked([
      planNode("m", { kind: "module" }),
      planNode("a", { parent: "m" }),
      planNode("b", { parent: "m" }),
    ]);
    const run = new Run([...nodes, planNode("z", { deps: ["m"] })], []);
    const r = run.feed({ kind: "task.canceled", at: run.at(), task: "m", by: "ana", reason: "out of scope" });
    expect(transitions(r)).toEqual(["a:in_progress>canceled", "b:pending>canceled", "z:pending>canceled"]);
    expect(run.handed).toEqual(["rollback:a"]);
    expect(run.state.tasks.a!.reason).toBe("canceled by ana: out of scope");
    expect(run.state.tasks.z!.reason).toBe("dependency m canceled");
  });

  it("ignores another run.started and an agent answer for another attempt", () => {
    const run = new Run([planNode("a")]);
    const e = started([planNode("a")]);
    expect(run.feed(e).decisions).toEqual([
      { kind: "ignored", event: "run.started", why: "the run has already started" },
    ]);
    const r = run.agent("a", { attempt: 7 });
    expect(r.decisions[0]).toMatchObject({ kind: "ignored", why: "a is at attempt 1, not 7" });
  });
});

describe("begin", () => {
  it("finishes an empty plan at once, proven: there is nothing to do", () => {
    const run = new Run([]);
    expect(run.handed).toEqual(["write_report"]);
    expect(run.report().actions).toEqual([{ kind: "finish", proven: true }]);
  });

  it("waits afresh when the task it waited for is canceled", () => {
    const run = new Run([planNode("a"), planNode("b")], [], {
      wip: 2,
      backoff: { baseMs: 50_000, maxMs: 60_000 },
    });
    run.agent("a", { outcome: "transient" });
    run.agent("b", { outcome: "transient" });
    expect(run.last.actions).toEqual([
      { kind: "wait", until: run.state.tasks.a!.retryAt, ref: run.state.seq },
    ]);
    const stale = run.ref("");
    run.feed({ kind: "task.canceled", at: run.at(), task: "a", by: "ana", reason: "not needed" });
    expect(run.handed).toEqual(["rollback:a"]);
    run.rolledBack("a");
    expect(run.last.actions).toEqual([
      { kind: "wait", until: run.state.tasks.b!.retryAt, ref: run.state.seq },
    ]);
    expect(run.feed({ kind: "clock.ticked", at: 99_000, ref: stale }).decisions[0]).toMatchObject({
      kind: "ignored",
    });
  });
});

describe("initialRunState", () => {
  it("rejects a plan with a dependency cycle, naming it", () => {
    const e = started([planNode("a", { deps: ["b"] }), planNode("b", { deps: ["a"] })]);
    expect(() => initialRunState(e)).toThrow("dependency cycle: a → b → a");
    try {
      initialRunState(e);
    } catch (error) {
      expect(ReinsError.is(error) && error.code).toBe("invalid_plan");
    }
  });

  it("rejects settings out of range, naming the field", () => {
    const e = { ...started([planNode("a")]), settings: { ...resolveSettings(), wip: 0 } };
    expect(() => initialRunState(e)).toThrow(/wip: got 0/);
  });

  it("starts with every leaf pending and nothing in flight", () => {
    const nodes = linked([planNode("t"), planNode("s1", { parent: "t" }), planNode("s2", { parent: "t" })]);
    const state = initialRunState(started(nodes));
    expect(Object.keys(state.tasks)).toEqual(["s1", "s2"]);
    expect(state).toMatchObject({ seq: 1, now: 0, inFlight: {}, iterations: 0, finished: null });
  });
});
