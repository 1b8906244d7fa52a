/**
 * Laws of spec drift in the control core, on random plans driven by a simulated shell that answers every
 * action green, crashes and resumes now and then, and feeds `spec.changed` naming random nodes at random
 * points: reopening is the only way out of done and only for the tasks named, a reopened task keeps its
 * history and is proven again, the done proof never holds while any task is open, and the run still ends
 * proven.
 *
 * Fixed seed; on failure fast-check prints it with the shrunk path (`{ seed: 20261123, path: "4:2" }`).
 * Rerun other seeds with `REINS_SEED=123 npx vitest run src/run/control/drift.property.test.ts`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resolveSettings } from "./settings.js";
import { begin, step, type StepResult } from "./step.js";
import { canReopen, canTransition, isTerminal } from "./task-state.js";
import type { CheckDef, PlanNode, RunAction, RunEvent, RunState } from "./types.js";
import { seeded } from "../../base/core/seeded.js";

const SEED = Number(process.env.REINS_SEED ?? 20261123);

const CHECKS: CheckDef[] = [
  { name: "lint", command: "lint", tier: "fast", format: "exit", timeoutMs: 1000 },
  { name: "api", command: "api", tier: "medium", format: "exit", timeoutMs: 1000 },
];

interface World {
  nodes: PlanNode[];
  wip: number;
  /** The world's choices: which answer comes next, when the spec changes and what, when it crashes. */
  seed: number;
}

const worldArb: fc.Arbitrary<World> = fc
  .record({
    tasks: fc.array(
      fc.record({
        group: fc.option(fc.nat({ max: 2 }), { freq: 2 }),
        deps: fc.array(fc.nat(), { maxLength: 2 }),
        checks: fc.subarray(["lint", "api"]),
      }),
      { minLength: 1, maxLength: 7 },
    ),
    wip: fc.integer({ min: 1, max: 3 }),
    seed: fc.integer(),
  })
  .map(({ tasks, wip, seed }) => {
    const groups = new Map<number, PlanNode>();
    const nodes: PlanNode[] = [];
    const base = { deps: [], priority: 0, acceptance: [], checks: [], children: [] };
    tasks.forEach((t, i) => {
      let parent: string | null = null;
      if (t.group !== null) {
        let g = groups.get(t.group);
        if (g === undefined) {
          g = {
            ...base,
            id: `c${t.group}`,
            kind: "component",
            title: `c${t.group}`,
            parent: null,
            children: [],
          };
          groups.set(t.group, g);
          nodes.push(g);
        }
        g.children.push(`t${i}`);
        parent = g.id;
      }
      // Deps on earlier tasks only (never a cycle), and never on a sibling's group.
      const deps = i === 0 ? [] : [...new Set(t.deps.map((d) => `t${d % i}`))];
      nodes.push({
        ...base,
        id: `t${i}`,
        kind: parent === null ? "task" : "subtask",
        title: `t${i}`,
        parent,
        deps,
        checks: t.checks,
      });
    });
    return { nodes, wip, seed };
  });

interface Outcome {
  events: RunEvent[];
  steps: StepResult[];
  states: RunState[];
  /** Every commit made, per task, in order. */
  commits: Map<string, string[]>;
  finished: { proven: boolean } | null;
}

/** Drives a run of `world` to its end (or 2,000 steps): green answers, random drift, now and then a crash. */
function simulate(world: World): Outcome {
  const next = seeded(world.seed);
  const first = begin({
    kind: "run.started",
    at: 0,
    run: "r",
    nodes: world.nodes,
    checks: CHECKS,
    settings: resolveSettings({ wip: world.wip, maxIterations: 1000, maxAttempts: 3 }),
  });
  const out: Outcome = {
    events: [],
    steps: [first],
    states: [first.state],
    commits: new Map(),
    finished: null,
  };
  let state = first.state;
  let pending: RunAction[] = [...first.actions];
  let t = 0;
  let drifts = 0;
  const feed = (event: RunEvent) => {
    const r = step(state, event);
    out.events.push(event);
    out.steps.push(r);
    out.states.push(r.state);
    state = r.state;
    for (const a of r.actions) {
      if (a.kind === "finish") out.finished = { proven: a.proven };
      else pending.push(a);
    }
  };
  const green = (names: string[]) =>
    names.map((name) => ({
      name,
      tier: CHECKS.find((c) => c.name === name)!.tier,
      passed: true,
      exitCode: 0,
      failedTests: [],
      output: "",
      durationMs: 1,
    }));
  for (let n = 0; n < 2000 && out.finished === null; n++) {
    const roll = next();
    if (roll < 0.12 && drifts < 4) {
      // The spec changes: some nodes of the plan name the changed section.
      drifts += 1;
      const named = world.nodes.filter(() => next() < 0.35).map((node) => node.id);
      feed({ kind: "spec.changed", at: (t += 10), sections: [`spec.md#S${drifts}`], tasks: named });
      continue;
    }
    if (roll < 0.15) {
      // A crash: actions in flight are lost, commits made but unanswered stay in git.
      for (const a of pending)
        if (a.kind === "commit" && next() < 0.5)
          out.commits.set(a.task, [...(out.commits.get(a.task) ?? []), `${a.task}@${n}`]);
      pending = [];
      const commits: Record<string, string> = {};
      for (const [id, task] of Object.entries(state.tasks)) {
        const sha = out.commits.get(id)?.at(-1);
        if (!isTerminal(task) && sha !== undefined && sha !== task.commit) commits[id] = sha;
      }
      feed({ kind: "run.resumed", at: (t += 10), commits });
      continue;
    }
    if (pending.length === 0) break;
    const [action] = pending.splice(Math.floor(next() * pending.length), 1) as [RunAction];
    const at = (t += 10);
    switch (action.kind) {
      case "check_noop":
        feed({
          kind: "noop.checked",
          at,
          ref: action.ref,
          task: action.task,
          results:
            next() < 0.3
              ? green(action.checks)
              : green(action.checks).map((r) => ({ ...r, passed: false, exitCode: 1 })),
        });
        break;
      case "run_agent":
        feed({
          kind: "agent.finished",
          at,
          ref: action.ref,
          task: action.task,
          attempt: action.attempt,
          outcome: "ok",
          turns: 1,
          tokens: 10,
          costUsd: 0,
          summary: "",
          linesChanged: 1,
          filesChanged: ["f"],
          boundaryTouched: false,
        });
        break;
      case "run_checks":
        feed({ kind: "checks.ran", at, ref: action.ref, task: action.task, results: green(action.checks) });
        break;
      case "witness":
        // Without the change, the checks go red: they witness it.
        feed({
          kind: "witness.ran",
          at,
          ref: action.ref,
          task: action.task,
          setAside: ["f"],
          results: green(action.checks).map((r) => ({ ...r, passed: false, exitCode: 1 })),
        });
        break;
      case "commit": {
        const sha = `${action.task}@${n}`;
        out.commits.set(action.task, [...(out.commits.get(action.task) ?? []), sha]);
        feed({ kind: "task.committed", at, ref: action.ref, task: action.task, commit: sha });
        break;
      }
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
        break;
    }
  }
  return out;
}

