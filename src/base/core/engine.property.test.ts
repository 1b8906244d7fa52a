/**
 * Property tests of the engine (docs/architecture.md, "The pure cores and the shell": the core is pure and
 * deterministic).
 *
 * Every property runs with a fixed seed, so a run is reproducible bit for bit. When one fails, fast-check
 * prints the seed, the path of the shrunk counterexample and the counterexample itself, e.g.
 *   Property failed after 12 tests { seed: 20261101, path: "11:3:0", endOnFailure: true }
 * To rerun exactly that case, pass those values to the failing `fc.assert`, e.g.
 *   fc.assert(property, { seed: 20261101, path: "11:3:0", endOnFailure: true })
 * or try other seeds with `REINS_SEED=123 npx vitest run src/base/core/engine.property.test.ts`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Decision, GuardVerdict } from "./decision.js";
import { advance, decide, replay } from "./engine.js";
import type { BudgetResource, CompletionLevel, Outcome, ReinsEvent, ToolTouch } from "./reins-event.js";
import { gradeOf } from "./grade.js";
import { defaultGuards } from "./guards/index.js";
import { defaultPolicy, resolvePolicy, type Policy } from "./policy.js";
import { initialState, type State } from "./state.js";
import { advise, deny, pass, stop, type Guard } from "./guard.js";
import { applyEvent } from "./reduce.js";
import { pipeline } from "./pipeline.js";
import { recorded } from "./recorded.js";
import { rebuild } from "./snapshot.js";

/** The seed of every property in this file; REINS_SEED overrides it for exploring. */
const SEED = Number(process.env.REINS_SEED ?? 20261101);

const run = (numRuns: number) => ({ seed: SEED, numRuns });

// ---------------------------------------------------------------------------------------------------------
// Arbitraries: realistic event sequences over a small alphabet, so repeats happen often and guards trip.
// ---------------------------------------------------------------------------------------------------------

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event without its time and scope: those are added when a sequence is laid out. */
type Body = DistributiveOmit<ReinsEvent, "at" | "scope">;

const TOOLS = ["Bash", "Read", "Edit", "Write", "Grep"];
const COMMANDS = ["npm test", "npm  test", "npm run lint", "npm run build", "git status", "ls -la"];
const PATHS = ["src/a.ts", "src/b.ts", "README.md", "test/a.test.ts"];
const INPUTS = ["in-1", "in-2", "in-3", "in-4"];
const SHAPES = ["shape-1", "shape-2"];
const OUTPUTS = ["out-1", "out-2", "out-3"];
const ERRORS = ["err-1", "err-2"];
const TASKS = ["t1", "t2", "t3"];
const TASK_TYPES = ["planning", "implement", "review", "test", "unknown-type"];
const CHECKS = ["tests", "lint", "build", "task", "typecheck"];
const LEVELS: CompletionLevel[] = ["session", "task", "component", "module"];
const RESOURCES: BudgetResource[] = ["tokens", "tokens", "tokens", "usd", "toolCalls", "wallTimeMs"];

const T0 = 1_790_000_000_000;

/** A tool call: its request, and how it completes (`outcome: null` means it never completes). */
interface CallSpec extends ToolTouch {
  outcome: Outcome | null;
  outputHash?: string;
  errorHash?: string;
  exitCode?: number;
}

const callArb: fc.Arbitrary<CallSpec> = fc.record(
  {
    tool: fc.constantFrom(...TOOLS),
    inputHash: fc.constantFrom(...INPUTS),
    shapeHash: fc.constantFrom(...SHAPES),
    command: fc.constantFrom(...COMMANDS),
    reads: fc.subarray(PATHS, { minLength: 1, maxLength: 2 }),
    writes: fc.subarray(PATHS, { minLength: 1, maxLength: 2 }),
    linesChanged: fc.integer({ min: 0, max: 400 }),
    outcome: fc.constantFrom<Outcome | null>("success", "success", "success", "failure", "timeout", null),
    outputHash: fc.constantFrom(...OUTPUTS),
    errorHash: fc.constantFrom(...ERRORS),
    exitCode: fc.constantFrom(0, 1, 2),
  },
  { requiredKeys: ["tool", "inputHash", "outcome"] },
);

