/**
 * Laws of the run control core (seed 004, "Metamorphic testing" and "Done detection"), checked on random
 * plans driven by a simulated shell.
 *
 * The shell is a deterministic fake: it answers each action the core hands out with an event chosen from a
 * seeded stream (a hash of the world's seed and what is being answered), after a random duration, so
 * answers arrive out of order when several actions are in flight. It also crashes and resumes, repeats old
 * answers, pauses and cancels, at points the same stream chooses.
 *
 * Every property runs with a fixed seed, so a run is reproducible bit for bit. When one fails, fast-check
 * prints the seed, the path of the shrunk counterexample and the counterexample, e.g.
 *   Property failed after 12 tests { seed: 20260413, path: "11:3:0", endOnFailure: true }
 * To rerun exactly that case, pass those values to the failing `fc.assert`; try other seeds with
 * `REINS_SEED=123 npx vitest run src/run/control/laws.property.test.ts`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { linked, planNode } from "#test/plans.js";
import { ReinsError } from "../../base/core/errors.js";
import { aggregates } from "./aggregate.js";
import { doneProof } from "./done-proof.js";
import { candidates } from "./schedule.js";
import { resolveSettings, type RunSettingsInput } from "./settings.js";
import { begin, initialRunState, step, type StepResult } from "./step.js";
import { canTransition, isTerminal } from "./task-state.js";
import type {
  CheckDef,
  CheckResult,
  CheckTier,
  FailureClass,
  PlanNode,
  RunAction,
  RunEvent,
  RunSettings,
  RunState,
  TaskStatus,
} from "./types.js";
import { leavesInFlight } from "./wip.js";

/** The seed of every property in this file; REINS_SEED overrides it for exploring. */
const SEED = Number(process.env.REINS_SEED ?? 20260413);

const run = (numRuns: number) => ({ seed: SEED, numRuns });

// ---------------------------------------------------------------------------------------------------------
// Random plans: a forest of up to 10 nodes, deps on earlier nodes, and now and then an edge that may close a
// cycle (a dep on a later node, an ancestor or itself).
// ---------------------------------------------------------------------------------------------------------

const CHECKS: CheckDef[] = (
  [
    ["lint", "fast"],
    ["unit", "fast"],
    ["api", "medium"],
    ["e2e", "slow"],
    ["perf", "slow"],
  ] as const
).map(([name, tier]) => ({ name, command: `npm run ${name}`, tier, format: "exit", timeoutMs: 600_000 }));

interface Plan {
  nodes: PlanNode[];
  checks: CheckDef[];
}

const nodeSpec = fc.record({
  parent: fc.option(fc.nat(), { freq: 2 }),
  deps: fc.array(fc.nat(), { maxLength: 3 }),
  priority: fc.integer({ min: -1, max: 3 }),
  checks: fc.subarray(CHECKS.map((c) => c.name)),
});

const planArb: fc.Arbitrary<Plan> = fc
  .record({
    specs: fc.array(nodeSpec, { minLength: 1, maxLength: 12 }),
    checks: fc.subarray(CHECKS),
    // A quarter of the plans get an edge that may close a cycle.
    closing: fc.oneof(
      { weight: 3, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.tuple(fc.nat(), fc.nat()) },
    ),
  })
  .map(({ specs, checks, closing }) => {
    const ids = specs.map((_, i) => `t${i}`);
    const nodes: PlanNode[] = specs.map((s, i) => {
      const parent = s.parent === null || i === 0 ? null : ids[s.parent % i]!;
      return planNode(ids[i]!, {
        kind: parent === null ? "task" : "subtask",
        priority: s.priority,
        checks: s.checks.filter((name) => checks.some((c) => c.name === name)),
        parent,
      });
    });
    linked(nodes);
    specs.forEach((s, i) => {
      const ancestors = ancestorsIn(nodes, ids[i]!);
      if (i === 0) return;
      const deps = s.deps.map((d) => ids[d % i]!).filter((d) => !ancestors.includes(d));
      nodes[i]!.deps = [...new Set(deps)];
    });
    if (closing !== null) {
      const from = nodes[closing[0] % nodes.length]!;
      const to = ids[closing[1] % nodes.length]!;
      if (!from.deps.includes(to)) from.deps.push(to);
    }
    return { nodes, checks };
  });

// An independent oracle of the plan's structure, written plainly from the design's words.

