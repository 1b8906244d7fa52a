import { begin, resolveSettings, step, type RunSettingsInput } from "../../src/run/control/index.js";
import type {
  CheckDef,
  CheckResult,
  NodeKind,
  PlanNode,
  RunAction,
  RunEvent,
  RunState,
} from "../../src/run/control/types.js";
import type { StoredRun } from "../../src/base/core/store.js";
import { checkpointOf, type Checkpoint } from "../../src/run/drive/checkpoint.js";

/**
 * Runs of `reins run` for tests of what shows them, driven through the real control core: a plan as a
 * nested outline, and per task how its checks and its agent answer. Every action the core hands out is
 * answered as the driver would, so the state (and the checkpoint saved from it) is one a real run reaches.
 */

/** A node of a plan outline; `children` nest modules → components → tasks → subtasks. */
export interface Outline {
  id: string;
  kind: NodeKind;
  title?: string;
  checks?: string[];
  deps?: string[];
  children?: Outline[];
}

/** How a task's outside world answers. */
export interface TaskScript {
  /** The checks before its first iteration all pass: it closes as a no-op. @default false */
  noop?: boolean;
  /** Check results per round of `run_checks`, by check name: a list of failing test names makes it red. */
  rounds?: Record<string, string[]>[];
  /** The outcome of each agent iteration in turn; past the list, "ok". */
  agent?: ("ok" | "failed" | "budget_paused")[];
  /** What the agent says when its outcome is "budget_paused": the run's paused reason. */
  pausedBecause?: string;
  /** Canceled by a person before it starts. */
  cancel?: string;
}

/** Flattens an outline into plan nodes, parents first. */
export function planOf(outline: Outline[]): PlanNode[] {
  const out: PlanNode[] = [];
  const visit = (o: Outline, parent: string | null) => {
    out.push({
      id: o.id,
      kind: o.kind,
      title: o.title ?? o.id,
      deps: o.deps ?? [],
      priority: 0,
      acceptance: [],
      checks: o.checks ?? [],
      parent,
      children: (o.children ?? []).map((c) => c.id),
    });
    for (const c of o.children ?? []) visit(c, o.id);
  };
  for (const o of outline) visit(o, null);
  return out;
}

export const checkDef = (name: string): CheckDef => ({
  name,
  command: `npm run ${name}`,
  tier: "fast",
  format: "vitest-json",
  timeoutMs: 600_000,
});

const result = (name: string, failing: string[] | undefined): CheckResult => ({
  name,
  tier: "fast",
  passed: failing === undefined || failing.length === 0,
  exitCode: failing === undefined || failing.length === 0 ? 0 : 1,
  failedTests: failing ?? [],
  tests: { passed: 12, failed: failing?.length ?? 0 },
  output: failing === undefined || failing.length === 0 ? "12 passed" : `FAIL ${failing.join("\nFAIL ")}`,
  durationMs: 800,
});

/**
 * Drives a run through the control core until it finishes, pauses with nothing in flight, or `stopAfter`
 * steps; returns its last state.
 */
export function driveRun(options: {
  run: string;
  outline: Outline[];
  checks: string[];
  scripts: Record<string, TaskScript>;
  at: number;
  settings?: RunSettingsInput;
  stopAfter?: number;
}): RunState {
  let at = options.at;
  const first = begin({
    kind: "run.started",
    at,
    run: options.run,
    nodes: planOf(options.outline),
    checks: options.checks.map(checkDef),
    settings: resolveSettings(options.settings ?? {}),
  });
  let state = first.state;
  const queue: RunAction[] = [...first.actions];
  const feed = (event: RunEvent) => {
    const r = step(state, event);
    state = r.state;
    queue.push(...r.actions);
  };
  for (const [task, script] of Object.entries(options.scripts))
    if (script.cancel !== undefined)
      feed({ kind: "task.canceled", at: (at += 1_000), task, by: "ana", reason: script.cancel });
  const rounds = new Map<string, number>();
  let steps = 0;
  while (queue.length > 0 && steps++ < (options.stopAfter ?? 1_000)) {
    const action = queue.shift()!;
    at += 60_000;
    const script = "task" in action ? (options.scripts[action.task] ?? {}) : {};
    switch (action.kind) {
      case "check_noop":
        feed({
          kind: "noop.checked",
          at,
          ref: action.ref,
          task: action.task,
          results: action.checks.map((n) => result(n, script.noop === true ? [] : ["not written yet"])),
        });
        break;
      case "run_agent": {
        const outcome = script.agent?.[action.attempt - 1] ?? "ok";
        feed({
          kind: "agent.finished",
          at,
          ref: action.ref,
          task: action.task,
          attempt: action.attempt,
          outcome,
          turns: 7,
          tokens: 12_000 * action.attempt,
          costUsd: 0.05 * action.attempt,
          summary:
            outcome === "budget_paused" ? (script.pausedBecause ?? "the budget is paused") : "implemented",
          linesChanged: 40,
          filesChanged: ["src/a.ts"],
          boundaryTouched: false,
        });
        break;
      }
      case "run_checks": {
        const n = rounds.get(action.task) ?? 0;
        rounds.set(action.task, n + 1);
        const round = script.rounds?.[n] ?? {};
        feed({
          kind: "checks.ran",
          at,
          ref: action.ref,
          task: action.task,
          results: action.checks.map((c) => result(c, round[c])),
        });
        break;
      }
      case "witness":
        // With the change set aside, the first check fails: the checks witness the change.
        feed({
          kind: "witness.ran",
          at,
          ref: action.ref,
          task: action.task,
          setAside: ["src/a.ts"],
          results: action.checks.map((c, i) => result(c, i === 0 ? ["fails without the change"] : undefined)),
        });
        break;
      case "commit":
        feed({
          kind: "task.committed",
          at,
          ref: action.ref,
          task: action.task,
          commit: `${Buffer.from(action.task).toString("hex")}${"0".repeat(40)}`.slice(0, 40),
        });
        break;
      case "rollback":
        feed({ kind: "task.rolled_back", at, ref: action.ref, task: action.task, to: "base" });
        break;
      case "wait":
        feed({ kind: "clock.ticked", at: Math.max(at, action.until), ref: action.ref });
        break;
      case "write_report":
        feed({ kind: "report.written", at, ref: action.ref, path: "report.md" });
        break;
      case "finish":
        return state;
    }
  }
  return state;
}

