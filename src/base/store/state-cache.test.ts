/** The states stores keep in memory: each store's own bound, and the process's across all its stores. */
import { afterEach, describe, expect, it } from "vitest";
import { boundStoreMemory, cachedStates, StateCache } from "./state-cache.js";

afterEach(() => boundStoreMemory({ states: Number.POSITIVE_INFINITY, pageCacheKib: null }));

describe("StateCache", () => {
  it("keeps at most its own limit, the state written longest ago going first", () => {
    const cache = new StateCache<number>(2);
    cache.set("a", 1);
    cache.set("b", 2);
    cache.set("a", 3);
    cache.set("c", 4);
    expect([cache.has("a"), cache.has("b"), cache.has("c")]).toEqual([true, false, true]);
    expect(cache.get("a")).toBe(3);
    expect(cache.size).toBe(2);
  });

  it("keeps at most the process's limit across caches, letting go of the oldest in whichever cache", () => {
    boundStoreMemory({ states: 3 });
    const [one, two] = [new StateCache<string>(100), new StateCache<string>(100)];
    one.set("s1", "one 1");
    two.set("s1", "two 1");
    one.set("s2", "one 2");
    two.set("s2", "two 2");
    expect(cachedStates()).toBe(3);
    expect(one.has("s1")).toBe(false);
    expect([two.get("s1"), one.get("s2"), two.get("s2")]).toEqual(["two 1", "one 2", "two 2"]);
    // Writing a state again makes it the newest.
    two.set("s1", "two 1 again");
    one.set("s3", "one 3");
    expect([one.has("s2"), two.has("s1"), two.has("s2"), one.has("s3")]).toEqual([false, true, true, true]);
    // A cache that is cleared (its store closed) gives its room back.
    two.clear();
    expect(cachedStates()).toBe(1);
    one.set("s4", "one 4");
    one.set("s5", "one 5");
    expect([one.has("s3"), one.has("s4"), one.has("s5")]).toEqual([true, true, true]);
    one.clear();
  });

  it("trims what is held at once when the process's limit is lowered", () => {
    boundStoreMemory({ states: 10 });
    const cache = new StateCache<number>(100);
    for (let i = 0; i < 10; i++) cache.set(`s${i}`, i);
    boundStoreMemory({ states: 4 });
    expect(cache.size).toBe(4);
    expect(cache.has("s9") && cache.has("s6") && !cache.has("s5")).toBe(true);
    cache.clear();
    expect(cachedStates()).toBe(0);
  });
});
