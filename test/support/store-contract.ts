import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolvePolicy, timeline, type ReinsEvent } from "../../src/core/index.js";
import type { Store } from "../../src/core/store.js";

/**
 * The contract every store passes (memory, SQLite, Redis): the same behaviour through the `Store` port.
 * `open` returns a fresh, empty store each time.
 */
export function storeContract(name: string, open: () => Promise<Store>): void {
  describe(`${name} store contract`, () => {
    let store: Store;
    const policy = resolvePolicy({ budget: { session: { tokens: 10_000 } } });

    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    it("starts empty", async () => {
      expect(await store.scopes()).toEqual([]);
      expect(await store.state("session:none")).toBeNull();
      expect(await store.events("session:none")).toEqual([]);
      expect(await store.alerts()).toEqual([]);
    });

    it("appends events with their decisions and keeps the snapshot equal to a replay", async () => {
      const t = timeline("session:a").started();
      for (let i = 0; i < 6; i++) t.bash("node migrate.js", { ok: false, output: "ECONNREFUSED" });
      const result = await store.append("session:a", t.events, policy);
      expect(result.answers).toHaveLength(t.events.length);
      expect(result.answers.some((a) => a?.verdict === "block")).toBe(true);
      const log = await store.events("session:a");
      expect(log.map((r) => r.seq)).toEqual(t.events.map((_, i) => i));
      expect(log.map((r) => r.event)).toEqual(t.events);
      expect(log.map((r) => r.decision)).toEqual(JSON.parse(JSON.stringify(result.answers)));
      const state = await store.state("session:a");
      expect(state?.seq).toBe(t.events.length);
      expect(state?.breaker.status).toBe("open");
    });

    it("continues a scope across appends as one uninterrupted run would", async () => {
      const t = timeline("session:b").started();
      for (let i = 0; i < 4; i++) t.bash("npm test", { ok: false, output: "1 failed" });
      const whole = (await (await open()).append("session:b", t.events, policy)).answers;
      const firstHalf = await store.append("session:b", t.events.slice(0, 4), policy);
      const secondHalf = await store.append("session:b", t.events.slice(4), policy);
      expect([...firstHalf.answers, ...secondHalf.answers]).toEqual(whole);
    });

    it("applies an event id once, however often it is delivered", async () => {
      const event: ReinsEvent = {
        kind: "usage.recorded",
        at: 1,
        scope: "session:c",
        id: "u-1",
        inputTokens: 100,
      };
      await store.append("session:c", [event], policy);
      const again = await store.append(
        "session:c",
        [event, { ...event, id: "u-2" }, { ...event, id: "u-2" }],
        policy,
      );
      expect(again.answers[0]).toBeNull();
      expect(again.answers[1]).not.toBeNull();
      expect(again.answers[2]).toBeNull();
      expect((await store.state("session:c"))?.budget.session.spent.tokens).toBe(200);
      expect(await store.events("session:c")).toHaveLength(2);
    });

    it("pages a scope's events by sequence number", async () => {
      const t = timeline("session:d").started();
      for (let i = 0; i < 9; i++) t.read(`f${i}.ts`);
      await store.append("session:d", t.events, policy);
      const page = await store.events("session:d", { from: 5, limit: 4 });
      expect(page.map((r) => r.seq)).toEqual([5, 6, 7, 8]);
      expect(await store.events("session:d", { from: 100 })).toEqual([]);
    });

    it("lists scopes, most recently active first", async () => {
      await store.append(
        "session:old",
        timeline({ scope: "session:old", start: 1_000 }).started().events,
        policy,
      );
      await store.append(
        "session:new",
        timeline({ scope: "session:new", start: 9_000 }).started().events,
        policy,
      );
      expect(await store.scopes()).toEqual(["session:new", "session:old"]);
    });

    it("stores alerts, filters them and records who acknowledged one", async () => {
      const t = timeline("session:e").started().usage({ inputTokens: 8_500 }).usage({ inputTokens: 2_000 });
      await store.append("session:e", t.events, policy);
      const alerts = await store.alerts({ scope: "session:e" });
      expect(alerts.map((a) => a.kind)).toEqual(["budget_paused", "budget_warning"]);
      expect(alerts[0]?.id).toBe("session:e#2#0");
      const acked = await store.acknowledgeAlert("session:e#1#0", "ana");
      expect(acked).toMatchObject({ acknowledged: true, acknowledgedBy: "ana", kind: "budget_warning" });
      expect((await store.alerts({ acknowledged: false })).map((a) => a.id)).toEqual(["session:e#2#0"]);
      expect(await store.acknowledgeAlert("nope", "ana")).toBeNull();
    });

    it("charges a pool together with the session and pauses every session once the pool is spent", async () => {
      const pooled = resolvePolicy({ pools: { team: { tokens: 1_000, period: "daily" } } });
      const day = Date.UTC(2026, 0, 5, 10);
      const a = timeline({ scope: "session:p1", start: day }).usage({ inputTokens: 600 });
      const b = timeline({ scope: "session:p2", start: day + 10 })
        .usage({ inputTokens: 500 })
        .bash("ls");
      await store.append("session:p1", a.events, pooled);
      const result = await store.append("session:p2", b.events, pooled);
      expect(result.answers[0]?.verdict).toBe("block");
      expect(result.answers[0]?.instructions.join(" ")).toContain('pool "team"');
      expect(result.answers[1]?.verdict).toBe("block");
      const pool = await store.state("pool:team@2026-01-05");
      expect(pool?.budget.session.spent.tokens).toBe(1_100);
      expect((await store.state("session:p2"))?.budget.session.spent.tokens).toBe(500);
      const nextDay = timeline({ scope: "session:p2", start: day + 86_400_000 }).bash("ls");
      expect((await store.append("session:p2", nextDay.events, pooled)).answers[0]?.verdict).toBe("allow");
    });
  });
}
