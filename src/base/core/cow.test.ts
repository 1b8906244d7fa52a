import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { capSet, pushCapped } from "./capped.js";
import { draftOf, inPlace, mine, writable } from "./cow.js";
import { ReinsError } from "./errors.js";
import { emptyMeter, initialState } from "./state.js";

describe("copy-on-write (cow.ts)", () => {
  it("opens a part by copying it once under a draft, and leaves the drafted state as it was", () => {
    const state = initialState("session:s");
    state.churn = { a: { failures: 1, confirmed: 0 } };
    const before = structuredClone(state);
    const { next, draft } = draftOf(state);
    const own = mine(draft, next);
    const churn = writable(draft, own, "churn");
    capSet(churn, "b", { failures: 2, confirmed: 0 }, 16);
    expect(writable(draft, own, "churn")).toBe(churn); // copied once, then its own
    const calls = writable(draft, own, "calls");
    calls.streak += 1;
    pushCapped(writable(draft, calls, "times"), 5, 8);
    expect(state).toStrictEqual(before);
    expect(next.churn).toEqual({ a: { failures: 1, confirmed: 0 }, b: { failures: 2, confirmed: 0 } });
    expect(next.calls.times).toEqual([5]);
    expect(next.budget).toBe(state.budget); // what was not opened is shared
  });

  it("writes a state its caller owns in place, copying nothing", () => {
    const state = initialState("session:s");
    const calls = state.calls;
    const own = mine(inPlace, state);
    writable(inPlace, own, "calls").streak = 3;
    expect(state.calls).toBe(calls);
    expect(state.calls.streak).toBe(3);
  });

  it("refuses to open a part the draft did not make: a shared part is never written", () => {
    const state = initialState("session:s");
    const { draft } = draftOf(state);
    expect(() => mine(draft, state)).toThrow(ReinsError);
    expect(() => mine(draft, state.calls)).toThrow(/shared/);
  });

  it("makes a write to a part not opened a compile error (tsc checks the lines marked below)", () => {
    // Each marked line compiles only if the protection is lost; tsc (`npm run typecheck`) fails then.
    // They run here on a state the test owns, in place, to show there is no proxy and no cost.
    const state = initialState("session:s");
    const own = mine(inPlace, state);
    // @ts-expect-error a nested part is read-only until writable() opens it
    own.calls.streak += 1;
    // @ts-expect-error a shared list cannot be pushed to
    pushCapped(own.calls.times, 1, 8);
    // @ts-expect-error a shared capped map cannot be written
    capSet(own.churn, "t", { failures: 1, confirmed: 0 }, 16);
    // @ts-expect-error only an opened part's parts may be opened: this would write the shared budget
    writable(inPlace, own.budget, "tasks");
    // @ts-expect-error the state a caller hands in is not open until mine() says so
    writable(inPlace, state, "calls");
    // @ts-expect-error a shared map's entry is read-only
    own.budget.tasks.t = emptyMeter(0);
    // Opened, the same writes compile.
    writable(inPlace, own, "calls").streak += 1;
    expect(state.calls.streak).toBe(2);
    expect(state.calls.times).toEqual([1]);
  });
});

describe("the reducer's helpers (reduce.ts, engine.ts, tally.ts)", () => {
  // TypeScript lets a read-only object pass for a mutable one, so a helper declared to take a plain `Calls`
  // would accept a shared part and write it: a helper takes parts as `Own`, `Opened`, `& Mine` or `Shared`.
  const STATE_TYPES =
    /\b(State|Meter|Spend|Calls|Breaker|Tally|RecentCall|Check|Edits|ResourceMemo|ChurnMemo|FileMemo|LastFailure|Record)\b/;
  const WRAPPED = /\b(Own|Opened|Shared)<|& Mine\b/;
  // The entry points take the caller's state and open its top (`mine`, `draftOf`) or only hand it to guards.
  const ENTRIES = new Set([
    "applyEvent",
    "reduce",
    "advance",
    "step",
    "reapply",
    "decide",
    "replay",
    "evaluate",
    "resultOf",
    "tallyOf",
  ]);

  it("take no part of a state as a plain mutable type", () => {
    const found: string[] = [];
    for (const file of ["reduce.ts", "engine.ts", "tally.ts"]) {
      const path = fileURLToPath(new URL(file, import.meta.url));
      const source = ts.createSourceFile(file, readFileSync(path, "utf8"), ts.ScriptTarget.ES2022, true);
      const visit = (node: ts.Node, name: string): void => {
        let within = name;
        if (ts.isFunctionDeclaration(node) && node.name !== undefined) within = node.name.text;
        else if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name)) within = node.name.text;
        if (ts.isParameter(node) && node.type !== undefined && !ENTRIES.has(within)) {
          const type = node.type.getText(source);
          if (STATE_TYPES.test(type) && !WRAPPED.test(type))
            found.push(`${file} ${within}(${node.name.getText(source)}: ${type})`);
        }
        ts.forEachChild(node, (child) => visit(child, within));
      };
      visit(source, "");
    }
    expect(found).toEqual([]);
  });
});