function ancestorsIn(nodes: readonly PlanNode[], id: string): string[] {
  const out: string[] = [];
  for (let n = nodes.find((x) => x.id === id); n?.parent != null; n = nodes.find((x) => x.id === n.parent))
    out.push(n.parent);
  return out;
}

function leavesIn(nodes: readonly PlanNode[], id: string): string[] {
  const n = nodes.find((x) => x.id === id)!;
  return n.children.length === 0 ? [id] : n.children.flatMap((c) => leavesIn(nodes, c));
}

/** The leaves a leaf waits for: every leaf under a dep of the leaf or of an ancestor. */
function waitsFor(nodes: readonly PlanNode[], leaf: string): Set<string> {
  const deps = [leaf, ...ancestorsIn(nodes, leaf)].flatMap((id) => nodes.find((n) => n.id === id)!.deps);
  return new Set(deps.flatMap((d) => leavesIn(nodes, d)));
}

/** Whether some leaf (transitively) waits for itself: Kahn's algorithm on the leaves. */
function cyclic(nodes: readonly PlanNode[]): boolean {
  const leaves = nodes.filter((n) => n.children.length === 0).map((n) => n.id);
  const waits = new Map(leaves.map((l) => [l, waitsFor(nodes, l)]));
  const done = new Set<string>();
  for (let progress = true; progress;) {
    progress = false;
    for (const l of leaves)
      if (!done.has(l) && [...waits.get(l)!].every((w) => done.has(w))) {
        done.add(l);
        progress = true;
      }
  }
  return done.size < leaves.length;
}

const settingsArb: fc.Arbitrary<RunSettingsInput> = fc.record({
  wip: fc.integer({ min: 1, max: 3 }),
  maxUnverifiedLines: fc.integer({ min: 50, max: 600 }),
  maxAttempts: fc.integer({ min: 1, max: 6 }),
  retries: fc.record({
    checks: fc.integer({ min: 0, max: 3 }),
    agent: fc.integer({ min: 0, max: 2 }),
    transient: fc.integer({ min: 0, max: 3 }),
    conflict: fc.integer({ min: 0, max: 2 }),
  }),
  backoff: fc
    .tuple(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 10_000 }))
    .map(([baseMs, extra]) => ({ baseMs, maxMs: baseMs + extra })),
  slowCheckRuns: fc.integer({ min: 0, max: 5 }),
  maxIterations: fc.integer({ min: 3, max: 80 }),
  witness: fc.constantFrom("change" as const, "hunks" as const),
  hunkCap: fc.integer({ min: 0, max: 3 }),
  hunkRuns: fc.integer({ min: 0, max: 6 }),
});

// ---------------------------------------------------------------------------------------------------------
// The simulated shell.
// ---------------------------------------------------------------------------------------------------------

/** A number in [0, 1) from the seed and the parts: the world's seeded random stream, by what it answers. */
function rand(seed: number, ...parts: (string | number)[]): number {
  let h = 2166136261 ^ seed;
  for (const ch of parts.join("|")) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return ((h ^ (h >>> 16)) >>> 0) / 2 ** 32;
}

/**
 * How the world behaves. chaos: anything fails, crashes and repeats happen. eventual: every task may fail
 * once, on its first attempt, then succeeds. orderly: only checks go red, answers depend on the task alone
 * (not on when it runs), nothing else happens.
 */
type Mode = "chaos" | "eventual" | "orderly";

interface Sim {
  seed: number;
  mode: Mode;
  /** Turns a state into JSON and back now and then: the state is plain data. */
  roundTrip?: boolean;
  /** Freezes every state deeply: a step that wrote to the state it was given would throw. */
  freeze?: boolean;
}

interface Pending {
  due: number;
  tie: number;
  event: RunEvent;
  action: RunAction;
}

/** What one simulated run did: every event fed and every step's result. */
interface Trace {
  events: RunEvent[];
  steps: StepResult[];
  start: Extract<RunEvent, { kind: "run.started" }>;
  /** Checks made on every step, and the counts they keep. */
  tally: Tally;
}

/** The tasks whose agent touched what judges the work, as the shell reported it. */
function tampered(s: RunState): string[] {
  return Object.entries(s.tasks)
    .filter(([, t]) => (t.tampering?.length ?? 0) > 0)
    .map(([id]) => id);
}

/** The done tasks whose judges their agent changed, not approved by a person. */
function awaiting(s: RunState): string[] {
  return leafIds(s).filter((id) => {
    const t = s.tasks[id]!;
    return t.status === "done" && t.judgeChanges !== undefined && t.judgeChanges.approved === null;
  });
}