/** The store record `reins run` saves for a state: its real status and summary. */
export function storedRun(state: RunState, updatedAt: number, plan = "plan.yaml"): StoredRun {
  const checkpoint: Checkpoint = {
    meta: {
      run: state.run,
      plan,
      agent: "claude",
      branch: `reins/${state.run}`,
      base: "main",
      worktrees: false,
      version: 1,
    },
    state,
    traceBytes: 4_096,
    keys: { next: state.seq + 1, step: state.seq },
    worktrees: {},
  };
  return checkpointOf(checkpoint, updatedAt);
}

/**
 * A stored run with one id renamed everywhere, through its JSON: how a checkpoint with a `__proto__` id
 * (which no plan may have, but a forged checkpoint can) comes out of any store, an own key of every record.
 */
export function renamed(run: StoredRun, from: string, to: string): StoredRun {
  return JSON.parse(JSON.stringify(run).replaceAll(JSON.stringify(from), JSON.stringify(to))) as StoredRun;
}

/**
 * A finished, proven run: module → component → tasks → subtasks, one subtask red once and fixed, one closed
 * as a no-op, and titles holding markup.
 */
export function provenRun(updatedAt: number): StoredRun {
  const state = driveRun({
    run: "run-proven",
    at: updatedAt - 3_600_000,
    checks: ["unit", "lint"],
    outline: [
      {
        id: "m-core",
        kind: "module",
        title: "Core",
        children: [
          {
            id: "c-parse",
            kind: "component",
            title: "Parser",
            children: [
              { id: "t-lex", kind: "task", title: "Lexer", checks: ["unit"] },
              {
                id: "t-tree",
                kind: "task",
                title: `Syntax tree <script>alert("tree")</script>`,
                children: [
                  {
                    id: "s-nodes",
                    kind: "subtask",
                    title: "Nodes <img src=x onerror=alert(1)>",
                    checks: ["unit", "lint"],
                  },
                  { id: "s-errors", kind: "subtask", title: "Error messages", checks: ["unit"] },
                ],
              },
            ],
          },
        ],
      },
    ],
    scripts: { "s-nodes": { rounds: [{ unit: ["parses nested lists"] }] }, "s-errors": { noop: true } },
  });
  return storedRun(state, updatedAt, "plans/parser.yaml");
}

/** The paused reason the guard gives for a run's budget, as `reins run` records it. */
export const PAUSED_BECAUSE =
  'the budget of run:run-paused is paused (tokens 60,000 of 50,000): extend it with `reins budget extend run:run-paused <tokens> --reason "..."`, then `reins run --resume`';

/**
 * A run paused by its budget while a task is fix-only after red checks, with a task canceled by a person and
 * a task whose id is `__proto__` (no plan may have it; a forged checkpoint can).
 */
export function pausedRun(updatedAt: number): StoredRun {
  const state = driveRun({
    run: "run-paused",
    at: updatedAt - 1_800_000,
    checks: ["unit"],
    outline: [
      {
        id: "m-web",
        kind: "module",
        title: "Web <b>dashboard</b>",
        children: [
          { id: "t-list", kind: "task", title: "Runs list", checks: ["unit"] },
          { id: "PROTO", kind: "task", title: "<b>prototype</b>", checks: ["unit"], deps: ["t-list"] },
          { id: "t-drop", kind: "task", title: "Dropped" },
        ],
      },
    ],
    scripts: {
      "t-list": {
        rounds: [{ unit: ["lists newest first", "shows the <em>badge</em>"] }],
        agent: ["ok", "budget_paused"],
        pausedBecause: PAUSED_BECAUSE,
      },
      "t-drop": { cancel: "not needed after all" },
    },
  });
  return renamed(storedRun(state, updatedAt, "plans/web.yaml"), "PROTO", "__proto__");
}
