/** The Redis store against a real redis-server: the store contract, its keys and TTLs, URLs and outages. */
import { randomBytes } from "node:crypto";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  STATE_BOUND_BYTES,
  resolvePolicy,
  timeline,
  type Answer,
  type Policy,
  type ReinsEvent,
} from "../src/base/core/index.js";
import type { LogRecord } from "../src/base/core/batch.js";
import { ReinsError } from "../src/base/core/errors.js";
import { SNAPSHOT_EVERY } from "../src/base/core/snapshot.js";
import type { Store } from "../src/base/core/store.js";
import { MemoryStore } from "../src/base/store/memory.js";
import { openStore } from "../src/base/store/open.js";
import { RedisStore } from "../src/base/store/redis.js";
import { storeContract } from "#test/store-contract.js";
import { workload } from "#test/workload.js";
import { expectFilledExactly, fillPool } from "#test/pool-fill.js";
import {
  freePort,
  redisServerInstalled,
  redisUnavailableReason,
  startManagedRedis,
  startRedis,
  type RedisServer,
} from "#test/redis-server.js";

const skipReason = redisUnavailableReason();
if (skipReason !== null) console.warn(`Skipping the Redis tests: ${skipReason}`);

/** Every key of this run starts with this, so runs against a shared server never meet. */
const runPrefix = `reins-test:${randomBytes(4).toString("hex")}:`;
let stores = 0;
const nextPrefix = () => `${runPrefix}${++stores}:`;

/** The names of the commands every ioredis client of this process sends while `run` runs, in order. */
async function commandsSent(run: () => Promise<unknown>): Promise<string[]> {
  type Send = (command: { name: string }, ...rest: unknown[]) => unknown;
  const proto = Redis.prototype as unknown as { sendCommand: Send };
  const original = proto.sendCommand;
  const sent: string[] = [];
  proto.sendCommand = function (this: unknown, command, ...rest) {
    sent.push(command.name);
    return original.call(this, command, ...rest);
  };
  try {
    await run();
  } finally {
    proto.sendCommand = original;
  }
  return sent;
}

/** Appends `events` one at a time, as hooks do, and returns the answers. */
async function oneByOne(store: Store, events: readonly ReinsEvent[], policy: Policy) {
  const answers: Answer[] = [];
  for (const e of events) answers.push(...(await store.append(e.scope, [e], policy)).answers);
  return answers;
}

/**
 * Checks a trimmed log of `total` events: the last records, in order and without a gap, from the snapshot
 * before the last one on (at most two SNAPSHOT_EVERY periods, plus the batch that made a snapshot due).
 */
function expectTail(log: readonly LogRecord[], total: number, batch = 1): void {
  const first = log[0]?.seq ?? total;
  expect(log.map((r) => r.seq)).toEqual(Array.from({ length: total - first }, (_, i) => first + i));
  expect(log.length).toBeGreaterThan(0);
  expect(log.length).toBeLessThanOrEqual(2 * SNAPSHOT_EVERY + batch);
}

/** The rejection of `promise`, which must reject with a ReinsError. */
async function rejection(promise: Promise<unknown>): Promise<ReinsError> {
  const error: unknown = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!ReinsError.is(error)) throw new Error(`expected a ReinsError, got ${String(error)}`);
  return error;
}