/** The done tasks with a hunk no check witnessed alone (or not tried), when the settings ask for hunks. */
function hunksMissed(s: RunState): string[] {
  if (s.settings.witness !== "hunks") return [];
  return leafIds(s).filter((id) => {
    const t = s.tasks[id]!;
    return t.status === "done" && t.hunks !== undefined && t.hunks.unwitnessed.length + t.hunks.untried > 0;
  });
}

/** The done tasks whose evidence does not make them proven, as `id (evidence)`. */
function unproven(s: RunState): string[] {
  return leafIds(s)
    .filter((id) => s.tasks[id]!.status === "done")
    .filter((id) => {
      const t = s.tasks[id]!;
      if (t.evidence === "changed_judges") return t.judgeChanges?.approved == null;
      return !["witnessed", "already_done", "no_behaviour"].includes(t.evidence ?? "unverified");
    })
    .map((id) => `${id} (${s.tasks[id]!.evidence ?? "unverified"})`);
}

const result = (name: string, tier: CheckTier, passed: boolean): CheckResult => ({
  name,
  tier,
  passed,
  exitCode: passed ? 0 : 1,
  failedTests: passed ? [] : [`${name} case`],
  output: passed ? "ok" : `${name} failed`,
  durationMs: 3,
});

/** The answer the world gives to `a`, handed out in `state`, and when it arrives. */
function answer(sim: Sim, state: RunState, a: RunAction, now: number): Pending | null {
  const { seed, mode } = sim;
  if (a.kind === "finish") return null;
  const task = "task" in a ? a.task : "";
  const attempt = task === "" ? 0 : state.tasks[task]!.attempts;
  // In orderly mode nothing may depend on when or in what order things happen, only on the task.
  const key = mode === "orderly" ? `${task}/${attempt}/${a.kind}` : `${task}/${attempt}/${a.kind}/${a.ref}`;
  const r = (...parts: (string | number)[]) => rand(seed, key, ...parts);
  const span = (min: number, max: number) => min + Math.floor(r("duration") * (max - min));
  const tier = (name: string) => state.checks[name]!.tier;
  const ref = a.ref;
  let event: RunEvent;
  let due: number;
  switch (a.kind) {
    case "check_noop":
      due = now + span(10, 1000);
      event = {
        kind: "noop.checked",
        at: due,
        ref,
        task,
        results: a.checks.map((n) => result(n, tier(n), rand(seed, task, "noop", n) < 0.3)),
      };
      break;
    case "run_agent": {
      due = now + span(100, 5000);
      const x = r("outcome");
      const outcome: Extract<RunEvent, { kind: "agent.finished" }>["outcome"] =
        mode === "orderly"
          ? "ok"
          : mode === "eventual"
            ? a.attempt === 1 && x < 0.25
              ? x < 0.12
                ? "failed"
                : "transient"
              : "ok"
            : x < 0.1
              ? "failed"
              : x < 0.22
                ? "transient"
                : x < 0.235
                  ? "budget_paused"
                  : "ok";
      event = {
        kind: "agent.finished",
        at: due,
        ref,
        task,
        attempt: a.attempt,
        outcome,
        turns: 4,
        tokens: 1200,
        costUsd: 0.02,
        summary: outcome,
        linesChanged: Math.floor(r("lines") * 200),
        filesChanged: ["src/x.ts"],
        boundaryTouched: r("boundary") < 0.3,
        // Now and then, in chaos, the agent touched what judges its work (the shell undid it and says so).
        ...(mode === "chaos" && r("tamper") < 0.04
          ? { tampering: ["the agent moved reins/r from aaaa to bbbb (a commit or a reset): put back"] }
          : {}),
      };
      break;
    }
    case "run_checks": {
      due = now + span(10, 1000);
      const red = (n: string) =>
        mode === "eventual"
          ? attempt <= 1 && rand(seed, task, "red", n) < 0.4
          : mode === "orderly"
            ? rand(seed, task, attempt, "red", n) < 0.3
            : r("red", n) < 0.2;
      event = {
        kind: "checks.ran",
        at: due,
        ref,
        task,
        results: a.checks.map((n) => result(n, tier(n), !red(n))),
      };
      break;
    }
    case "witness": {
      // The counterfactual: in chaos a check mostly goes red without the change (witnessed), now and then
      // none does; elsewhere the checks always witness the change.
      due = now + span(10, 1000);
      const seen = mode !== "chaos" || r("witness") < 0.85;
      event = {
        kind: "witness.ran",
        at: due,
        ref,
        task,
        setAside: ["src/x.ts"],
        results: a.checks.map((n, i) => result(n, tier(n), !(seen && i === 0))),
        // Now and then the agent changed a judge (a test there before, a script, a conftest.py), and the
        // checks passed with the judges as they were, or only through the change.
        ...(mode === "chaos" && r("edited") < 0.1
          ? {
              judges: {
                kept: ["test/y.test.ts"],
                keptTotal: 1,
                changed: ["test/x.test.ts"],
                diff: "--- test/x.test.ts\n-expect(1)\n+expect(2)",
                passedAsTheyWere: r("as-they-were") < 0.5,
              },
            }
          : {}),
        // The hunk tier: now and then a hunk no check sees alone.
        ...(a.hunks > 0
          ? {
              hunks: {
                total: 2,
                unwitnessed:
                  mode === "chaos" && r("hunk") < 0.2
                    ? [{ file: "src/x.ts", lines: "3-4", context: "f" }]
                    : [],
                untried: 0,
                ran: Math.min(2, a.hunks),
                allowed: a.hunks,
              },
            }
          : {}),
      };
      break;
    }
    case "commit": {
      due = now + span(1, 50);
      const x = r("commit");
      const conflict = mode === "chaos" ? x < 0.08 : mode === "eventual" && attempt === 1 && x < 0.2;
      const broken = mode === "chaos" && x >= 0.08 && x < 0.12;
      event =
        conflict || broken
          ? { kind: "commit.failed", at: due, ref, task, reason: "merge", conflict }
          : { kind: "task.committed", at: due, ref, task, commit: `sha-${task}-${attempt}` };
      break;
    }
    case "rollback":
      due = now + span(1, 50);
      event = { kind: "task.rolled_back", at: due, ref, task, to: "base" };
      break;
    case "wait":
      // Now and then the shell wakes a little early: the core must wait again, not start early.
      due = mode === "chaos" && r("early") < 0.1 && a.until - 1 > now ? a.until - 1 : Math.max(now, a.until);
      event = { kind: "clock.ticked", at: due, ref };
      break;
    case "write_report":
      due = now + 1;
      event = { kind: "report.written", at: due, ref, path: "report.md" };
      break;
  }
  return { due, tie: r("tie"), event, action: a };
}

