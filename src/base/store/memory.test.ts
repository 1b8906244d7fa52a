import { describe, expect, it } from "vitest";
import { defaultPolicy, resolvePolicy, timeline } from "../core/index.js";
import { MemoryStore } from "./memory.js";

const session = (n: number) => {
  const t = timeline({ scope: "session:m", start: 1_790_000_000_000 });
  for (let i = 0; t.events.length < n; i++) t.bash(`npm test -- ${i % 3}`, { ok: i % 4 !== 0 });
  return t.events.slice(0, n);
};

describe("the memory store", () => {
  it("keeps the state in place and puts it back when an append fails part way", async () => {
    const store = new MemoryStore();
    const events = session(70);
    await store.append("session:m", events.slice(0, 45), defaultPolicy);
    const before = await store.state("session:m");
    // The second event cannot be written as JSON: the first has already changed the state in place.
    const poisoned = { ...events[46]!, model: 1n as unknown as string };
    await expect(store.append("session:m", [events[45]!, poisoned], defaultPolicy)).rejects.toThrow();
    expect(await store.state("session:m")).toEqual(before);
    await store.append("session:m", events.slice(45), defaultPolicy);
    const whole = new MemoryStore();
    await whole.append("session:m", events, defaultPolicy);
    expect(await store.state("session:m")).toEqual(await whole.state("session:m"));
  });

  it("puts a state back under the policy its records were decided under", async () => {
    const store = new MemoryStore();
    const counting = resolvePolicy({ budget: { countCacheReads: true } });
    const usage = (n: number) => ({
      kind: "usage.recorded" as const,
      scope: "session:u",
      at: 1_790_000_000_000 + n,
      inputTokens: 10,
      cacheReadTokens: 100,
    });
    // A snapshot after the first append; the second's record follows it, decided under the same policy.
    await store.append("session:u", [usage(0)], counting);
    await store.append("session:u", [usage(1)], counting);
    const before = await store.state("session:u");
    expect(before?.budget.session.spent.tokens).toBe(220);
    // Under another policy the failed append is undone with the policy the second record was decided under.
    await expect(
      store.append("session:u", [usage(2), { ...usage(3), model: 1n as unknown as string }], defaultPolicy),
    ).rejects.toThrow();
    expect(await store.state("session:u")).toEqual(before);
    await store.append("session:u", [usage(2)], defaultPolicy);
    expect((await store.state("session:u"))?.budget.session.spent.tokens).toBe(230);
  });
});
