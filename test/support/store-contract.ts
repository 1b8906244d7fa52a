/** The contract every store passes, as a suite each store's tests run. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  defaultGuards,
  deny,
  pass,
  pipeline,
  resolvePolicy,
  timeline,
  type Guard,
  type ReinsEvent,
} from "../../src/base/core/index.js";
import { createGovernor } from "../../src/guard/governor.js";
import { ReinsError } from "../../src/base/core/errors.js";
import type { Store, StoredRun } from "../../src/base/core/store.js";

/**
 * The contract every store passes (memory, SQLite, Redis): the same behaviour through the `Store` port.
 * `open` returns a fresh, empty store each time; `twin`, when the store has one, opens a second instance
 * on the same storage (the same SQLite file, the same Redis keys), as another process would.
 */
export function storeContract(
  name: string,
  open: () => Promise<Store>,
  twin?: (store: Store) => Promise<Store>,
): void {
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
      expect(await store.runs()).toEqual([]);
      expect(await store.run("run-none")).toBeNull();
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

    it("keeps a spec approval as the first event of its own scope, with who, why and the hash", async () => {
      const event: ReinsEvent = {
        kind: "human.spec_approved",
        at: 1_000,
        scope: "spec:docs/spec.md",
        spec: "docs/spec.md",
        hash: "a".repeat(64),
        by: "alice",
        reason: "reviewed",
      };
      const result = await store.append("spec:docs/spec.md", [event], policy);
      expect(result.answers[0]?.verdict).toBe("allow");
      expect((await store.events("spec:docs/spec.md")).map((r) => r.event)).toEqual([event]);
      expect(await store.scopes()).toContain("spec:docs/spec.md");
    });

    it("decides with the caller's own guards when given them, and with the built-in ones otherwise", async () => {
      // A guard of a team's own: no `rm -rf` of anything, ever. The built-in guards allow one.
      const noRmRf: Guard = {
        name: "no-rm-rf",
        order: 5,
        category: "tool-discipline",
        shortCircuit: false,
        grades: ["deny"],
        evaluate: (_state, event) =>
          event.kind === "tool.requested" && /\brm\s+-rf\b/.test(event.command ?? "")
            ? deny("no-rm-rf", "rm -rf is not allowed here.")
            : pass("no-rm-rf"),
      };
      const guards = pipeline([...defaultGuards, noRmRf]);
      const call = (id: string): ReinsEvent => ({
        kind: "tool.requested",
        id,
        at: 1_000,
        scope: "session:g",
        tool: "Bash",
        inputHash: id,
        command: "rm -rf build",
      });
      const plain = await store.append("session:g", [call("c1")], policy);
      expect(plain.answers[0]?.verdict).toBe("allow");
      const own = await store.append("session:g", [call("c2")], policy, guards);
      expect(own.answers[0]).toMatchObject({
        verdict: "block",
        instructions: ["rm -rf is not allowed here."],
      });
      // Through a governor, as a library user records: the option reaches the store.
      const governor = createGovernor({ store, policy, guards: [...defaultGuards, noRmRf] });
      expect((await governor.recordEvent(call("c3")))?.verdict).toBe("block");
      expect((await store.events("session:g")).map((r) => r.decision.verdict)).toEqual([
        "allow",
        "block",
        "block",
      ]);
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

    it("marks an alert acknowledged in the append that records a person's acknowledgement, once", async () => {
      const t = timeline("session:k").started().usage({ inputTokens: 8_500 }).usage({ inputTokens: 2_000 });
      await store.append("session:k", t.events, policy);
      await store.append("session:other", timeline("session:other").started().events, policy);
      const ack = (id: string, alertId: string, by: string, scope = "session:k"): ReinsEvent => ({
        kind: "human.alert_acknowledged",
        alertId,
        by,
        id,
        at: 5_000,
        scope,
      });
      const first = await store.append("session:k", [ack("ack-1", "session:k#1#0", "ana")], policy);
      expect(first.answers[0]?.verdict).toBe("allow");
      const alerts = await store.alerts({ scope: "session:k" });
      expect(alerts.map((a) => [a.id, a.acknowledged, a.acknowledgedBy])).toEqual([
        ["session:k#2#0", false, null],
        ["session:k#1#0", true, "ana"],
      ]);
      // The same event again is a duplicate: no record, and the alert keeps who acknowledged it.
      const again = await store.append("session:k", [{ ...ack("ack-1", "session:k#1#0", "bob") }], policy);
      expect(again.answers).toEqual([null]);
      expect((await store.alerts({ acknowledged: true })).map((a) => a.acknowledgedBy)).toEqual(["ana"]);
      // An acknowledgement recorded in another scope marks none of this scope's alerts.
      await store.append("session:other", [ack("ack-2", "session:k#2#0", "eve", "session:other")], policy);
      expect((await store.alerts({ acknowledged: false })).map((a) => a.id)).toEqual(["session:k#2#0"]);
      const log = await store.events("session:k");
      expect(log.filter((r) => r.event.kind === "human.alert_acknowledged")).toHaveLength(1);
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

    describe("runs", () => {
      const run = (id: string, updatedAt: number, checkpoint: unknown = { step: 1 }): StoredRun => ({
        id,
        status: "running",
        updatedAt,
        summary: { plan: "plan.yaml", tasks: { done: 1, total: 4 }, tokens: 1_200 },
        checkpoint,
      });

      it("saves a run's checkpoint and gives it back whole", async () => {
        const saved = run("run-1", 1_000, { tasks: [{ id: "t1", status: "done" }], seq: 7, note: null });
        await store.saveRun(saved);
        expect(await store.run("run-1")).toEqual(saved);
        expect(await store.runs()).toEqual([
          { id: "run-1", status: "running", updatedAt: 1_000, summary: saved.summary },
        ]);
      });

      it("replaces a run's checkpoint on every save", async () => {
        await store.saveRun(run("run-2", 1_000, { step: 1, left: ["a", "b"] }));
        await store.saveRun({ ...run("run-2", 2_000, { step: 2 }), status: "proven", summary: { tasks: 4 } });
        expect(await store.run("run-2")).toEqual({
          id: "run-2",
          status: "proven",
          updatedAt: 2_000,
          summary: { tasks: 4 },
          checkpoint: { step: 2 },
        });
        expect(await store.runs()).toHaveLength(1);
      });

      it("keeps no reference to what it was given, nor gives one out", async () => {
        const saved = run("run-alias", 1_000, { items: [1, 2] });
        await store.saveRun(saved);
        (saved.checkpoint as { items: number[] }).items.push(3);
        saved.summary.tokens = 0;
        const read = await store.run("run-alias");
        expect(read?.checkpoint).toEqual({ items: [1, 2] });
        (read?.checkpoint as { items: number[] }).items.push(4);
        expect((await store.run("run-alias"))?.checkpoint).toEqual({ items: [1, 2] });
        expect((await store.runs())[0]?.summary.tokens).toBe(1_200);
      });

      it("lists runs most recently updated first, without checkpoints", async () => {
        await store.saveRun(run("run-b", 2_000));
        await store.saveRun(run("run-c", 3_000));
        await store.saveRun(run("run-a", 2_000));
        await store.saveRun(run("run-old", 1_000));
        await store.saveRun(run("run-old", 4_000));
        const listed = await store.runs();
        expect(listed.map((r) => r.id)).toEqual(["run-old", "run-c", "run-a", "run-b"]);
        for (const r of listed) expect(r).not.toHaveProperty("checkpoint");
      });

      it("answers null for a run it never saw", async () => {
        await store.saveRun(run("run-known", 1_000));
        expect(await store.run("run-unknown")).toBeNull();
      });

      it("keeps a 2 MB checkpoint", async () => {
        const big = {
          tasks: Array.from({ length: 2_000 }, (_, i) => ({
            id: `t${i}`,
            log: `${i} ${"é".repeat(500)}x${"y".repeat(500)}`,
          })),
        };
        expect(JSON.stringify(big).length).toBeGreaterThan(2_000_000);
        await store.saveRun(run("run-big", 1_000, big));
        expect((await store.run("run-big"))?.checkpoint).toEqual(big);
        expect((await store.runs()).map((r) => r.id)).toEqual(["run-big"]);
      });

      it("keeps __proto__ and constructor keys as data, polluting no prototype", async () => {
        const hostile = JSON.parse(
          '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}, "ok": 1}',
        ) as Record<string, unknown>;
        await store.saveRun({
          ...run("run-proto", 1_000),
          summary: hostile,
          checkpoint: { nested: hostile },
        });
        const read = await store.run("run-proto");
        const listed = (await store.runs())[0];
        for (const summary of [read?.summary, listed?.summary]) {
          expect(Object.getPrototypeOf(summary)).toBe(Object.prototype);
          expect(Object.hasOwn(summary ?? {}, "__proto__")).toBe(true);
          expect(JSON.stringify(summary)).toBe(JSON.stringify(hostile));
        }
        const nested = (read?.checkpoint as { nested: object }).nested;
        expect(Object.hasOwn(nested, "__proto__")).toBe(true);
        expect(JSON.stringify(nested)).toBe(JSON.stringify(hostile));
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
      });

      it("refuses a run id that is not one short line of [A-Za-z0-9_.:-], with a one-line usage error", async () => {
        for (const id of ["", "a\nb", "run 1", "run/1", "a{b}", "__proto__\r", "é", "x".repeat(129)]) {
          for (const call of [() => store.saveRun(run(id, 1_000)), () => store.run(id)]) {
            const error: unknown = await call().then(
              () => null,
              (e: unknown) => e,
            );
            expect(ReinsError.is(error), JSON.stringify(id)).toBe(true);
            expect((error as ReinsError).code).toBe("usage");
            expect((error as ReinsError).message).not.toMatch(/[\r\n\u2028\u2029]/);
          }
        }
        await store.saveRun(run("A-z_0.9:x".padEnd(128, "x"), 1_000));
        expect(await store.runs()).toHaveLength(1);
      });

      it("refuses a run that is not plain JSON, and keeps the one saved before", async () => {
        await store.saveRun(run("run-bad", 1_000));
        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        for (const bad of [
          { ...run("run-bad", 2_000), checkpoint: undefined },
          run("run-bad", 2_000, cyclic),
          run("run-bad", 2_000, { n: 1n }),
          { ...run("run-bad", 2_000), status: "two\nlines" },
          { ...run("run-bad", 2_000), updatedAt: Number.NaN },
          { ...run("run-bad", 2_000), summary: [] as unknown as Record<string, unknown> },
        ])
          await expect(store.saveRun(bad)).rejects.toMatchObject({ code: "usage" });
        expect(await store.run("run-bad")).toEqual(run("run-bad", 1_000));
      });

      it.skipIf(twin === undefined)(
        "is shared by two instances of the store on the same storage",
        async () => {
          const other = await twin!(store);
          try {
            await store.saveRun(run("run-mine", 1_000, { by: "one" }));
            await other.saveRun(run("run-theirs", 2_000, { by: "two" }));
            expect((await other.run("run-mine"))?.checkpoint).toEqual({ by: "one" });
            expect((await store.run("run-theirs"))?.checkpoint).toEqual({ by: "two" });
            await other.saveRun(run("run-mine", 3_000, { by: "two, later" }));
            expect((await store.run("run-mine"))?.checkpoint).toEqual({ by: "two, later" });
            for (const s of [store, other])
              expect((await s.runs()).map((r) => r.id)).toEqual(["run-mine", "run-theirs"]);
          } finally {
            await other.close();
          }
        },
      );

      it.skipIf(twin === undefined)(
        "shows a reader on another instance a run's old checkpoint or its new one, whole",
        async () => {
          const other = await twin!(store);
          const version = (v: number): StoredRun => ({
            ...run("run-race", v, { v, pad: String(v).repeat(50_000) }),
            status: `v${v}`,
          });
          try {
            let writing = true;
            const writes = (async () => {
              for (let v = 1; v <= 30; v++) await other.saveRun(version(v));
              writing = false;
            })();
            const seen: (StoredRun | null)[] = [];
            while (writing) seen.push(await store.run("run-race"));
            await writes;
            seen.push(await store.run("run-race"));
            for (const r of seen) if (r !== null) expect(r).toEqual(version(r.updatedAt));
            expect(seen.at(-1)?.updatedAt).toBe(30);
          } finally {
            await other.close();
          }
        },
      );
    });
  });
}