/**
 * Runs a plan through the simulated shell until the core finishes (or `bound` events), checking every
 * step. `bump` changes the plan before the start (for the metamorphic laws).
 */
function simulate(sim: Sim, plan: Plan, settingsInput: RunSettingsInput, bound = 3000): Trace {
  const start = {
    kind: "run.started",
    at: 0,
    run: "sim",
    nodes: plan.nodes,
    checks: plan.checks,
    settings: resolveSettings(settingsInput),
  } as const;
  const tally = newTally(start.settings);
  const first = begin(start);
  let state = sim.freeze === true ? deepFreeze(first.state) : first.state;
  checkStep(tally, initialRunState(start), start, first);
  const trace: Trace = { events: [], steps: [first], start, tally };
  let pending: Pending[] = [];
  let now = 0;
  const answered: RunEvent[] = [];
  const take = (r: StepResult) => {
    for (const a of r.actions) {
      const p = answer(sim, r.state, a, now);
      if (p !== null) pending.push(p);
    }
  };
  const feed = (event: RunEvent): StepResult => {
    const r = step(state, event);
    checkStep(tally, state, event, r);
    trace.events.push(event);
    trace.steps.push(r);
    state =
      sim.roundTrip === true && rand(sim.seed, "json", trace.events.length) < 0.2 ? json(r.state) : r.state;
    if (sim.freeze === true) deepFreeze(state);
    take(r);
    return r;
  };
  take(first);
  let resumes = 0;
  for (let i = 0; i < bound; i++) {
    if (state.finished !== null) {
      // A run that ended unproven (paused) is resumed now and then, as a person would.
      if (sim.mode === "chaos" && !state.finished.proven && resumes < 2 && rand(sim.seed, "again", i) < 0.5) {
        resumes += 1;
        pending = [];
        // Half the time the person approved the edited tests that held it.
        const approvals = awaiting(state)
          .filter((task) => rand(sim.seed, "approve", i, task) < 0.5)
          .map((task) => ({ task, by: "alice", reason: "read the diff" }));
        feed({ kind: "run.resumed", at: now, commits: {}, ...(approvals.length > 0 ? { approvals } : {}) });
        continue;
      }
      return trace;
    }
    const x = sim.mode === "chaos" ? rand(sim.seed, "inject", i) : 1;
    if (x < 0.025 && resumes < 3) {
      // A crash: answers in flight are lost; a commit that landed just before is found in git.
      resumes += 1;
      const commits: Record<string, string> = {};
      for (const p of pending)
        if (p.event.kind === "task.committed" && rand(sim.seed, "landed", i, p.event.task) < 0.5)
          commits[p.event.task] = p.event.commit;
      pending = [];
      feed({ kind: "run.resumed", at: now, commits });
      continue;
    }
    if (x < 0.1 && answered.length > 0) {
      // An answer already applied comes again: nothing changes.
      const old = answered[Math.floor(rand(sim.seed, "dup", i) * answered.length)]!;
      const before = state;
      const r = feed({ ...old, at: now });
      expect(r.decisions).toEqual([expect.objectContaining({ kind: "ignored" })]);
      expect(r.state).toBe(before);
      continue;
    }
    if (x < 0.105) {
      feed({ kind: "run.paused", at: now, reason: "budget guard" });
      continue;
    }
    if (x < 0.115) {
      const target = plan.nodes[Math.floor(rand(sim.seed, "cancel", i) * plan.nodes.length)]!.id;
      feed({ kind: "task.canceled", at: now, task: target, by: "ana", reason: "dropped" });
      continue;
    }
    if (pending.length === 0) throw new Error(`stuck after ${trace.events.length} events: nothing in flight`);
    pending.sort((a, b) => a.due - b.due || a.tie - b.tie);
    const next = pending.shift()!;
    now = Math.max(now, next.due);
    const r = feed(next.event);
    if (!r.decisions.some((d) => d.kind === "ignored")) answered.push(next.event);
  }
  throw new Error(`no finish after ${bound} events`);
}

