import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { capSet } from "./capped.js";

/** The seed of the property below; REINS_SEED overrides it for exploring. fast-check prints it on failure. */
const SEED = Number(process.env.REINS_SEED ?? 20261122);

/** One step on a capped map: write a key, or pass the map through JSON as a store does between decisions. */
type Step = { write: string; value: number } | { roundTrip: true };

describe("capSet", () => {
  it("keeps at most cap keys, dropping the oldest, and keeps an updated key's place", () => {
    const map: Record<string, number> = {};
    for (const [i, key] of ["a", "b", "c", "a", "d"].entries()) capSet(map, key, i, 3);
    expect(map).toEqual({ b: 1, c: 2, d: 4 });
    expect(Object.keys(map)).toEqual(["b", "c", "d"]);
  });

  it("counts a map it has not seen, such as one parsed from a stored state", () => {
    const map = JSON.parse('{"a":1,"b":2,"c":3}') as Record<string, number>;
    capSet(map, "d", 4, 3);
    expect(Object.keys(map)).toEqual(["b", "c", "d"]);
  });

  it("behaves as a list of keys in insertion order, through any writes and JSON round trips", () => {
    const step: fc.Arbitrary<Step> = fc.oneof(
      {
        weight: 9,
        arbitrary: fc.record({
          write: fc.constantFrom("k0", "k1", "k2", "k3", "k4", "k5", "k6"),
          value: fc.nat(),
        }),
      },
      { weight: 1, arbitrary: fc.constant({ roundTrip: true as const }) },
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.array(step, { maxLength: 60 }), (cap, steps) => {
        let map: Record<string, number> = {};
        const model: [string, number][] = [];
        for (const s of steps) {
          if ("roundTrip" in s) {
            map = JSON.parse(JSON.stringify(map)) as Record<string, number>;
            continue;
          }
          capSet(map, s.write, s.value, cap);
          const at = model.findIndex(([k]) => k === s.write);
          if (at >= 0) model[at] = [s.write, s.value];
          else {
            model.push([s.write, s.value]);
            if (model.length > cap) model.shift();
          }
          expect(Object.entries(map)).toEqual(model);
        }
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});
