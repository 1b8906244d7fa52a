/**
 * Hostile input (issue: "never off by accident"): events whose every string field is drawn from values that
 * break naive code: prototype names used as map keys, CR/LF and NUL, lone surrogates, a 10 MB string, and
 * numbers at the limits. The engine never throws on them and keeps a state that round-trips as JSON, with
 * every map still a plain object. Fixed seed; fast-check prints it with the counterexample on failure.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hostileEvents } from "#test/hostile.js";
import { advance, replay } from "./engine.js";
import { defaultPolicy } from "./policy.js";
import { initialState, type State } from "./state.js";

const SEED = Number(process.env.REINS_SEED ?? 20261123);

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
      fc.property(hostileEvents("session:hostile"), (events) => {
        const state: State = initialState("session:hostile");
        for (const event of events) {
          const decision = advance(state, event, defaultPolicy);
          expect(decision.results.filter((r) => r.alert === "guard_failed")).toEqual([]);
        }
        expect(plain(state)).toEqual([]);
        const text = JSON.stringify(state);
        expect(text.length).toBeLessThan(256 * 1024);
        // What is read back is the state itself, key for key and value for value.
        expect(JSON.parse(text)).toStrictEqual(state);
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