const json = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------------------
// What every step must keep.
// ---------------------------------------------------------------------------------------------------------

interface Tally {
  settings: RunSettings;
  agents: number;
  slow: number;
  hunks: number;
  retries: Map<string, number>;
  /** Per task, the step at which an action for it was first handed out. */
  firstStart: Map<string, number>;
  steps: number;
}

const newTally = (settings: RunSettings): Tally => ({
  settings,
  agents: 0,
  slow: 0,
  hunks: 0,
  retries: new Map(),
  firstStart: new Map(),
  steps: 0,
});

const leafIds = (state: RunState) => Object.keys(state.tasks);

/** A cheap assertion for the checks run on every step (expect's bookkeeping would dominate the run time). */
function ok(holds: boolean, message: () => string): void {
  if (!holds) throw new Error(message());
}

const show = (value: unknown) => JSON.stringify(value);

function checkStep(tally: Tally, before: RunState, event: RunEvent, r: StepResult): void {
  const s = r.state;
  const settings = s.settings;
  tally.steps += 1;
  if (r.decisions.some((d) => d.kind === "ignored")) {
    // Law 4: an event that answers nothing changes nothing, not even seq or now.
    ok(
      r.state === before && r.actions.length === 0 && r.decisions.length === 1,
      () => `${event.kind} ignored, yet changed`,
    );
    return;
  }
  // The hunk tier gives back the runs it was allowed and did not spend.
  if (event.kind === "witness.ran" && event.hunks !== undefined)
    tally.hunks -= Math.max(0, event.hunks.allowed - event.hunks.ran);

  // Every status change is an allowed transition, recorded in order.
  const running = new Map(
    Object.entries(before.tasks).map(([id, t]) => [id, { status: t.status, permanent: t.permanent }]),
  );
  for (const d of r.decisions) {
    if (d.kind !== "transition") continue;
    const t = running.get(d.task)!;
    ok(d.from === t.status && canTransition(t.status, t.permanent, d.to), () => `bad transition ${show(d)}`);
    t.status = d.to;
    t.permanent = d.to === "failed" ? s.tasks[d.task]!.permanent : false;
  }
  for (const [id, t] of running)
    ok(s.tasks[id]!.status === t.status, () => `${id} changed status unrecorded`);

  // Actions: each carries the step's ref and is in flight under its key; finish ends the run.
  const open = leafIds(s).filter((id) => !isTerminal(s.tasks[id]!));
  for (const a of r.actions) {
    if (a.kind === "finish") {
      ok(s.finished?.proven === a.proven, () => "finish disagrees with the state");
      // Law 6, at the end: a run proven done has every task terminal and nothing in flight.
      ok(!a.proven || (open.length === 0 && Object.keys(s.inFlight).length === 0), () => "proven while open");
      // Law 8: "proven" never holds while a done task is unwitnessed or unverified, nor after an agent
      // touched what judges the work, nor while tests its agent changed while red await a person.
      ok(!a.proven || unproven(s).length === 0, () => `proven with ${unproven(s).join(", ")} not witnessed`);
      ok(!a.proven || tampered(s).length === 0, () => `proven after ${tampered(s).join(", ")} tampered`);
      ok(
        !a.proven || awaiting(s).length === 0,
        () => `proven while ${awaiting(s).join(", ")} await approval`,
      );
      continue;
    }
    const key = "task" in a ? a.task : "";
    ok(a.ref === s.seq && s.inFlight[key] === a.kind, () => `${show(a)} not in flight with the step's ref`);
    if (a.kind === "run_agent") tally.agents += 1;
    if (a.kind === "check_noop" || a.kind === "run_checks")
      tally.slow += a.checks.filter((n) => s.checks[n]!.tier === "slow").length;
    if (a.kind === "witness") tally.hunks += a.hunks;
    const fresh = a.kind === "check_noop" || (a.kind === "run_agent" && a.attempt === 1);
    if (!fresh) continue;
    // Fix-only: no new leaf starts while an open leaf is red.
    const red = open.filter((id) => s.tasks[id]!.fixOnly);
    ok(red.length === 0, () => `${a.task} started while ${red.join(", ")} red`);
    // Dependencies: every leaf under every dep of the leaf and of its ancestors is done.
    for (const w of waitsFor(Object.values(s.nodes), a.task))
      ok(s.tasks[w]!.status === "done", () => `${a.task} started before ${w} was done`);
    if (!tally.firstStart.has(a.task)) tally.firstStart.set(a.task, tally.steps);
  }
  for (const d of r.decisions)
    if (d.kind === "retry_queued") {
      const k = `${d.task}/${d.class}`;
      tally.retries.set(k, (tally.retries.get(k) ?? 0) + 1);
    }

  // WIP: never more leaves in flight than the limit.
  ok(leavesInFlight(s).length <= settings.wip, () => `wip exceeded: ${show(s.inFlight)}`);

  // Law 5, budgets: attempts, retries per class, iterations and slow checks stay within their caps.
  ok(s.iterations === tally.agents && s.iterations <= settings.maxIterations, () => "iterations miscounted");
  ok(
    s.slowCheckRuns === tally.slow && s.slowCheckRuns <= settings.slowCheckRuns,
    () => "slow checks overrun",
  );
  ok((s.hunkRuns ?? 0) === tally.hunks && (s.hunkRuns ?? 0) <= settings.hunkRuns, () => "hunk runs overrun");
  for (const [id, t] of Object.entries(s.tasks)) {
    ok(t.attempts <= settings.maxAttempts, () => `${id} past its attempts`);
    for (const cls of ["checks", "agent", "transient", "conflict"] as FailureClass[]) {
      const cap = settings.retries[cls];
      ok(t.failures[cls] <= cap + 1, () => `${id} failed ${cls} past its retries`);
      ok(t.failures[cls] <= cap || isTerminal(t), () => `${id} goes on past its ${cls} retries`);
      ok((tally.retries.get(`${id}/${cls}`) ?? 0) <= cap, () => `${id} retried ${cls} too often`);
    }
  }

  // Aggregates: a failed leaf makes every ancestor failed; done means all done; pending means none started.
  const agg = aggregates(s);
  const nodes = Object.values(s.nodes);
  for (const n of nodes) {
    if (n.children.length === 0) continue;
    const statuses: TaskStatus[] = leavesIn(nodes, n.id).map((l) => s.tasks[l]!.status);
    const has = (x: TaskStatus) => statuses.includes(x);
    const a = agg[n.id];
    const why = () => `${n.id} is ${a} over ${statuses.join(", ")}`;
    ok(has("failed") === (a === "failed"), why);
    ok(statuses.every((x) => x === "done") === (a === "done"), why);
    ok(!statuses.every((x) => x === "pending") || a === "pending", why);
    ok(!(has("in_progress") || has("verifying")) || a === "in_progress" || a === "failed", why);
  }

  // Law 6: the done proof never holds while a task is runnable, in flight or awaiting a retry.
  const proof = doneProof(s);
  if (proof.holds) {
    ok(Object.keys(s.inFlight).length === 0, () => "proof holds with work in flight");
    ok(candidates(s, agg).length === 0, () => "proof holds with a task runnable");
    ok(open.length === 0, () => `proof holds with ${open.join(", ")} open`);
  }
  if (event.kind === "report.written")
    expect(r.decisions.find((d) => d.kind === "proof")).toEqual({ kind: "proof", proof });
}

