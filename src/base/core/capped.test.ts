import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { capSet, copyMap } from "./capped.js";
import { inPlace, mine } from "./cow.js";

/** A map a test owns, opened for writing (see cow.ts). */
const open = (map: Record<string, number>) => mine(inPlace, map);

/** The seed of the property below; REINS_SEED overrides it for exploring. fast-check prints it on failure. */
const SEED = Number(process.env.REINS_SEED ?? 20261122);

/** One step on a capped map: write a key, or pass the map through JSON as a store does between decisions. */
type Step = { write: string; value: number } | { roundTrip: true };

describe("capSet", () => {
  it("keeps at most cap keys, dropping the oldest, and keeps an updated key's place", () => {
    const map: Record<string, number> = {};
    for (const [i, key] of ["a", "b", "c", "a", "d"].entries()) capSet(open(map), key, i, 3);
    expect(map).toEqual({ b: 1, c: 2, d: 4 });
    expect(Object.keys(map)).toEqual(["b", "c", "d"]);
  });

  it("counts a map it has not seen, such as one parsed from a stored state", () => {
    const map = JSON.parse('{"a":1,"b":2,"c":3}') as Record<string, number>;
    capSet(open(map), "d", 4, 3);
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
          capSet(open(map), s.write, s.value, cap);
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

  it("drops the key JavaScript enumerates first, array indices before other keys, through copies", () => {
    // The reference: scan the map and drop its first keys, which is what JSON writes first.
    const reference = (map: Record<string, number>, key: string, value: number, cap: number) => {
      map[key] = value;
      let excess = Object.keys(map).length - cap;
      for (const k in map) {
        if (excess-- <= 0) break;
        delete map[k];
      }
    };
    const keys = ["a", "b", "c", "d", "0", "7", "10", "01", "4294967294", "4294967295", "-1", "1.5"];
    const step = fc.oneof(
      { weight: 8, arbitrary: fc.record({ write: fc.constantFrom(...keys), value: fc.nat() }) },
      { weight: 1, arbitrary: fc.constant({ copy: true as const }) },
      { weight: 1, arbitrary: fc.constant({ roundTrip: true as const }) },
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.array(step, { maxLength: 80 }), (cap, steps) => {
        let map: Record<string, number> = {};
        let model: Record<string, number> = {};
        for (const s of steps) {
          if ("copy" in s) {
            const before = JSON.stringify(map);
            const copy = copyMap(map);
            capSet(open(copy), "fresh", 0, cap); // writing the copy leaves the original as it was
            expect(JSON.stringify(map)).toBe(before);
            map = copyMap(map);
            continue;
          }
          if ("roundTrip" in s) {
            map = JSON.parse(JSON.stringify(map)) as Record<string, number>;
            continue;
          }
          capSet(open(map), s.write, s.value, cap);
          reference(model, s.write, s.value, cap);
          expect(JSON.stringify(map)).toBe(JSON.stringify(model));
          model = { ...model };
        }
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});
