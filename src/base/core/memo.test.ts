import { describe, expect, it } from "vitest";
import { memoize } from "./memo.js";

describe("memoize", () => {
  it("answers a text it has seen without asking again, and forgets everything past its size", () => {
    const asked: string[] = [];
    const length = memoize((text) => {
      asked.push(text);
      return text.length;
    }, 2);
    expect([length("a"), length("bb"), length("a")]).toEqual([1, 2, 1]);
    expect(asked).toEqual(["a", "bb"]);
    length("ccc"); // full: forgets "a" and "bb"
    length("a");
    expect(asked).toEqual(["a", "bb", "ccc", "a"]);
  });

  it("never keeps a long text, and remembers an undefined answer like any other", () => {
    let calls = 0;
    const none = memoize(() => {
      calls += 1;
      return undefined;
    });
    const long = "x".repeat(5_000);
    none(long);
    none(long);
    none("short");
    none("short");
    expect(calls).toBe(3);
  });
});
