import { describe, expect, it } from "vitest";
import { advance, decide, replay } from "./engine.js";
import type { ReinsEvent } from "./reins-event.js";
import { advise, pass, type Guard } from "./guard.js";
import { pipeline } from "./pipeline.js";
import { defaultPolicy } from "./policy.js";
import { initialState } from "./state.js";
import { toolRequest } from "#test/tool-request.js";

const call = (n: number, command = `ls ${n}`): ReinsEvent => toolRequest(n, { scope: "session:d", command });

describe("decisions' lists", () => {
  it("are shared and frozen when guards answer alike, and a decision with something to say keeps its own", () => {
    const decisions = replay(defaultPolicy, [call(1), call(2), call(3)]);
    const [a, b, c] = decisions;
    expect(a?.verdict).toBe("allow");
    expect(b?.results).toBe(a?.results);
    expect(c?.results).toBe(a?.results);
    for (const d of decisions) {
      expect(Object.isFrozen(d.results)).toBe(true);
      expect(Object.isFrozen(d.instructions)).toBe(true);
      expect(d.instructions).toEqual([]);
      expect(d.alerts).toEqual([]);
    }
    expect(() => (a?.results as unknown[]).push(null)).toThrow(TypeError);
    expect(b?.results).toHaveLength(a?.results.length ?? -1);
  });

  it("come out the same from replay whether the events are a list or any other iterable", () => {
    const events = [call(1), call(2, "npm test"), call(3)];
    function* generated() {
      yield* events;
    }
    expect(replay(defaultPolicy, generated())).toStrictEqual(replay(defaultPolicy, events));
    expect(replay(defaultPolicy, new Set(events))).toHaveLength(3);
  });

  it("are right for a guard that asks an engine itself, and for the guards after it", () => {
    const inner: Guard = {
      name: "inner",
      order: 0,
      category: "tool-discipline",
      shortCircuit: false,
      grades: ["advise"],
      evaluate: (_state, event) => {
        // Re-entrant: the engine runs a whole pipeline while this guard is being asked.
        const nested = advance(initialState(event.scope), event, defaultPolicy);
        return nested.verdict === "allow" ? advise("inner", "nested ran") : pass("inner");
      },
    };
    const after: Guard = { ...inner, name: "after", order: 1, evaluate: () => advise("after", "after ran") };
    const { decision } = decide(initialState("session:d"), call(1), defaultPolicy, pipeline([inner, after]));
    expect(decision.results.map((r) => [r.guard, r.message])).toEqual([
      ["inner", "nested ran"],
      ["after", "after ran"],
    ]);
    expect(decision.instructions).toEqual(["nested ran", "after ran"]);
  });
});