const tokensArb = (max: number) => fc.integer({ min: 0, max });

const usageArb = fc
  .record(
    {
      inputTokens: tokensArb(20_000),
      outputTokens: tokensArb(5_000),
      cacheReadTokens: tokensArb(60_000),
      cacheWriteTokens: tokensArb(5_000),
      costUsd: fc.constantFrom(0, 0.01, 0.25, 1.5),
      premiumRequests: fc.constantFrom(0, 1),
    },
    { requiredKeys: [] },
  )
  .map((u): Body => ({ kind: "usage.recorded", ...u }));

const verificationArb = fc
  .record(
    {
      name: fc.constantFrom(...CHECKS),
      passed: fc.boolean(),
      score: fc.constantFrom(0, 0.25, 0.5, 0.75, 0.9, 1),
      tier: fc.constantFrom("fast" as const, "medium" as const, "slow" as const),
      flagged: fc.subarray(PATHS, { maxLength: 2 }),
      command: fc.constantFrom(...COMMANDS),
    },
    { requiredKeys: ["name", "passed"] },
  )
  .map((v): Body => ({ kind: "verification.ran", ...v }));

const by = "tester";

const humanArb: fc.Arbitrary<Body> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .record(
        {
          resource: fc.constantFrom(...RESOURCES),
          amount: fc.constantFrom(1_000, 10_000, 50_000, 200_000),
          meter: fc.constantFrom("session" as const, "task" as const),
        },
        { requiredKeys: ["resource", "amount"] },
      )
      .map((e): Body => ({ kind: "human.budget_extended", by, ...e })),
  },
  { weight: 1, arbitrary: fc.constant<Body>({ kind: "human.budget_reset", by }) },
  { weight: 3, arbitrary: fc.constant<Body>({ kind: "human.circuit_acknowledged", by }) },
  { weight: 2, arbitrary: fc.constant<Body>({ kind: "human.circuit_reset", by, reason: "try again" }) },
  { weight: 1, arbitrary: fc.constant<Body>({ kind: "human.alert_acknowledged", by, alertId: "a-1" }) },
  { weight: 2, arbitrary: fc.constant<Body>({ kind: "human.confirmed", by }) },
);

const otherArb: fc.Arbitrary<Body> = fc.oneof(
  { weight: 4, arbitrary: usageArb },
  { weight: 3, arbitrary: verificationArb },
  {
    weight: 2,
    arbitrary: fc
      .record({ outcome: fc.constantFrom("success" as const, "failure" as const) }, { requiredKeys: [] })
      .map((e): Body => ({ kind: "iteration.ended", ...e })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(...LEVELS).map((level): Body => ({ kind: "completion.claimed", level })),
  },
  {
    weight: 2,
    arbitrary: fc
      .record(
        { task: fc.constantFrom(...TASKS), taskType: fc.constantFrom(...TASK_TYPES) },
        { requiredKeys: ["task"] },
      )
      .map((e): Body => ({ kind: "task.started", ...e })),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({
        task: fc.constantFrom(...TASKS),
        status: fc.constantFrom("done" as const, "failed" as const, "canceled" as const),
      })
      .map((e): Body => ({ kind: "task.ended", ...e })),
  },
  { weight: 1, arbitrary: fc.constant<Body>({ kind: "session.started", agent: "claude" }) },
  { weight: 1, arbitrary: fc.constant<Body>({ kind: "session.ended" }) },
  { weight: 3, arbitrary: humanArb },
);

/** What one step of a sequence does. */
type Action =
  | { k: "call"; call: CallSpec }
  /** The scope's last call again, `n` times. */
  | { k: "repeat"; n: number }
  /** The scope's last two calls in turn, `n` more times each: A-B-A-B. */
  | { k: "alternate"; n: number }
  | { k: "event"; body: Body };

/** One step: which scope, how long after that scope's previous step, the task it names, what happens. */
interface Step {
  scope: number;
  gap: number;
  task?: string;
  action: Action;
}

/** Time between steps: mostly seconds, sometimes none, sometimes minutes (past the 60 s cooldowns). */
const gapArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 3_000 }) },
  { weight: 1, arbitrary: fc.constant(0) },
  { weight: 1, arbitrary: fc.integer({ min: 60_000, max: 900_000 }) },
);

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 8, arbitrary: callArb.map((call): Action => ({ k: "call", call })) },
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 6 }).map((n): Action => ({ k: "repeat", n })) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 4 }).map((n): Action => ({ k: "alternate", n })) },
  { weight: 8, arbitrary: otherArb.map((body): Action => ({ k: "event", body })) },
);

