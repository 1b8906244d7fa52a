/** Tests of a run as the dashboard shows it. */
import { describe, expect, it } from "vitest";
import type { StoredRun } from "../base/core/store.js";
import type { BudgetLine, ScopeSummary } from "../base/core/summary.js";
import { PAUSED_BECAUSE, pausedRun, provenRun, storedRun, driveRun } from "#test/runs.js";
import { goOnCommands, runView } from "./run-view.js";

const line = (resource: BudgetLine["resource"], used: number, limit: number): BudgetLine => ({
  resource,
  used,
  limit,
  ratio: used / limit,
});

/** A guard scope's summary with only what the commands read. */
const guard = (over: Partial<ScopeSummary> = {}): ScopeSummary => ({
  scope: "run:r",
  agent: "claude",
  events: 3,
  startedAt: 0,
  lastAt: 1,
  ended: false,
  status: "active",
  budget: [line("tokens", 10, 100)],
  task: null,
  breaker: { status: "closed", reason: null, detail: null, openedAt: null, trips: 0 },
  ...over,
});

/** A stored run whose checkpoint is `state`, as a forger would save it. */
const forged = (state: unknown): StoredRun => ({
  id: "forged",
  status: "running",
  updatedAt: 1,
  summary: { plan: "x.yaml" },
  checkpoint: { meta: { plan: "x.yaml" }, state },
});