const finishOf = (t: Trace) => t.steps.flatMap((r) => r.actions).find((a) => a.kind === "finish");

// ---------------------------------------------------------------------------------------------------------
// The laws.
// ---------------------------------------------------------------------------------------------------------

describe("plans", () => {
  it("a plan is rejected, naming a real cycle, exactly when some unit of work waits for itself", () => {
    fc.assert(
      fc.property(planArb, (plan) => {
        const start = {
          kind: "run.started",
          at: 0,
          run: "r",
          nodes: plan.nodes,
          checks: plan.checks,
        } as const;
        let error: unknown = null;
        try {
          initialRunState({ ...start, settings: resolveSettings() });
        } catch (e) {
          error = e;
        }
        expect(error !== null).toBe(cyclic(plan.nodes));
        if (error === null) return;
        expect(ReinsError.is(error) && error.code).toBe("invalid_plan");
        const named = /dependency cycle: (.*)$/.exec((error as Error).message)![1]!.split(" → ");
        expect(named[0]).toBe(named[named.length - 1]);
        // Each step of the cycle is a real wait: a dep, a child waiting for its parent's start, or a parent
        // waiting for its child.
        for (let i = 0; i + 1 < named.length; i++) {
          const a = plan.nodes.find((n) => n.id === named[i])!;
          const b = named[i + 1]!;
          expect(a.deps.includes(b) || a.parent === b || a.children.includes(b), `${a.id} → ${b}`).toBe(true);
        }
      }),
      run(600),
    );
  });
});

