/** Tests of reading every scope's state once for many readers. */
import { describe, expect, it } from "vitest";
import type { ReinsEvent } from "../base/core/reins-event.js";
import { defaultPolicy } from "../base/core/policy.js";
import { MemoryStore } from "../base/store/memory.js";
import { StateScan } from "./scan.js";

/** A memory store that counts full passes over its scopes. */
async function countingStore(scopes: number) {
  const store = new MemoryStore();
  for (let i = 0; i < scopes; i++) {
    const event: ReinsEvent = { kind: "session.started", at: i, scope: `session:${i}`, id: `e${i}` };
    await store.append(event.scope, [event], defaultPolicy);
  }
  let passes = 0;
  const scopesOf = store.scopes.bind(store);
  store.scopes = () => {
    passes += 1;
    return scopesOf();
  };
  return { store, passes: () => passes };
}

describe("reading every state for many readers", () => {
  it("runs one pass for readers that ask at once, and reuses it until the server writes", async () => {
    const { store, passes } = await countingStore(30);
    let now = 0;
    const scan = new StateScan(store, 100, 1_000, () => now);
    const all = await Promise.all(Array.from({ length: 50 }, () => scan.states()));
    expect(passes()).toBe(1);
    expect(all.every((states) => states.length === 30)).toBe(true);
    await scan.states();
    expect(passes()).toBe(1);
    // A write: the next read after the minimum interval passes again, not one before it.
    scan.invalidate();
    now += 50;
    await scan.states();
    expect(passes()).toBe(1);
    now += 60;
    await scan.states();
    expect(passes()).toBe(2);
  });

  it("shows what other processes wrote within its maximum age, though this server wrote nothing", async () => {
    const { store, passes } = await countingStore(3);
    let now = 0;
    const scan = new StateScan(store, 100, 1_000, () => now);
    expect(await scan.states()).toHaveLength(3);
    // An in-process hook, the CLI or another machine appends to the shared store.
    const event: ReinsEvent = { kind: "session.started", at: 9, scope: "session:other", id: "other" };
    await store.append(event.scope, [event], defaultPolicy);
    now += 500;
    expect(await scan.states()).toHaveLength(3);
    now += 500;
    expect(await scan.states()).toHaveLength(4);
    expect(passes()).toBe(2);
  });
});
