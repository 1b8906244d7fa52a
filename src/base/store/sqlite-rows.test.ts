/** A decision as a SQLite store keeps it reads back as the decision it was, whatever its results. */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { decisionOf, type Decision } from "../core/decision.js";
import { readTrace } from "../trace/trace.js";
import { decisionFromJson, decisionJson } from "./sqlite-rows.js";

const TRACES = join(import.meta.dirname, "..", "..", "..", "test", "traces");

/** Every decision the golden traces recorded: passes, advice, denials, stops, alerts, effects. */
function recordedDecisions(): Decision[] {
  return readdirSync(TRACES)
    .filter((name) => name.endsWith(".jsonl"))
    .flatMap((name) =>
      readTrace(join(TRACES, name)).lines.flatMap((l) => (l.decision === null ? [] : [l.decision])),
    );
}

describe("a decision as a SQLite row keeps it", () => {
  const decisions = recordedDecisions();

  it("reads back byte for byte as the decision the API serves", () => {
    expect(decisions.length).toBeGreaterThan(500);
    const grades = new Set(decisions.map((d) => `${d.verdict}/${d.needsHuman}`));
    // The traces hold every grade, so each form of a result is read back.
    expect([...grades].sort()).toEqual([
      "allow/false",
      "block/false",
      "block/true",
      "warn/false",
      "warn/true",
    ]);
    for (const decision of decisions)
      expect(JSON.stringify(decisionFromJson(decision.seq, decisionJson(decision)))).toBe(
        JSON.stringify(decision),
      );
  });

  it("is well under half the size of the whole decision", () => {
    let whole = 0;
    let kept = 0;
    for (const decision of decisions) {
      whole += JSON.stringify(decision).length;
      kept += decisionJson(decision).length;
    }
    expect(kept / whole).toBeLessThan(0.5);
  });

  it("keeps what is not a bare pass whole, even a result that allows", () => {
    const noted = {
      guard: "budget",
      verdict: "allow" as const,
      effects: [{ kind: "rate.fired" as const, window: 3 }],
    };
    const decision = decisionOf(7, [{ guard: "pricing", verdict: "allow" }, noted]);
    expect(JSON.parse(decisionJson(decision))).toEqual({ verdict: "allow", results: ["pricing", noted] });
    expect(decisionFromJson(7, decisionJson(decision))).toEqual(decision);
  });

  it("reads a decision written whole before, its seq from the JSON", () => {
    const decision = decisionOf(3, [{ guard: "circular", verdict: "block", message: "same edit again" }]);
    expect(decisionFromJson(99, JSON.stringify(decision))).toEqual(decision);
  });

  it("is not fooled by a guard named like an inherited property", () => {
    const decision = decisionOf(1, [
      { guard: "__proto__", verdict: "allow" },
      { guard: "constructor", verdict: "allow" },
    ]);
    const back = decisionFromJson(1, decisionJson(decision));
    expect(back.results.map((r) => r.guard)).toEqual(["__proto__", "constructor"]);
    expect(Object.getPrototypeOf(back.results[0])).toBe(Object.prototype);
  });
});