describe("a run's view", () => {
  it("lists the plan in order with depths, parents summed up from their leaves, and the proof of a finished run", () => {
    const view = runView(provenRun(10_000_000), null);
    expect(view.problem).toBeNull();
    expect(view.nodes.map((n) => [n.id, n.depth, n.status])).toEqual([
      ["m-core", 0, "done"],
      ["c-parse", 1, "done"],
      ["t-lex", 2, "done"],
      ["t-tree", 2, "done"],
      ["s-nodes", 3, "done"],
      ["s-errors", 3, "done"],
    ]);
    const [core, , lex, tree, nodes, errors] = view.nodes;
    expect(core).toMatchObject({ leaves: { done: 3, total: 3 }, tokens: view.tokens, task: null });
    expect(tree).toMatchObject({ leaves: { done: 2, total: 2 }, tokens: nodes!.tokens + errors!.tokens });
    expect(lex!.task).toMatchObject({ attempts: 1, fixOnly: false, noop: false });
    expect(lex!.task!.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(nodes!.task).toMatchObject({ attempts: 2 });
    expect(errors!.task).toMatchObject({ attempts: 0, noop: true, commit: null });
    expect(view).toMatchObject({ status: "proven", plan: "plans/parser.yaml", base: "main", paused: null });
    expect(view.finished).toEqual({ proven: true });
    expect(view.proof?.holds).toBe(true);
    expect(view.proof?.clauses).toHaveLength(10);
  });

  it("says why a run is paused and what to type, with red checks and ids like __proto__ kept as data", () => {
    const view = runView(
      pausedRun(10_000_000),
      guard({ status: "paused", budget: [line("tokens", 60, 50)] }),
    );
    expect(view.status).toBe("paused");
    expect(view.paused).toEqual({
      reason: PAUSED_BECAUSE,
      scope: "run:run-paused",
      commands: [
        'reins budget extend run:run-paused <tokens> --reason "..."',
        "reins run --resume run-paused",
      ],
    });
    const list = view.nodes.find((n) => n.id === "t-list")!;
    expect(list).toMatchObject({ status: "in_progress", task: { fixOnly: true } });
    expect(list.task!.checks).toEqual([
      expect.objectContaining({
        name: "unit",
        passed: false,
        failedTests: ["lists newest first", "shows the <em>badge</em>"],
      }),
    ]);
    const proto = view.nodes.find((n) => n.id === "__proto__")!;
    expect(proto).toMatchObject({ title: "<b>prototype</b>", status: "pending", depth: 1 });
    expect(Object.getPrototypeOf(view)).toBe(Object.prototype);
    expect(view.nodes.find((n) => n.id === "t-drop")).toMatchObject({
      status: "canceled",
      task: { reason: "canceled by ana: not needed after all" },
    });
    expect(view.proof?.holds).toBe(false);
    expect(view.proof?.clauses.find((c) => c.name === "every_task_terminal")?.evidence).toContain(
      "__proto__ (pending)",
    );
  });

  it("has no proof while the run goes on", () => {
    const state = driveRun({
      run: "run-live",
      at: 0,
      checks: [],
      outline: [{ id: "a", kind: "task" }],
      scripts: {},
      stopAfter: 0,
    });
    const view = runView(storedRun(state, 1), null);
    expect(view).toMatchObject({ status: "running", finished: null, proof: null, paused: null });
    expect(view.nodes).toEqual([expect.objectContaining({ id: "a", status: "in_progress" })]);
  });
});

describe("the commands that let a paused run go on", () => {
  it("reset an open breaker, extend the budget that holds it (its resource, its task meter), then resume", () => {
    expect(goOnCommands("r", guard({ breaker: { ...guard().breaker, status: "open" } }))).toEqual([
      'reins circuit reset run:r --reason "..."',
      "reins run --resume r",
    ]);
    expect(goOnCommands("r", guard({ status: "exhausted", budget: [line("usd", 6, 5)] }))).toEqual([
      'reins budget extend run:r <amount> --resource usd --reason "..."',
      "reins run --resume r",
    ]);
    expect(
      goOnCommands("r", guard({ status: "paused", task: { id: "t", budget: [line("tokens", 9, 8)] } })),
    ).toEqual(['reins budget extend run:r <tokens> --task --reason "..."', "reins run --resume r"]);
  });

  it("only resume when nothing holds the guard scope now, or it has none", () => {
    expect(goOnCommands("r", guard())).toEqual(["reins run --resume r"]);
    expect(goOnCommands("r", null)).toEqual(["reins run --resume r"]);
  });
});

describe("a checkpoint reins did not write", () => {
  const node = (id: string, parent: string | null, children: string[] = []) => ({
    id,
    kind: "task",
    title: id,
    deps: [],
    parent,
    children,
  });
  const task = { status: "pending", permanent: false };

  it.each([
    ["not an object", "nope", "it has no run state"],
    [
      "a hierarchy that loops",
      {
        order: ["a", "b"],
        nodes: { a: node("a", "b", ["b"]), b: node("b", "a", ["a"]) },
        tasks: {},
        inFlight: {},
      },
      "comes before its parent",
    ],
    [
      "a child of two parents",
      {
        order: ["a", "b", "c"],
        nodes: { a: node("a", null, ["c"]), b: node("b", null, ["c"]), c: node("c", "a") },
        tasks: { c: task },
        inFlight: {},
      },
      "not its child",
    ],
    [
      "a leaf without a task",
      { order: ["a"], nodes: { a: node("a", null) }, tasks: {}, inFlight: {} },
      "has no status",
    ],
    [
      "a dep not in the plan",
      { order: ["a"], nodes: { a: { ...node("a", null), deps: ["zz"] } }, tasks: { a: task }, inFlight: {} },
      "not in the plan",
    ],
    [
      "a node nobody lists",
      {
        order: ["a", "b"],
        nodes: { a: node("a", null), b: node("b", "a") },
        tasks: { a: task, b: task },
        inFlight: {},
      },
      "not listed by its parent",
    ],
  ])("is a message, not a crash or a hang: %s", (_name, state, message) => {
    const view = runView(forged(state), null);
    expect(view.problem).toContain("its checkpoint is not one reins wrote");
    expect(view.problem).toContain(message);
    expect(view.nodes).toEqual([]);
    expect(view.plan).toBe("x.yaml");
  });

  it("is a message when nested deeper than any plan", () => {
    const ids = Array.from({ length: 40 }, (_, i) => `n${i}`);
    const nodes = Object.fromEntries(
      ids.map((id, i) => [id, node(id, i === 0 ? null : ids[i - 1]!, i < 39 ? [ids[i + 1]!] : [])]),
    );
    const view = runView(forged({ order: ids, nodes, tasks: { n39: task }, inFlight: {} }), null);
    expect(view.problem).toContain("nests deeper");
  });
});