const acyclic = planArb.filter((p) => !cyclic(p.nodes));

describe("laws under random failures, timings, crashes and repeats", () => {
  it("keeps every invariant on every step, never writes to a state it is given, and always finishes; proven exactly when every task is over, every done task witnessed, no agent tampered and no changed judge awaits approval", () => {
    let tamperedRuns = 0;
    let awaitingRuns = 0;
    let approvedRuns = 0;
    fc.assert(
      fc.property(acyclic, settingsArb, fc.integer(), (plan, settings, seed) => {
        const trace = simulate({ seed, mode: "chaos", freeze: true }, plan, settings);
        const end = trace.steps[trace.steps.length - 1]!.state;
        if (tampered(end).length > 0) tamperedRuns += 1;
        if (awaiting(end).length > 0) awaitingRuns += 1;
        if (Object.values(end.tasks).some((t) => t.judgeChanges?.approved != null)) approvedRuns += 1;
        const finish = finishOf(trace);
        const allOver = leafIds(end).every((id) => isTerminal(end.tasks[id]!));
        expect(end.finished).toEqual({
          proven:
            allOver &&
            unproven(end).length === 0 &&
            tampered(end).length === 0 &&
            awaiting(end).length === 0 &&
            hunksMissed(end).length === 0,
        });
        // Proven never holds while a judge was changed without a person's approval.
        if (end.finished?.proven === true)
          for (const t of Object.values(end.tasks))
            if (t.status === "done" && t.judgeChanges !== undefined)
              expect(t.judgeChanges.approved).not.toBeNull();
        expect(finish).toBeDefined();
        // Liveness without a pause or the iteration cap: the run ends with every task over.
        if (end.paused === null && end.iterations < end.settings.maxIterations) expect(allOver).toBe(true);
      }),
      run(500),
    );
    // The tampering the shell reports is drawn often enough for the law to be tried.
    expect(tamperedRuns).toBeGreaterThan(10);
    // So are tests an agent changed while red, awaiting a person and approved by one.
    expect(awaitingRuns).toBeGreaterThan(5);
    expect(approvedRuns).toBeGreaterThan(5);
  });

  it("law 1, determinism: the same events give the same states, actions and decisions, through JSON too", () => {
    fc.assert(
      fc.property(acyclic, settingsArb, fc.integer(), (plan, settings, seed) => {
        const a = simulate({ seed, mode: "chaos" }, plan, settings);
        const b = simulate({ seed, mode: "chaos", roundTrip: true }, plan, settings);
        expect(b.events).toEqual(a.events);
        expect(b.steps).toEqual(a.steps);
        // Replaying the recorded events alone gives every step again.
        let r = begin(a.start);
        expect(r).toEqual(a.steps[0]);
        a.events.forEach((e, i) => {
          r = step(r.state, e);
          expect(r).toEqual(a.steps[i + 1]);
        });
      }),
      run(150),
    );
  });

  it("law 4, idempotent replay: feeding the event just applied again changes nothing", () => {
    fc.assert(
      fc.property(acyclic, settingsArb, fc.integer(), (plan, settings, seed) => {
        const t = simulate({ seed, mode: "chaos" }, plan, settings);
        t.events.forEach((e, i) => {
          const answers = "ref" in e;
          const r = t.steps[i + 1]!;
          if (!answers || r.decisions.some((d) => d.kind === "ignored")) return;
          const again = step(r.state, e);
          expect(again.state).toBe(r.state);
          expect(again.actions).toEqual([]);
          expect(again.decisions).toEqual([expect.objectContaining({ kind: "ignored", event: e.kind })]);
        });
      }),
      run(100),
    );
  });
});