const stepArb = (scopes: number): fc.Arbitrary<Step> =>
  fc.record(
    {
      scope: fc.integer({ min: 0, max: scopes - 1 }),
      gap: gapArb,
      task: fc.constantFrom(...TASKS),
      action: actionArb,
    },
    { requiredKeys: ["scope", "gap", "action"] },
  );

const stepsArb = (scopes: number, maxLength: number) =>
  fc.array(stepArb(scopes), { minLength: 1, maxLength, size: "max" });

const scopeName = (i: number) => `session:s${i}`;

/** The request and, unless it never completes, the completion of a call. */
function callEvents(call: CallSpec, at: number, scope: string, task: string | undefined): ReinsEvent[] {
  const { outcome, outputHash, errorHash, exitCode, ...touch } = call;
  const base = { scope, ...(task !== undefined ? { task } : {}), ...touch };
  const request: ReinsEvent = { kind: "tool.requested", at, ...base };
  if (outcome === null) return [request];
  const completion: ReinsEvent = {
    kind: "tool.completed",
    at: at + 500,
    ...base,
    outcome,
    ...(outputHash !== undefined ? { outputHash } : {}),
    ...(errorHash !== undefined && outcome !== "success" ? { errorHash } : {}),
    ...(exitCode !== undefined ? { exitCode } : {}),
  };
  return [request, completion];
}

/** Lays steps out as events, with times non-decreasing per scope; also says each scope's last two calls. */
function layOut(steps: readonly Step[]): ReinsEvent[] & { lastCalls: Map<number, CallSpec[]> } {
  const clocks = new Map<number, number>();
  const lastCalls = new Map<number, CallSpec[]>();
  const events: ReinsEvent[] = [];
  for (const step of steps) {
    const scope = scopeName(step.scope);
    let at = (clocks.get(step.scope) ?? T0 + step.scope * 7) + step.gap;
    const { action } = step;
    if (action.k === "event") {
      const body = action.body;
      const task = "task" in body ? {} : step.task !== undefined ? { task: step.task } : {};
      events.push({ ...task, ...body, at, scope });
    } else {
      const recent = lastCalls.get(step.scope) ?? [];
      let calls: CallSpec[];
      if (action.k === "call") calls = [action.call];
      else if (action.k === "repeat")
        calls = recent.length === 0 ? [] : Array<CallSpec>(action.n).fill(recent.at(-1)!);
      else calls = recent.length < 2 ? [] : Array.from({ length: 2 * action.n }, (_, i) => recent[i % 2]!);
      for (const call of calls) {
        events.push(...callEvents(call, at, scope, step.task));
        at += 1_000;
      }
      lastCalls.set(step.scope, [...recent, ...calls].slice(-2));
    }
    clocks.set(step.scope, at + 1_000);
  }
  return Object.assign(events, { lastCalls });
}

const eventsArb = (scopes: number, maxLength: number) => stepsArb(scopes, maxLength).map(layOut);

/** Runs events through one state per scope with `advance`, as a store would. */
function runAll(
  events: readonly ReinsEvent[],
  policy: Policy,
  states = new Map<string, State>(),
): { decisions: Decision[]; states: Map<string, State> } {
  const decisions: Decision[] = [];
  for (const event of events) {
    let state = states.get(event.scope);
    if (state === undefined) {
      state = initialState(event.scope);
      states.set(event.scope, state);
    }
    decisions.push(advance(state, event, policy));
  }
  return { decisions, states };
}