const leavesOf = (nodes: PlanNode[], id: string): string[] => {
  const node = nodes.find((n) => n.id === id);
  return node === undefined
    ? []
    : node.children.length === 0
      ? [id]
      : node.children.flatMap((c) => leavesOf(nodes, c));
};

const runs = { seed: SEED, numRuns: 200 };

describe("spec drift laws (property)", () => {
  it("only spec.changed leaves done, only to pending, and only for the tasks it names", () => {
    fc.assert(
      fc.property(worldArb, (world) => {
        const out = simulate(world);
        out.steps.slice(1).forEach((r, i) => {
          const event = out.events[i]!;
          const before = out.states[i]!;
          const named =
            event.kind === "spec.changed"
              ? new Set(event.tasks.flatMap((id) => leavesOf(world.nodes, id)))
              : new Set<string>();
          // Each transition starts where the task stands (after the step's earlier ones) and is allowed.
          const now = new Map(Object.entries(before.tasks).map(([id, t]) => [id, t.status]));
          for (const d of r.decisions) {
            if (d.kind !== "transition") continue;
            expect(d.from).toBe(now.get(d.task));
            now.set(d.task, d.to);
            if (d.from === "done") {
              expect(event.kind).toBe("spec.changed");
              expect(canReopen(d.from, d.to)).toBe(true);
              expect(named.has(d.task)).toBe(true);
              expect(d.why).toMatch(/^reopened: spec section/);
            } else expect(canTransition(d.from, before.tasks[d.task]!.permanent, d.to)).toBe(true);
          }
          // A reopened task keeps its history: attempts and spend never go down.
          for (const [id, task] of Object.entries(r.state.tasks)) {
            expect(task.attempts).toBeGreaterThanOrEqual(before.tasks[id]!.attempts);
            expect(task.tokens).toBeGreaterThanOrEqual(before.tasks[id]!.tokens);
          }
        });
      }),
      runs,
    );
  });

  it("every done task named by a change is reopened, and the done proof never holds while a task is open", () => {
    fc.assert(
      fc.property(worldArb, (world) => {
        const out = simulate(world);
        out.steps.slice(1).forEach((r, i) => {
          const event = out.events[i]!;
          if (event.kind === "spec.changed" && event.tasks.length > 0 && out.states[i]!.finished === null)
            for (const id of event.tasks.flatMap((x) => leavesOf(world.nodes, x)))
              if (out.states[i]!.tasks[id]!.status === "done")
                expect(r.state.tasks[id]!.status).not.toBe("done");
          for (const d of r.decisions)
            if (d.kind === "proof" && d.proof.holds)
              expect(
                Object.values(r.state.tasks).every((t) => t.status === "done" && t.specChanged === undefined),
              ).toBe(true);
        });
      }),
      runs,
    );
  });

  it("still ends proven when every answer is green, each task's last commit being the one that closed it", () => {
    fc.assert(
      fc.property(worldArb, (world) => {
        const out = simulate(world);
        expect(out.finished).toEqual({ proven: true });
        const end = out.states[out.states.length - 1]!;
        for (const [id, task] of Object.entries(end.tasks)) {
          expect(task.status).toBe("done");
          // A no-op closing has no commit of its own; otherwise the task's commit is its newest.
          if (!task.noop) expect(task.commit).toBe(out.commits.get(id)?.at(-1));
        }
      }),
      runs,
    );
  });

  it("is deterministic: the same events from the same start give the same states", () => {
    fc.assert(
      fc.property(worldArb, (world) => {
        const out = simulate(world);
        let state = out.states[0]!;
        out.events.forEach((event, i) => {
          state = step(state, event).state;
          expect(state).toEqual(out.states[i + 1]);
        });
      }),
      { ...runs, numRuns: 50 },
    );
  });
});