describe("liveness", () => {
  it("law 7: when every task eventually succeeds, the run finishes with every task done, in bounded steps, proven when every task has a check", () => {
    fc.assert(
      fc.property(acyclic, settingsArb, fc.integer(), (plan, settings, seed) => {
        const generous = {
          ...settings,
          maxAttempts: Math.max(settings.maxAttempts ?? 0, 2),
          retries: { checks: 1, agent: 1, transient: 1, conflict: 1 },
          maxIterations: 100,
        };
        const leaves = plan.nodes.filter((n) => n.children.length === 0).length;
        // Per task: a no-op check, two iterations each with two gates and a commit, a wait and a rollback.
        const bound = 4 + leaves * 12;
        const t = simulate({ seed, mode: "eventual" }, plan, generous, bound);
        const end = t.steps[t.steps.length - 1]!.state;
        for (const id of leafIds(end)) expect(end.tasks[id]!.status).toBe("done");
        // Proven unless a task no check verifies ran (checks here always witness the change they see).
        const unchecked = leafIds(end).filter((id) => end.tasks[id]!.evidence === "unverified");
        expect(unproven(end)).toEqual(unchecked.map((id) => `${id} (unverified)`));
        expect(finishOf(t)).toEqual({ kind: "finish", proven: unchecked.length === 0 });
      }),
      run(300),
    );
  });
});

describe("metamorphic laws", () => {
  it("law 2, monotonic priority: raising a task's priority never schedules it later", () => {
    fc.assert(
      fc.property(
        acyclic,
        settingsArb,
        fc.integer(),
        fc.nat(),
        fc.integer({ min: 1, max: 4 }),
        (plan, s, seed, pick, by) => {
          const leaves = plan.nodes.filter((n) => n.children.length === 0);
          const target = leaves[pick % leaves.length]!.id;
          const raised = json(plan);
          raised.nodes.find((n) => n.id === target)!.priority += by;
          const before = simulate({ seed, mode: "chaos" }, plan, s).tally.firstStart.get(target);
          const after = simulate({ seed, mode: "chaos" }, raised, s).tally.firstStart.get(target);
          if (before !== undefined) expect(after).toBeLessThanOrEqual(before);
        },
      ),
      run(250),
    );
  });

  it("law 3, non-interference: an unrelated independent task does not reorder the others", () => {
    fc.assert(
      fc.property(
        acyclic,
        settingsArb,
        fc.integer(),
        fc.integer({ min: -1, max: 4 }),
        (plan, s, seed, priority) => {
          // One slot, only red checks (fixed at once) and unlimited budgets that the newcomer could spend.
          const settings = { ...s, wip: 1, slowCheckRuns: 1000, maxIterations: 1000 };
          const extra = json(plan);
          extra.nodes.push(planNode("newcomer", { priority }));
          const order = (t: Trace) =>
            [...t.tally.firstStart.entries()]
              .sort((a, b) => a[1] - b[1])
              .map(([id]) => id)
              .filter((id) => id !== "newcomer");
          const without = simulate({ seed, mode: "orderly" }, plan, settings);
          const withIt = simulate({ seed, mode: "orderly" }, extra, settings);
          expect(order(withIt)).toEqual(order(without));
        },
      ),
      run(250),
    );
  });
});