describe.skipIf(skipReason !== null)(
  skipReason === null ? "Redis store" : `Redis store (skipped: ${skipReason})`,
  () => {
    let server: RedisServer;
    let raw: Redis;
    const opened: Store[] = [];
    /** The key prefix of each store opened, so a twin can open on the same keys. */
    const prefixes = new WeakMap<Store, string>();
    const open = async (options: Parameters<typeof RedisStore.connect>[1] = {}) => {
      const keyPrefix = options.keyPrefix ?? nextPrefix();
      const store = await RedisStore.connect(server.url, { ...options, keyPrefix });
      prefixes.set(store, keyPrefix);
      opened.push(store);
      return store;
    };

    beforeAll(async () => {
      server = await startRedis();
      raw = new Redis(server.url, { lazyConnect: true });
      await raw.connect();
    });
    afterAll(async () => {
      for (const store of opened) await store.close();
      if (raw !== undefined) {
        const keys = await raw.keys(`${runPrefix}*`);
        if (keys.length > 0) await raw.del(...keys);
        await raw.quit();
      }
      if (server?.managed) await server.stop();
    });

    storeContract(
      "redis",
      () => open(),
      (store) => open({ keyPrefix: prefixes.get(store) ?? "missing-prefix:" }),
    );

    it("names every key with the prefix and the scope's hash tag, and gives each a TTL refreshed on write", async () => {
      const prefix = nextPrefix();
      const store = await RedisStore.connect(server.url, { keyPrefix: prefix, ttlSeconds: 600 });
      opened.push(store);
      const policy = resolvePolicy({
        budget: { session: { tokens: 1_000 } },
        pools: { team: { tokens: 100_000 } },
      });
      const t = timeline("session:k").started().usage({ inputTokens: 900 });
      t.events.forEach((e, i) => (e.id = `k-${i}`));
      await store.append("session:k", t.events, policy);

      const keys = (await raw.keys(`${prefix}*`)).sort();
      expect(keys).toEqual(
        [
          `${prefix}scopes`,
          ...["alerts", "ids", "log", "snap"].map((k) => `${prefix}{session:k}:${k}`),
          // On one server a pool keeps no ids: its charges are written with the session's, in one script.
          ...["log", "snap"].map((k) => `${prefix}{pool:team}:${k}`),
        ].sort(),
      );
      for (const key of keys) {
        const ttl = await raw.ttl(key);
        expect(ttl, key).toBeGreaterThan(0);
        expect(ttl, key).toBeLessThanOrEqual(600);
      }

      for (const key of keys) await raw.expire(key, 5);
      await store.append(
        "session:k",
        timeline({ scope: "session:k", start: 5_000 }).bash("ls").events,
        policy,
      );
      for (const key of keys) expect(await raw.ttl(key), key).toBeGreaterThan(500);
    });

    it("defaults to the prefix reins: and a TTL of 24 h", async () => {
      const scope = `session:${runPrefix}default`;
      const store = await RedisStore.connect(server.url);
      opened.push(store);
      try {
        await store.append(scope, timeline(scope).started().events, resolvePolicy({}));
        const ttl = await raw.ttl(`reins:{${scope}}:snap`);
        expect(ttl).toBeGreaterThan(86_000);
        expect(ttl).toBeLessThanOrEqual(86_400);
      } finally {
        await raw.del(...["snap", "log", "ids", "alerts"].map((k) => `reins:{${scope}}:${k}`));
        await raw.zrem("reins:scopes", scope);
      }
    });

    it("forgets a scope whose keys expired and starts it afresh", async () => {
      const prefix = nextPrefix();
      const store = await RedisStore.connect(server.url, { keyPrefix: prefix });
      opened.push(store);
      const policy = resolvePolicy({});
      await store.append("session:x", timeline("session:x").started().read("a.ts").events, policy);
      await raw.del(`${prefix}{session:x}:snap`);
      expect(await store.scopes()).toEqual([]);
      expect(await raw.zcard(`${prefix}scopes`)).toBe(0);
      await store.append("session:x", timeline("session:x").started().events, policy);
      expect((await store.events("session:x")).map((r) => r.seq)).toEqual([0]);
    });

    it("keeps a run under {run:<id>} with the runs index: without a TTL while it can be resumed, with one once ended", async () => {
      const prefix = nextPrefix();
      const store = await RedisStore.connect(server.url, { keyPrefix: prefix, ttlSeconds: 600 });
      opened.push(store);
      const run = {
        id: "run-ttl",
        status: "running",
        updatedAt: 1_000,
        summary: {},
        checkpoint: { step: 1 },
      };
      await store.saveRun(run);
      const keys = (await raw.keys(`${prefix}*`)).sort();
      expect(keys).toEqual([`${prefix}runs`, `${prefix}{run:run-ttl}:run`]);
      // Running, then paused: it outlives any TTL, and so does the index that lists it.
      for (const key of keys) expect(await raw.ttl(key), key).toBe(-1);
      await store.saveRun({ ...run, status: "paused", updatedAt: 1_500 });
      for (const key of keys) expect(await raw.ttl(key), key).toBe(-1);
      // Ended: the record gets the TTL, refreshed on each save; the index still has none.
      await store.saveRun({ ...run, status: "proven", updatedAt: 2_000, checkpoint: { step: 2 } });
      await raw.expire(`${prefix}{run:run-ttl}:run`, 5);
      await store.saveRun({ ...run, status: "failed", updatedAt: 2_000, checkpoint: { step: 2 } });
      expect(await raw.ttl(`${prefix}{run:run-ttl}:run`)).toBeGreaterThan(500);
      expect(await raw.ttl(`${prefix}{run:run-ttl}:run`)).toBeLessThanOrEqual(600);
      expect(await raw.ttl(`${prefix}runs`)).toBe(-1);
      expect(await raw.zscore(`${prefix}runs`, "run-ttl")).toBe("2000");
    });

    it("forgets a run whose key expired: it is no longer listed nor resumable", async () => {
      const prefix = nextPrefix();
      const store = await RedisStore.connect(server.url, { keyPrefix: prefix });
      opened.push(store);
      const run = { id: "run-gone", status: "paused", updatedAt: 1_000, summary: {}, checkpoint: {} };
      await store.saveRun(run);
      await store.saveRun({ ...run, id: "run-kept", updatedAt: 500 });
      await raw.del(`${prefix}{run:run-gone}:run`);
      expect(await store.run("run-gone")).toBeNull();
      expect((await store.runs()).map((r) => r.id)).toEqual(["run-kept"]);
      expect(await raw.zrange(`${prefix}runs`, 0, -1)).toEqual(["run-kept"]);
    });

    it("counts every event exactly once when two stores append to one session at the same time", async () => {
      const prefix = nextPrefix();
      const a = await RedisStore.connect(server.url, { keyPrefix: prefix });
      const b = await RedisStore.connect(server.url, { keyPrefix: prefix });
      opened.push(a, b);
      const policy = resolvePolicy({ pools: { team: { tokens: 10_000_000 } } });
      const usage = (who: string, i: number): ReinsEvent => ({
        kind: "usage.recorded",
        at: 1_000 + i,
        scope: "session:race",
        id: `${who}-${i}`,
        inputTokens: 10,
      });
      const run = (store: RedisStore, who: string) =>
        Promise.all(
          Array.from({ length: 200 }, (_, i) => store.append("session:race", [usage(who, i)], policy)),
        );
      const [ra, rb] = await Promise.all([run(a, "a"), run(b, "b")]);
      expect([...ra, ...rb].every((r) => r.answers[0] !== null)).toBe(true);

      expect((await a.state("session:race"))?.budget.session.spent.tokens).toBe(4_000);
      expect((await b.state("pool:team"))?.budget.session.spent.tokens).toBe(4_000);
      // The log keeps its last records only (trimmed); the ids keep every event, once.
      expectTail(await a.events("session:race"), 400);
      expect(await raw.hlen(`${prefix}{session:race}:ids`)).toBe(400);

      // Redelivered, at the same time and by both: nothing counts twice.
      const again = await Promise.all([run(b, "a"), run(a, "b")]);
      expect(again.flat().every((r) => r.answers[0] === null)).toBe(true);
      expect((await b.state("session:race"))?.budget.session.spent.tokens).toBe(4_000);
    });

    describe("bounded memory", () => {
      it("keeps one pool under a stated bound while 8 writers send it 100,000 events, each token counted once", async () => {
        const prefix = nextPrefix();
        // Each round of appends is a second of the stores' clock; ids are kept 5 of them at least.
        let clock = Date.UTC(2026, 10, 1);
        const filled = await fillPool({
          open: () => open({ keyPrefix: prefix, idsWindowSeconds: 5, now: () => clock }),
          memory: async (key) => Number((await raw.call("MEMORY", "USAGE", key)) ?? 0),
          prefix,
          onRound: () => (clock += 1_000),
        });
        console.log(`pool memory after 1k/10k/100k events: ${[...filled.bytes.values()].join(" / ")} bytes`);
        const store = await open({ keyPrefix: prefix, idsWindowSeconds: 5, now: () => clock });
        await expectFilledExactly(store, filled);
        // A session's log keeps its tail; its ids, two windows of them.
        expectTail(await store.events("session:fill-0"), filled.perWriter, 25);
        const ids =
          (await raw.hlen(`${prefix}{session:fill-0}:ids`)) +
          (await raw.hlen(`${prefix}{session:fill-0}:ids0`));
        expect(ids).toBeLessThanOrEqual(2 * 6 * 25);
      }, 180_000);

      it("remembers an event id for one window at least and two at most, and says how long", async () => {
        const prefix = nextPrefix();
        let clock = 1_000_000;
        const store = await open({ keyPrefix: prefix, idsWindowSeconds: 60, now: () => clock });
        expect(store.exactlyOnceMs).toBe(60_000);
        const usage = (id: string): ReinsEvent => ({
          kind: "usage.recorded",
          at: 1,
          scope: "session:window",
          id,
          inputTokens: 10,
        });
        const policy = resolvePolicy({});
        await store.append("session:window", [usage("a")], policy);
        clock += 59_000;
        await store.append("session:window", [usage("b")], policy);
        // 61 s after "a": its generation is now the previous one, and still rejects it.
        clock += 2_000;
        expect(
          (await store.append("session:window", [usage("a"), usage("c")], policy)).answers[0],
        ).toBeNull();
        expect(await raw.hkeys(`${prefix}{session:window}:ids0`)).toEqual(["a", "b"]);
        expect(await raw.hkeys(`${prefix}{session:window}:ids`)).toEqual(["c"]);
        // A window on, the next write lets "a" and "b" go; "c" (a window old) is still known.
        clock += 60_000;
        const last = await store.append("session:window", [usage("c"), usage("d")], policy);
        expect(last.answers[0]).toBeNull();
        expect(await raw.hkeys(`${prefix}{session:window}:ids0`)).toEqual(["c"]);
        expect(await raw.hkeys(`${prefix}{session:window}:ids`)).toEqual(["d"]);
        expect((await store.state("session:window"))?.budget.session.spent.tokens).toBe(40);
      });

      it("trims a log under a writer that read it before: the writer conflicts, reads again and loses nothing", async () => {
        const prefix = nextPrefix();
        const policy = resolvePolicy({ budget: { session: { tokens: 10_000_000 } } });
        const events = workload(200, "session:trim-race");
        const a = await open({ keyPrefix: prefix });
        const b = await open({ keyPrefix: prefix });
        const mine = new MemoryStore();
        const expected = await oneByOne(mine, events, policy);
        // a writes 30, b the next 40 (two snapshots: the log is trimmed), then a again on its old copy.
        const answers = [
          ...(await oneByOne(a, events.slice(0, 30), policy)),
          ...(await oneByOne(b, events.slice(30, 100), policy)),
          ...(await oneByOne(a, events.slice(100), policy)),
        ];
        expect(answers).toEqual(expected);
        expect(await a.state("session:trim-race")).toEqual(await mine.state("session:trim-race"));
        expect(Number(await raw.hget(`${prefix}{session:trim-race}:snap`, "base"))).toBeGreaterThan(0);
        expectTail(await b.events("session:trim-race"), 200);
        // A page from before the first record kept starts at the first record kept.
        const [first] = await b.events("session:trim-race", { from: 0, limit: 1 });
        expect(first?.seq).toBe(Number(await raw.hget(`${prefix}{session:trim-race}:snap`, "base")));
      });

      it("keeps no id per charge in a pool: the session's ids, in the same script, count a redelivery once, across a generation turn", async () => {
        const prefix = nextPrefix();
        let clock = 1_000_000;
        const store = await open({ keyPrefix: prefix, idsWindowSeconds: 60, now: () => clock });
        const policy = resolvePolicy({ pools: { team: { tokens: 1_000_000 } } });
        const usage = (i: number): ReinsEvent => ({
          kind: "usage.recorded",
          at: 1_000 + i,
          scope: "session:once",
          id: `once-${i}`,
          inputTokens: 10,
        });
        for (let i = 0; i < 300; i++) await store.append("session:once", [usage(i)], policy);
        // Past the listpack limits of a hash, and still nothing per charge in the pool.
        expect(await raw.exists(`${prefix}{pool:team}:ids`, `${prefix}{pool:team}:ids0`)).toBe(0);
        // A window on, the generation turns: the first 300 ids are now the previous one.
        clock += 61_000;
        await store.append("session:once", [usage(300)], policy);
        expect(await raw.hlen(`${prefix}{session:once}:ids0`)).toBe(300);
        const cold = await open({ keyPrefix: prefix, idsWindowSeconds: 60, now: () => clock });
        const again = await cold.append("session:once", [usage(0), usage(150), usage(300)], policy);
        expect(again.answers).toEqual([null, null, null]);
        expect((await cold.state("session:once"))?.budget.session.spent.tokens).toBe(3_010);
        expect((await cold.state("pool:team"))?.budget.session.spent.tokens).toBe(3_010);
      });

      it("takes trim=off from the URL (an audit log of every record), and refuses another value in one line", async () => {
        const prefix = nextPrefix();
        const store = await RedisStore.connect(`${server.url}?trim=off`, { keyPrefix: prefix });
        opened.push(store);
        await oneByOne(store, workload(100, "session:audit"), resolvePolicy({}));
        expect(await store.events("session:audit")).toHaveLength(100);
        expect(store.location).toBe(`${server.url}?trim=off`);
        const bad = await rejection(RedisStore.connect(`${server.url}?trim=maybe`));
        expect(bad.code).toBe("usage");
        expect(bad.message).toMatch(/^bad trim "maybe" in Redis URL .*: use trim=on or trim=off$/);
      });

      it("keeps every record of a run's or a spec's scope, and of every scope with trim off", async () => {
        const policy = resolvePolicy({});
        const trimmed = await open();
        const whole = await open({ trim: false });
        for (const [store, scope, kept] of [
          [trimmed, "run:r1", 100],
          [trimmed, "session:t", 64],
          [whole, "session:t", 100],
        ] as const) {
          await oneByOne(store, workload(100, scope), policy);
          const log = await store.events(scope);
          expect(log.length, `${scope}`).toBeLessThanOrEqual(kept);
          expect(log.at(-1)?.seq).toBe(99);
          if (kept === 100) expect(log).toHaveLength(100);
        }
      });
    });

    it("acknowledges an alert of a scope whose name contains #", async () => {
      const store = await open();
      const scope = "session:a#b";
      const t = timeline(scope).started().usage({ inputTokens: 9_000 });
      await store.append(scope, t.events, resolvePolicy({ budget: { session: { tokens: 10_000 } } }));
      const [alert] = await store.alerts({ scope });
      expect(alert?.id).toMatch(/^session:a#b#\d+#0$/);
      expect(await store.acknowledgeAlert(alert?.id ?? "", "ana")).toMatchObject({
        acknowledged: true,
        acknowledgedBy: "ana",
      });
      expect(await store.alerts({ acknowledged: false })).toEqual([]);
    });

    describe("one round trip per decision, small writes", () => {
      /** Calls of a command Redis counted (INFO commandstats), and the bytes it received (INFO stats). */
      const counters = async () => {
        const stats = await raw.info("stats");
        const commands = await raw.info("commandstats");
        return {
          evalsha: Number(/cmdstat_evalsha:calls=(\d+)/.exec(commands)?.[1] ?? 0),
          bytes: Number(/total_net_input_bytes:(\d+)/.exec(stats)?.[1]),
        };
      };

      it("writes a decision with one EVALSHA when its copy of the scope is current, its pool included", async () => {
        const store = await open();
        const policy = resolvePolicy({ pools: { team: { tokens: 100_000_000 } } });
        const events = workload(130, "session:one");
        await oneByOne(store, events.slice(0, 2), policy); // loads the scripts, reads the scopes once
        const before = await counters();
        const sent = await commandsSent(() => oneByOne(store, events.slice(2), policy));
        const after = await counters();
        expect(sent).toEqual(events.slice(2).map(() => "evalsha"));
        // INFO's own calls run between the counters: the store's are exactly one per decision.
        expect(after.evalsha - before.evalsha).toBe(128);
        const pool = await store.state("pool:team");
        expect(pool?.seq).toBe(
          events.filter((e) => e.kind === "usage.recorded" || e.kind === "tool.requested").length,
        );
      });

      it("writes per decision its record and a SNAPSHOT_EVERY-th of a state, within the stated bound", async () => {
        // Every record kept, to weigh what was written against them.
        const store = await open({ trim: false });
        const policy = resolvePolicy({});
        const n = 320;
        const before = await counters();
        await oneByOne(store, workload(n, "session:bytes"), policy);
        const after = await counters();
        const log = (await store.events("session:bytes")).map((r) => JSON.stringify(r).length);
        const written = store.writes;
        const policyBytes = JSON.stringify(policy).length;
        // The first append writes a snapshot (a new scope), then every SNAPSHOT_EVERY-th event.
        expect(written).toMatchObject({ records: n, snapshots: 1 + Math.floor((n - 1) / SNAPSHOT_EVERY) });
        const records = log.reduce((a, b) => a + b, 0);
        const state = JSON.stringify(await store.state("session:bytes")).length;
        expect(written.bytes).toBeGreaterThan(records + policyBytes);
        expect(written.bytes).toBeLessThanOrEqual(records + policyBytes + written.snapshots * state);
        // The bound: the largest record, a SNAPSHOT_EVERY-th of the largest state, and the policy once.
        const bound = Math.max(...log) + STATE_BOUND_BYTES / SNAPSHOT_EVERY + policyBytes / n;
        const perDecision = written.bytes / n;
        const received = (after.bytes - before.bytes) / n;
        console.log(
          `Redis: ${Math.round(perDecision)} bytes written and ${Math.round(received)} received per decision ` +
            `(records ${Math.round(records / n)} on average); bound ${Math.round(bound)}`,
        );
        expect(perDecision).toBeLessThanOrEqual(bound);
        // What Redis received adds the keys, the script's hash and the counts: a few hundred bytes.
        expect(received).toBeLessThanOrEqual(perDecision + 700);
        expect(received).toBeLessThan(state);
      });

      /** Two instances on one key prefix, with a policy whose sessions charge a pool. */
      const twoInstances = async () => {
        const prefix = nextPrefix();
        const policy = resolvePolicy({
          budget: { session: { tokens: 60_000 } },
          pools: { team: { tokens: 40_000 } },
        });
        return { prefix, policy, a: await open({ keyPrefix: prefix }), b: await open({ keyPrefix: prefix }) };
      };

      it("resolves a conflict between two instances on one scope exactly, reading only when the other wrote", async () => {
        const { a, b, policy } = await twoInstances();
        const events = workload(150, "session:two");
        const mine = new MemoryStore();
        const expected = await oneByOne(mine, events, policy);
        const answers: Answer[] = [];
        const sentByA: string[][] = [];
        for (const [i, e] of events.entries()) {
          const by = i % 5 === 4 ? b : a;
          const sent = await commandsSent(async () =>
            answers.push(...(await by.append(e.scope, [e], policy)).answers),
          );
          if (by === a) sentByA.push(sent);
        }
        expect(answers).toEqual(expected);
        for (const s of [a, b]) {
          expect(await s.state("session:two")).toEqual(await mine.state("session:two"));
          expect(await s.state("pool:team")).toEqual(await mine.state("pool:team"));
        }
        expectTail(await a.events("session:two"), events.length);
        // After b wrote, a's next append finds the log longer: it reads and writes again.
        expect(sentByA[4]).toEqual(["evalsha", "evalsha", "evalsha", "evalsha"]);
        expect(sentByA[5]).toEqual(["evalsha"]);
      });

      it("brings its copy of a scope two instances write in turn up to date with the records written since, exactly", async () => {
        const { prefix, a, b, policy } = await twoInstances();
        const events = workload(3 * SNAPSHOT_EVERY + 7, "session:turns");
        const mine = new MemoryStore();
        const expected = await oneByOne(mine, events, policy);
        const answers: Answer[] = [];
        // Every append finds the other's write: after the first, each is caught up rather than read whole.
        for (const [i, e] of events.entries()) {
          const by = i % 2 === 0 ? a : b;
          answers.push(...(await by.append(e.scope, [e], policy)).answers);
        }
        expect(answers).toEqual(expected);
        for (const s of [a, b]) {
          expect(await s.state("session:turns")).toEqual(await mine.state("session:turns"));
          expect(await s.state("pool:team")).toEqual(await mine.state("pool:team"));
        }
        const cold = await open({ keyPrefix: prefix });
        expect(await cold.state("session:turns")).toEqual(await mine.state("session:turns"));
      });

      it("rebuilds the exact state in a second instance with a cold cache, and continues it", async () => {
        const prefix = nextPrefix();
        const a = await open({ keyPrefix: prefix });
        const policy = resolvePolicy({ budget: { session: { tokens: 80_000 } } });
        const events = workload(2 * SNAPSHOT_EVERY + 11, "session:cold");
        const mine = new MemoryStore();
        await oneByOne(mine, events, policy);
        await oneByOne(a, events, policy);
        const b = await open({ keyPrefix: prefix });
        expect(await b.state("session:cold")).toEqual(await mine.state("session:cold"));
        // Decided by b under another policy: the tail is still rebuilt under the one stored with it.
        const other = resolvePolicy({ budget: { session: { tokens: 90_000 } } });
        const more = workload(2 * SNAPSHOT_EVERY + 31, "session:cold").slice(events.length);
        expect(await oneByOne(b, more, other)).toEqual(await oneByOne(mine, more, other));
        const c = await open({ keyPrefix: prefix });
        expect(await c.state("session:cold")).toEqual(await mine.state("session:cold"));
        expect(await a.state("session:cold")).toEqual(await mine.state("session:cold"));
      });

      it("reads a scope kept in the old layout (the whole state under :state) and migrates it on its next write", async () => {
        const prefix = nextPrefix();
        const policy = resolvePolicy({ budget: { session: { tokens: 80_000 } } });
        const scope = "session:old-layout";
        const events = workload(90, scope);
        const mine = new MemoryStore();
        const first = await mine.append(scope, events.slice(0, 40), policy);
        const key = (kind: string) => `${prefix}{${scope}}:${kind}`;
        await raw.set(key("state"), JSON.stringify(await mine.state(scope)));
        await raw.rpush(key("log"), ...(await mine.events(scope)).map((r) => JSON.stringify(r)));
        await raw.hset(key("ids"), new Map(first.records.map((r) => [r.event.id ?? "", String(r.seq)])));
        await raw.zadd(`${prefix}scopes`, (await mine.state(scope))?.lastAt ?? 0, scope);

        const store = await open({ keyPrefix: prefix });
        expect(await store.scopes()).toEqual([scope]);
        expect(await store.state(scope)).toEqual(await mine.state(scope));
        // A redelivered event of the old log is still known.
        expect((await store.append(scope, [events[3]!], policy)).answers).toEqual([null]);
        expect(await oneByOne(store, events.slice(40), policy)).toEqual(
          await oneByOne(mine, events.slice(40), policy),
        );
        expect(await raw.exists(key("state"))).toBe(0);
        expect(await raw.hget(key("snap"), "seq")).not.toBeNull();
        const cold = await open({ keyPrefix: prefix });
        expect(await cold.state(scope)).toEqual(await mine.state(scope));
        expectTail(await cold.events(scope), events.length);
      });
    });

    it("is opened by openStore from a redis:// spec", async () => {
      const store = await openStore(server.url, "/nonexistent");
      opened.push(store);
      expect(store.kind).toBe("redis");
      expect(store.location).toBe(server.url);
    });

    it("routes redis+cluster:// and rediss+cluster:// specs to the Redis store, on Redis Cluster", async () => {
      const ports = [await freePort(), await freePort()];
      const spec = `redis+cluster://user:secret@127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}`;
      const started = Date.now();
      const error = await rejection(openStore(spec, "/nonexistent"));
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(error.code).toBe("store_unavailable");
      expect(error.message).toContain(`redis+cluster://user:***@127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}`);
      expect(error.message).not.toContain("secret");
      const tls = await rejection(openStore(`rediss+cluster://127.0.0.1:${ports[0]}`, "/nonexistent"));
      expect(tls.code).toBe("store_unavailable");
      for (const bad of [
        "redis+cluster://127.0.0.1:6379/2",
        "redis+cluster://127.0.0.1:6379,:6380",
        "redis+cluster://127.0.0.1:99999",
        "redis://127.0.0.1:6379,127.0.0.1:6380",
      ])
        expect((await rejection(openStore(bad, "/nonexistent"))).code, bad).toBe("usage");
    });

    it("rejects quickly, without the password, when nothing listens", async () => {
      const port = await freePort();
      const started = Date.now();
      const error = await rejection(RedisStore.connect(`redis://user:secret@127.0.0.1:${port}`));
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(error.code).toBe("store_unavailable");
      expect(error.message).toContain(`redis://user:***@127.0.0.1:${port}`);
      expect(error.message).not.toContain("secret");
      expect(error.message).not.toContain("\n");
    });

    it("gives up within the connect timeout on a server that accepts connections but never answers", async () => {
      const sockets: Socket[] = [];
      const silent = createServer((socket) => void sockets.push(socket));
      await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
      const { port } = silent.address() as AddressInfo;
      try {
        const started = Date.now();
        const error = await rejection(
          RedisStore.connect(`redis://127.0.0.1:${port}`, { connectTimeoutMs: 300 }),
        );
        expect(Date.now() - started).toBeLessThan(1_500);
        expect(error.code).toBe("store_unavailable");
        expect(error.message).toContain("no answer within 300 ms");
      } finally {
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => silent.close(resolve));
      }
    });

    it("rejects a URL of another scheme, a bad port or a bad database as a usage error", async () => {
      const scheme = await rejection(RedisStore.connect("http://user:secret@127.0.0.1:6379"));
      expect(scheme.code).toBe("usage");
      expect(scheme.message).toMatch(/unsupported scheme "http:".*use redis:\/\//);
      expect(scheme.message).not.toContain("secret");
      const port = await rejection(RedisStore.connect("redis://127.0.0.1:99999"));
      expect(port).toMatchObject({
        code: "usage",
        message: expect.stringContaining('bad port "99999"') as unknown,
      });
      expect((await rejection(RedisStore.connect("redis://127.0.0.1:abc"))).code).toBe("usage");
      expect((await rejection(RedisStore.connect("redis://127.0.0.1:6379/cache"))).code).toBe("usage");
      expect((await rejection(RedisStore.connect("redis://:6379"))).code).toBe("usage");
      expect((await rejection(RedisStore.connect(server.url, { keyPrefix: "a{b}:" }))).code).toBe("usage");
    });
  },
);

describe.skipIf(skipReason !== null || !redisServerInstalled)(
  "Redis store against a server of its own",
  () => {
    it("passes user and password from the URL, and rejects wrong ones without showing them", async () => {
      const server = await startManagedRedis([
        "--requirepass",
        "rootpw",
        "--user",
        "alice",
        "on",
        ">alicepw",
        "~*",
        "&*",
        "+@all",
      ]);
      const stores: Store[] = [];
      try {
        const url = (auth: string) => `redis://${auth}@127.0.0.1:${server.port}`;
        for (const auth of [":rootpw", "default:rootpw", "alice:alicepw"]) {
          const store = await RedisStore.connect(url(auth), { keyPrefix: nextPrefix() });
          stores.push(store);
          await store.append("session:auth", timeline("session:auth").started().events, resolvePolicy({}));
          expect(await store.scopes()).toEqual(["session:auth"]);
        }
        const wrong = await rejection(RedisStore.connect(url("alice:nottherightone")));
        expect(wrong.code).toBe("store_unavailable");
        expect(wrong.message).toMatch(/WRONGPASS|invalid/i);
        expect(wrong.message).not.toContain("nottherightone");
        const none = await rejection(RedisStore.connect(server.url));
        expect(none.code).toBe("store_unavailable");
        expect(none.message).toContain("NOAUTH");
      } finally {
        for (const store of stores) await store.close();
        await server.stop();
      }
    });

    it("fails fast while Redis is down and comes back by itself when it returns", async () => {
      const server = await startManagedRedis();
      const store = await RedisStore.connect(server.url, { keyPrefix: nextPrefix() });
      try {
        const policy = resolvePolicy({});
        await store.append("session:down", timeline("session:down").started().events, policy);
        await server.stop();

        const started = Date.now();
        const error = await rejection(
          store.append(
            "session:down",
            timeline({ scope: "session:down", start: 5_000 }).read("a.ts").events,
            policy,
          ),
        );
        expect(Date.now() - started).toBeLessThan(3_000);
        expect(error.code).toBe("store_unavailable");
        expect(error.message.startsWith(`${server.url}: `)).toBe(true);
        expect((await rejection(store.state("session:down"))).code).toBe("store_unavailable");

        await server.restart();
        const deadline = Date.now() + 5_000;
        let result = null;
        while (result === null) {
          result = await store
            .append("session:back", timeline("session:back").started().events, policy)
            .catch((e: unknown) => {
              if (Date.now() > deadline) throw e;
              return null;
            });
          if (result === null) await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(result.answers).toHaveLength(1);
        expect(await store.scopes()).toEqual(["session:back"]);
      } finally {
        await store.close();
        await server.stop();
      }
    });
  },
);