const jsonCopy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Freezes a state and everything in it, so that writing any part of it throws. */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Where `value` holds something JSON would not give back as it is: NaN, ±Infinity, -0, undefined. */
function notJson(value: unknown): string[] {
  const bad: string[] = [];
  JSON.stringify(value, (key, v: unknown) => {
    if (v === undefined || (typeof v === "number" && (!Number.isFinite(v) || Object.is(v, -0))))
      bad.push(`${key}: ${String(v)}`);
    return v;
  });
  return bad;
}

/** The blocking guards of a decision, for readable failure messages. */
const blockers = (d: Decision) => d.results.filter((r) => r.verdict === "block").map((r) => r.guard);

// ---------------------------------------------------------------------------------------------------------

describe("engine properties (seeded fast-check)", () => {
  it("1. is deterministic: the same events give the same decisions, also across a JSON snapshot", () => {
    fc.assert(
      fc.property(eventsArb(3, 150), fc.nat(), (events, cutSeed) => {
        expect(replay(defaultPolicy, events)).toStrictEqual(replay(defaultPolicy, events));

        const whole = runAll(events, defaultPolicy);
        const cut = cutSeed % (events.length + 1);
        const before = runAll(events.slice(0, cut), defaultPolicy);
        // The store's round trip: each scope's state is written as JSON and read back.
        const thawed = new Map([...before.states].map(([scope, state]) => [scope, jsonCopy(state)]));
        const after = runAll(events.slice(cut), defaultPolicy, thawed);
        expect(before.decisions).toStrictEqual(whole.decisions.slice(0, cut));
        expect(after.decisions).toStrictEqual(whole.decisions.slice(cut));
        expect(Object.fromEntries(after.states)).toStrictEqual(Object.fromEntries(whole.states));
      }),
      run(200),
    );
  });

  it("1c. rebuilds exactly: a snapshot at any cut plus the logged records after it is the state advance kept", () => {
    // Tight budgets and a custom guard that trips the breaker, so effects of every kind are in the records.
    const policy = resolvePolicy({ budget: { session: { tokens: 40_000, toolCalls: 60 } } });
    const tripOnLint: Guard = {
      name: "no-lint",
      order: 5,
      category: "tool-discipline",
      shortCircuit: false,
      grades: ["stop"],
      evaluate: (_state, event) =>
        event.kind === "tool.requested" && event.command === "npm run lint"
          ? stop("no-lint", "no lint", {
              effects: [{ kind: "circuit.opened", reason: "repeated_error", detail: "lint" }],
            })
          : pass("no-lint"),
    };
    const guards = pipeline([...defaultGuards, tripOnLint]);
    fc.assert(
      fc.property(eventsArb(2, 150), fc.nat(), (events, cutSeed) => {
        const states = new Map<string, State>();
        const snapshots = new Map<string, State>();
        const tails = new Map<string, { event: ReinsEvent; decision: Decision }[]>();
        const cut = cutSeed % (events.length + 1);
        const snapshot = () => {
          for (const [scope, state] of states) snapshots.set(scope, jsonCopy(state));
        };
        events.forEach((event, i) => {
          if (i === cut) snapshot();
          let state = states.get(event.scope);
          if (state === undefined) states.set(event.scope, (state = initialState(event.scope)));
          const decision = advance(state, event, policy, guards);
          if (i >= cut) {
            const tail = tails.get(event.scope) ?? [];
            tails.set(event.scope, [...tail, jsonCopy({ event, decision })]);
          }
        });
        if (cut === events.length) snapshot();
        for (const [scope, state] of states) {
          const fromSnapshot = snapshots.has(scope) ? jsonCopy(snapshots.get(scope)!) : null;
          const rebuilt = rebuild(scope, fromSnapshot, tails.get(scope) ?? [], policy);
          expect(rebuilt).toStrictEqual(jsonCopy(state));
        }
      }),
      run(200),
    );
  });

  it("1d. asks a guard only about the kinds it answers: to every other event it answers its pass, unasked", () => {
    // Tight limits, so the guards have something to say; the same guards without `answers` are asked always.
    const policy = resolvePolicy({ budget: { session: { tokens: 40_000, toolCalls: 60 } } });
    const asked = pipeline(defaultGuards.map(({ answers: _answers, ...guard }) => guard));
    let skipped = 0;
    fc.assert(
      fc.property(eventsArb(2, 150), (events) => {
        expect(replay(policy, events)).toStrictEqual(replay(policy, events, asked));
        const states = new Map<string, State>();
        for (const event of events) {
          let state = states.get(event.scope);
          if (state === undefined) states.set(event.scope, (state = initialState(event.scope)));
          advance(state, event, policy);
          for (const guard of defaultGuards)
            if (guard.answers !== undefined && !guard.answers.includes(event.kind)) {
              expect(guard.evaluate(state, event, policy), `${guard.name} on ${event.kind}`).toBe(
                pass(guard.name),
              );
              skipped += 1;
            }
        }
      }),
      run(200),
    );
    expect(skipped).toBeGreaterThan(0);
  });

  it("1e. gives every decision the results a plain walk of the pipeline gives, whatever the lists it shares", () => {
    // A guard that cuts the pipeline short with one constant answer, and one asked about every event that
    // answers with the same object or a new one: the engine's shared lists must never stand in for them.
    const cut = Object.freeze(deny("cut", "cut short"));
    const cutter: Guard = {
      name: "cut",
      order: 150,
      category: "tool-discipline",
      shortCircuit: true,
      grades: ["deny"],
      answers: ["tool.requested"],
      evaluate: (_state, event) =>
        event.kind === "tool.requested" && event.command === "npm run lint" ? cut : pass("cut"),
    };
    const odd: Guard = {
      name: "odd",
      order: 160,
      category: "tool-discipline",
      shortCircuit: false,
      grades: ["advise"],
      evaluate: (state) => (state.seq % 3 === 0 ? advise("odd", `seq ${state.seq}`) : pass("odd")),
    };
    const guards = pipeline([...defaultGuards, cutter, odd]);
    const policy = resolvePolicy({ budget: { session: { tokens: 40_000, toolCalls: 60 } } });
    fc.assert(
      fc.property(eventsArb(2, 150), (events) => {
        const states = new Map<string, State>();
        for (const event of events) {
          let state = states.get(event.scope);
          if (state === undefined) states.set(event.scope, (state = initialState(event.scope)));
          // What the guards see: the state after the event's facts, before the decision's effects.
          const seen = jsonCopy(state);
          applyEvent(seen, event, policy);
          const plain: GuardVerdict[] = [];
          if (!event.kind.startsWith("human."))
            for (const guard of guards) {
              const result = recorded(guard, guard.evaluate(seen, event, policy));
              plain.push(result);
              if (result.verdict === "block" && guard.shortCircuit) break;
            }
          expect(advance(state, event, policy, guards).results).toStrictEqual(plain);
        }
      }),
      run(100),
    );
  });

  it("1b. keeps a state that is plain JSON, even fed extreme numbers", () => {
    // Numbers no agent reports but a buggy shell or a hostile caller could: huge, infinite, negative, NaN.
    const wild = fc.oneof(fc.double(), fc.constantFrom(Number.MAX_VALUE, 1e308, -1, Infinity, NaN));
    const extremeArb: fc.Arbitrary<Body> = fc.oneof(
      fc
        .record({
          inputTokens: wild,
          outputTokens: wild,
          cacheWriteTokens: wild,
          costUsd: wild,
          premiumRequests: wild,
        })
        .map((u): Body => ({ kind: "usage.recorded", ...u })),
      fc
        .record({ resource: fc.constantFrom(...RESOURCES), amount: wild })
        .map((e): Body => ({ kind: "human.budget_extended", by, ...e })),
      fc
        .record({ score: wild, passed: fc.boolean() })
        .map((v): Body => ({ kind: "verification.ran", name: "tests", ...v })),
      fc.record({ linesChanged: wild }).map((t): Body => ({
        kind: "tool.requested",
        tool: "Edit",
        inputHash: "in-1",
        writes: ["src/a.ts"],
        ...t,
      })),
    );
    const mixed = fc.array(
      fc.oneof(
        stepArb(1),
        fc.record({
          scope: fc.constant(0),
          gap: gapArb,
          action: extremeArb.map((body): Action => ({ k: "event", body })),
        }),
      ),
      { minLength: 1, maxLength: 100, size: "max" },
    );
    fc.assert(
      fc.property(mixed, (steps) => {
        const state = initialState(scopeName(0));
        for (const event of layOut(steps)) {
          advance(state, event, defaultPolicy);
          expect(notJson(state), `after ${JSON.stringify(event)}`).toEqual([]);
        }
        expect(jsonCopy(state)).toStrictEqual(state);
      }),
      run(150),
    );
  });

  it("2. decide is pure: the state it is given is left untouched", () => {
    fc.assert(
      fc.property(eventsArb(1, 120), (events) => {
        let state = initialState(scopeName(0));
        const owned = initialState(scopeName(0));
        for (const event of events) {
          const before = JSON.stringify(state);
          const { state: next, decision } = decide(state, event, defaultPolicy);
          // States are plain JSON, so equal JSON text means untouched (and it is much faster than a deep equal).
          expect(JSON.stringify(state)).toBe(before);
          expect(next).not.toBe(state);
          // And it decides exactly like `advance` on a state of its own.
          expect(decision).toStrictEqual(advance(owned, event, defaultPolicy));
          state = next;
        }
        expect(state).toStrictEqual(owned);
      }),
      run(150),
    );
  });

  it("2b. decide copies on write: a frozen state decides like advance, and no earlier state ever changes", () => {
    // Tight limits and a timed half-open, so budget effects, breaker moves and every reducer path write.
    const policies = [
      defaultPolicy,
      resolvePolicy({
        budget: { session: { tokens: 30_000, toolCalls: 40 }, task: { tokens: 8_000 } },
        circuit: { autoHalfOpenMs: 30_000, cooldownMs: 5_000 },
        iterations: { max: 4 },
      }),
    ];
    fc.assert(
      fc.property(fc.constantFrom(...policies.keys()), eventsArb(1, 150), (which, events) => {
        const policy = policies[which] ?? defaultPolicy;
        let state = deepFreeze(initialState(scopeName(0)));
        const owned = initialState(scopeName(0));
        const seen: [State, string][] = [];
        for (const event of events) {
          // Frozen: a write to any part shared with the input throws (a guard's would turn into a warning,
          // which the comparison with advance catches).
          const { state: next, decision } = decide(state, event, policy);
          expect(decision).toStrictEqual(advance(owned, event, policy));
          expect(next).toStrictEqual(owned);
          seen.push([state, JSON.stringify(state)]);
          state = deepFreeze(next);
        }
        for (const [earlier, text] of seen) expect(JSON.stringify(earlier)).toBe(text);
      }),
      run(80),
    );
  });

  it("2c. decide never changes its input over a long mixed session: each state deep-equals its clone after", () => {
    // Long sessions of every kind of event, under the tight policy too (budget effects, breaker moves), so
    // every path of the reducer writes; a write through a part shared with the input would show here.
    const tight = resolvePolicy({
      budget: { session: { tokens: 60_000, toolCalls: 400 }, task: { tokens: 16_000 } },
      circuit: { autoHalfOpenMs: 30_000, cooldownMs: 5_000 },
    });
    fc.assert(
      fc.property(fc.boolean(), eventsArb(1, 1_000), (strict, events) => {
        const policy = strict ? tight : defaultPolicy;
        let state = initialState(scopeName(0));
        const kept: [State, State][] = [];
        for (const [i, event] of events.entries()) {
          // Every input against its JSON text (fast, and it sees key order); every 20th against a deep clone.
          const text = JSON.stringify(state);
          const before = i % 20 === 0 ? structuredClone(state) : undefined;
          const next = decide(state, event, policy).state;
          expect(JSON.stringify(state)).toBe(text);
          if (before !== undefined) {
            expect(state).toStrictEqual(before);
            // Later decisions share parts with earlier states too: these are checked again at the end.
            kept.push([state, before]);
          }
          state = next;
        }
        for (const [earlier, clone] of kept) expect(earlier).toStrictEqual(clone);
      }),
      run(4),
    );
  });

  describe("3. budget", () => {
    /** Tokens a usage event charges under a policy that does not count cache reads. */
    const charged = (e: ReinsEvent) =>
      e.kind === "usage.recorded"
        ? (e.inputTokens ?? 0) + (e.outputTokens ?? 0) + (e.cacheWriteTokens ?? 0)
        : 0;
    const spending = new Set(["tool.requested", "task.started", "usage.recorded"]);

    /**
     * Checks one run against a model of the session token budget: spent = the usage since the last budget
     * reset, whatever the verdicts; limit = the policy's plus the human extensions since that reset.
     */
    function checkBudget(events: ReinsEvent[], limit: number, mode: "hard" | "soft"): number {
      const policy = resolvePolicy({ budget: { mode, session: { tokens: limit } } });
      expect(policy.budget.countCacheReads).toBe(false);
      const state = initialState(scopeName(0));
      let spent = 0;
      let extra = 0;
      let paused = false;
      let task = "";
      let pauses = 0;
      events.forEach((event, i) => {
        if (event.task !== undefined && event.task !== "") task = event.task;
        spent += charged(event);
        if (event.kind === "human.budget_reset") [spent, extra, paused] = [0, 0, false];
        if (event.kind === "human.budget_extended" && event.resource === "tokens") {
          if (event.meter !== "task" || task === "") extra += event.amount;
        }
        const wasPaused = paused;
        const decision = advance(state, event, policy);
        const where = `event ${i} (${event.kind}), spent ${spent} of ${limit}+${extra}`;
        expect(state.budget.session.spent.tokens, where).toBe(spent);

        const budgetResult = decision.results.find((r) => r.guard === "budget");
        if (mode === "soft") {
          expect(budgetResult?.verdict, where).not.toBe("block");
          return;
        }
        if (event.kind === "human.budget_extended" && paused) paused = spent >= limit + extra;
        if (wasPaused && spending.has(event.kind)) {
          // Paused: nothing that spends gets through until a person extends or resets the budget.
          expect(decision.verdict, where).toBe("block");
          expect(decision.needsHuman, where).toBe(true);
        }
        if (!paused && spent >= limit + extra) {
          // The first event at or past 100% is blocked by the budget, and asks for a person.
          expect(event.kind, where).toBe("usage.recorded");
          expect(budgetResult?.verdict, where).toBe("block");
          expect(decision.needsHuman, where).toBe(true);
          expect(state.budget.session.paused, where).toBe("tokens");
          paused = true;
          pauses += 1;
        }
        expect(state.budget.session.paused !== null, where).toBe(paused);
      });
      return pauses;
    }

    const limitArb = fc.integer({ min: 5_000, max: 150_000 });

    it("hard mode: spent = sum of usage, the first event at 100% is blocked, nothing passes a pause", () => {
      let pauses = 0;
      fc.assert(
        fc.property(eventsArb(1, 150), limitArb, (events, limit) => {
          pauses += checkBudget(events, limit, "hard");
        }),
        run(250),
      );
      expect(pauses).toBeGreaterThan(100);
    });

    it("soft mode: spent = sum of usage and the budget guard never blocks", () => {
      fc.assert(
        fc.property(eventsArb(1, 150), limitArb, (events, limit) => {
          checkBudget(events, limit, "soft");
        }),
        run(150),
      );
    });

    it("counts cache reads only when the policy says so", () => {
      fc.assert(
        fc.property(eventsArb(1, 80), (events) => {
          const policy = resolvePolicy({ budget: { countCacheReads: true, session: { tokens: null } } });
          const { states } = runAll(events, policy);
          let spent = 0;
          for (const e of events) {
            if (e.kind === "human.budget_reset") spent = 0;
            if (e.kind === "usage.recorded") spent += charged(e) + (e.cacheReadTokens ?? 0);
          }
          expect(states.get(scopeName(0))?.budget.session.spent.tokens ?? 0).toBe(spent);
        }),
        run(100),
      );
    });
  });

  it("4. is monotone: one more identical call never turns a block into an allow", () => {
    const K = 8;
    const blockedBy = new Map<string, number>();
    fc.assert(
      fc.property(
        eventsArb(1, 60),
        fc.oneof(callArb, fc.constantFrom(1, 2)),
        fc.array(gapArb, { minLength: K, maxLength: K }),
        fc.constantFrom(...TASKS, undefined),
        fc.boolean(),
        (prefix, pick, gaps, task, resetFirst) => {
          // The repeated call: a new one, or one of the prefix's last two (continuing a repeat or an A-B-A-B).
          const call = typeof pick === "number" ? prefix.lastCalls.get(0)?.at(-pick) : pick;
          if (call === undefined) return;
          const scope = scopeName(0);
          const state = initialState(scope);
          for (const event of prefix) advance(state, event, defaultPolicy);
          let at = (prefix[prefix.length - 1]?.at ?? T0) + 1_000;
          // Half the time a person closes the breaker first, so the other guards get their say.
          if (resetFirst) advance(state, { kind: "human.circuit_reset", by, at, scope }, defaultPolicy);
          const verdicts: string[] = [];
          for (const gap of gaps) {
            at += gap;
            const [request, completion] = callEvents(call, at, scope, task);
            const decision = advance(state, request!, defaultPolicy);
            const previous = verdicts[verdicts.length - 1];
            verdicts.push(decision.verdict);
            for (const g of blockers(decision)) blockedBy.set(g, (blockedBy.get(g) ?? 0) + 1);
            if (previous === "block") {
              expect(decision.verdict, `calls so far: ${verdicts.join(", ")}`).toBe("block");
            }
            // A blocked call never runs, so only an allowed one gets its (always the same) result.
            if (decision.verdict !== "block" && completion !== undefined)
              advance(state, completion, defaultPolicy);
            at += 1_000;
          }
        },
      ),
      run(400),
    );
    console.log("identical calls blocked by", Object.fromEntries(blockedBy));
    expect([...blockedBy.keys()]).toEqual(expect.arrayContaining(["circuit-breaker", "circular"]));
  });

  it("5. does not interfere: another session's events never change a session's decisions", () => {
    fc.assert(
      fc.property(eventsArb(2, 160), (events) => {
        const mixed = replay(defaultPolicy, events);
        const a = scopeName(0);
        const alone = replay(
          defaultPolicy,
          events.filter((e) => e.scope === a),
        );
        expect(mixed.filter((_, i) => events[i]?.scope === a)).toStrictEqual(alone);
      }),
      run(200),
    );
  });

  it("6. answers only in each guard's declared grades: only evidence stops, rules of thumb advise or deny", () => {
    const byName = new Map(defaultGuards.map((g) => [g.name, g]));
    const seen = new Set<string>();
    fc.assert(
      fc.property(eventsArb(1, 150), (events) => {
        const policy = resolvePolicy({ budget: { session: { tokens: 100_000 } } });
        for (const d of replay(policy, events)) {
          for (const r of d.results) {
            const grade = gradeOf({ verdict: r.verdict, needsHuman: r.needsHuman ?? false });
            if (grade === "allow") continue;
            seen.add(`${r.guard} ${grade}`);
            expect(byName.get(r.guard)?.grades, `${r.guard} answered ${grade}: ${r.message ?? ""}`).toContain(
              grade,
            );
          }
        }
      }),
      run(100),
    );
    // Not vacuous: the stops and the denies the sequences reach come from the guards that may give them.
    expect([...seen]).toEqual(
      expect.arrayContaining(["circuit-breaker stop", "budget stop", "circular deny"]),
    );
    for (const g of defaultGuards.filter((g) => g.grades.includes("stop")))
      expect(["budget", "churn", "circuit-breaker", "max-iterations"]).toContain(g.name);
  });

  it("the generated sequences do trip guards (the properties are not vacuous)", () => {
    const tripped = new Set<string>();
    fc.assert(
      fc.property(eventsArb(1, 150), (events) => {
        const policy = resolvePolicy({ budget: { session: { tokens: 100_000 } } });
        for (const d of replay(policy, events)) for (const g of blockers(d)) tripped.add(g);
      }),
      run(100),
    );
    expect([...tripped].sort()).toEqual(
      expect.arrayContaining(["budget", "circuit-breaker", "circular", "completion-gate", "loop-patterns"]),
    );
  });
});
