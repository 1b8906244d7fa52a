/**
 * Hostile input (issue: "never off by accident"): events whose every string field is drawn from values that
 * break naive code: prototype names used as map keys, CR/LF and NUL, lone surrogates, a 10 MB string, and
 * numbers at the limits. The engine never throws on them and keeps a state that round-trips as JSON, with
 * every map still a plain object. Fixed seed; fast-check prints it with the counterexample on failure.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { replay } from "./engine.js";
import type { ReinsEvent } from "./events.js";
import { defaultPolicy } from "./policy.js";
import { initialState, type State } from "./state.js";
import { advance } from "./engine.js";

const SEED = Number(process.env.REINS_SEED ?? 20261123);

/** Names an object inherits, and other strings that break code which trusts its input. */
export const HOSTILE: readonly string[] = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "valueOf",
  "hasOwnProperty",
  "isPrototypeOf",
  "__defineGetter__",
  "__lookupSetter__",
  "line\r\nevent: record\r\ndata: {}",
  "nul\u0000byte",
  "\ud800",
  "a\udfffb",
  "",
  " ",
  "x".repeat(10 * 1024 * 1024),
];

const str = fc.constantFrom(...HOSTILE);
const num = fc.constantFrom(0, 1, -1, Number.MAX_SAFE_INTEGER, Number.MAX_VALUE, Number.MIN_VALUE, 1e300, -0);

const bodyArb: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.record({ kind: fc.constant("session.started"), agent: str, model: str }),
  fc.record({ kind: fc.constant("task.started"), task: str, taskType: str }),
  fc.record({
    kind: fc.constant("task.ended"),
    task: str,
    status: fc.constantFrom("done", "failed", "canceled"),
  }),
  fc.record({
    kind: fc.constant("tool.requested"),
    task: str,
    tool: str,
    inputHash: str,
    shapeHash: str,
    command: str,
    reads: fc.array(str, { maxLength: 2 }),
    writes: fc.array(str, { maxLength: 2 }),
    linesChanged: num,
    callId: str,
  }),
  fc.record({
    kind: fc.constant("tool.completed"),
    task: str,
    tool: str,
    inputHash: str,
    command: str,
    outcome: fc.constantFrom("success", "failure", "timeout"),
    outputHash: str,
    errorHash: str,
    exitCode: fc.integer(),
  }),
  fc.record({
    kind: fc.constant("usage.recorded"),
    inputTokens: num,
    outputTokens: num,
    cacheReadTokens: num,
    costUsd: num,
    model: str,
  }),
  fc.record({
    kind: fc.constant("verification.ran"),
    task: str,
    name: str,
    passed: fc.boolean(),
    command: str,
    fingerprint: str,
    failing: num,
    flagged: fc.array(str, { maxLength: 2 }),
  }),
  fc.record({ kind: fc.constant("iteration.ended"), outcome: fc.constantFrom("success", "failure") }),
  fc.record({
    kind: fc.constant("completion.claimed"),
    task: str,
    level: fc.constantFrom("session", "task", "component", "module"),
  }),
  fc.record({
    kind: fc.constant("human.budget_extended"),
    by: str,
    reason: str,
    resource: fc.constantFrom("tokens", "usd"),
    amount: num,
  }),
  fc.record({ kind: fc.constant("human.confirmed"), by: str, reason: str }),
  fc.record({ kind: fc.constant("human.circuit_acknowledged"), by: str }),
);

const eventsArb = fc
  .array(bodyArb, { minLength: 1, maxLength: 40 })
  .map((bodies) =>
    bodies.map(
      (b, i) =>
        ({ ...b, at: 1_790_000_000_000 + i * 1000, scope: "session:hostile" }) as unknown as ReinsEvent,
    ),
  );

/** Every object inside a state is a plain object or an array: no map had its prototype replaced. */
function plain(value: unknown, path = "state"): string[] {
  if (value === null || typeof value !== "object") return [];
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== Array.prototype) return [path];
  return Object.entries(value).flatMap(([k, v]) => plain(v, `${path}.${k}`));
}

describe("the engine fed hostile strings (seeded fast-check)", () => {
  it("never throws, and keeps a plain state that round-trips as JSON", () => {
    fc.assert(
      fc.property(eventsArb, (events) => {
        const state: State = initialState("session:hostile");
        for (const event of events) {
          const decision = advance(state, event, defaultPolicy);
          expect(decision.results.filter((r) => r.alert === "guard_failed")).toEqual([]);
        }
        expect(plain(state)).toEqual([]);
        const text = JSON.stringify(state);
        expect(text.length).toBeLessThan(256 * 1024);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(JSON.parse(text))));
        expect(Object.keys(JSON.parse(text) as object)).toEqual(Object.keys(state));
      }),
      { seed: SEED, numRuns: 150 },
    );
  });

  it("treats a task named like an inherited property as any other task", () => {
    for (const task of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      const decisions = replay(defaultPolicy, [
        { kind: "task.started", at: 1, scope: "session:p", task },
        { kind: "usage.recorded", at: 2, scope: "session:p", task, inputTokens: 1_000 },
        {
          kind: "tool.requested",
          at: 3,
          scope: "session:p",
          task,
          tool: task,
          inputHash: task,
          reads: [task],
          writes: [task],
        },
        { kind: "verification.ran", at: 4, scope: "session:p", task, name: task, passed: false },
        { kind: "task.ended", at: 5, scope: "session:p", task, status: "failed" },
      ]);
      for (const d of decisions)
        expect(
          d.results.filter((r) => r.alert === "guard_failed"),
          task,
        ).toEqual([]);
    }
  });
});
