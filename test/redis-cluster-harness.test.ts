/** The Redis Cluster harness itself: a real 3-master cluster that moves slots and fails over on demand. */
import { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterUnavailableReason, startCluster, type RedisCluster } from "#test/redis-cluster.js";

const skipReason = clusterUnavailableReason();
if (skipReason !== null) console.warn(`Skipping the Redis Cluster harness tests: ${skipReason}`);

/** The error `promise` rejects with, as a message. */
const failure = (promise: Promise<unknown>) =>
  promise.then(
    (value) => `no error: ${JSON.stringify(value)}`,
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );

describe.skipIf(skipReason !== null)(
  skipReason === null ? "Redis Cluster harness" : `Redis Cluster harness (skipped: ${skipReason})`,
  () => {
    let cluster: RedisCluster;
    let client: Cluster;
    const direct: Redis[] = [];
    /** A plain connection to one node, which answers MOVED and ASK instead of following them. */
    const node = (port: number) => {
      const redis = new Redis({ host: "127.0.0.1", port, maxRetriesPerRequest: 0 });
      redis.on("error", () => undefined);
      direct.push(redis);
      return redis;
    };
    /** A key with a hash tag of its own, the first found whose master `want`s it. */
    const keyOn = async (prefix: string, want: (port: number) => boolean) => {
      for (let i = 0; i < 1_000; i++) {
        const key = `{${prefix}-${i}}:k`;
        if (want(await cluster.masterFor(key))) return key;
      }
      throw new Error(`no key with prefix ${prefix} lands where wanted`);
    };

    beforeAll(async () => {
      cluster = await startCluster();
      // No periodic refresh: the client's slot map stays stale until a redirect tells it otherwise.
      client = new Cluster([...cluster.seeds], { slotsRefreshInterval: 0 });
      client.on("error", () => undefined);
    }, 60_000);
    afterAll(async () => {
      client?.disconnect();
      for (const redis of direct) redis.disconnect();
      await cluster?.stop();
    });

    it("comes up with 3 masters serving every slot and a replica each, under a redis+cluster:// URL", async () => {
      const nodes = await cluster.nodes();
      const masters = nodes.filter((n) => n.role === "master");
      expect(masters).toHaveLength(3);
      expect(masters.flatMap((m) => m.slots).reduce((sum, [a, b]) => sum + b - a + 1, 0)).toBe(16_384);
      for (const m of masters) expect(nodes.filter((n) => n.masterId === m.id)).toHaveLength(1);
      expect(cluster.url).toBe(
        `redis+cluster://${cluster.seeds.map((s) => `127.0.0.1:${s.port}`).join(",")}`,
      );
      expect(cluster.ports).toHaveLength(6);
    });

    it("lets a Cluster client write keys that land on all 3 masters", async () => {
      const keys = Array.from({ length: 300 }, (_, i) => `spread:${i}`);
      await Promise.all(keys.map((key, i) => client.set(key, String(i))));
      const masters = await cluster.masters();
      const sizes = await Promise.all(masters.map((port) => node(port).dbsize()));
      expect(sizes.every((size) => size > 50)).toBe(true);
      expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(300);
      expect(await Promise.all(keys.map((key) => client.get(key)))).toEqual(keys.map((_, i) => String(i)));
      for (const key of keys.slice(0, 30)) {
        expect(await node(await cluster.masterFor(key)).get(key)).toBe(key.slice("spread:".length));
      }
    });

    it("moves a slot: the old master answers MOVED and the client follows it", async () => {
      const key = await keyOn("moved", () => true);
      await client.set(key, "before");
      const slot = await cluster.slotOf(key);
      const from = await cluster.masterFor(key);
      const to = (await cluster.masters()).find((p) => p !== from) ?? 0;
      expect(client.slots[slot]?.[0]).toBe(`127.0.0.1:${from}`);

      await cluster.migrateSlot(slot, to);
      expect(await cluster.masterFor(key)).toBe(to);
      expect(await failure(node(from).get(key))).toMatch(new RegExp(`^MOVED ${slot} 127.0.0.1:${to}`));
      expect(client.slots[slot]?.[0]).toBe(`127.0.0.1:${from}`); // still stale
      expect(await client.get(key)).toBe("before");
      await client.set(key, "after");
      expect(await node(to).get(key)).toBe("after");
      expect(client.slots[slot]?.[0]).toBe(`127.0.0.1:${to}`);
    });

    it("during a migration the source answers ASK for moved keys, and the client follows it", async () => {
      const tag = await keyOn("ask", () => true);
      const slot = await cluster.slotOf(tag);
      const from = await cluster.masterFor(tag);
      const to = (await cluster.masters()).find((p) => p !== from) ?? 0;
      const keys = Array.from({ length: 10 }, (_, i) => `${tag}:${i}`);
      for (const key of keys) await client.set(key, "v");

      const migration = await cluster.startMigration(slot, to);
      expect(await migration.moveKeys(4)).toBe(4);
      const [moved] = (await node(to).call("CLUSTER", "GETKEYSINSLOT", slot, 10)) as string[];
      expect(moved).toBeDefined();
      expect(await failure(node(from).get(moved ?? ""))).toMatch(new RegExp(`^ASK ${slot} 127.0.0.1:${to}`));
      for (const key of keys) expect(await client.get(key)).toBe("v");
      // A new key of the slot is created on the target, through ASK.
      await client.set(`${tag}:new`, "n");
      expect(await node(to).pipeline().call("ASKING").get(`${tag}:new`).exec()).toEqual([
        [null, "OK"],
        [null, "n"],
      ]);
      expect(await failure(node(from).get(`${tag}:new`))).toMatch(/^ASK /);
      expect(client.slots[slot]?.[0]).toBe(`127.0.0.1:${from}`); // ASK does not change the slot map

      await migration.finish();
      expect(await cluster.masterFor(tag)).toBe(to);
      for (const key of [...keys, `${tag}:new`]) expect(await client.get(key)).not.toBeNull();
      expect(await node(to).dbsize()).toBeGreaterThanOrEqual(11);
    });

    it("survives a SIGKILLed master: its replica takes over and writes go on", async () => {
      const key = await keyOn("failover", () => true);
      const master = await cluster.masterFor(key);
      const keys = Array.from({ length: 20 }, (_, i) => `${key}:${i}`);
      for (const k of keys) await client.set(k, "kept");
      // Replication is asynchronous: make sure the replica has the keys before the master dies. WAIT waits
      // for the connection's own last write, so the fence is written on the connection that waits.
      const fence = node(master);
      await fence.set(`${key}:fence`, "1");
      expect(await fence.call("WAIT", 1, 5_000)).toBe(1);

      const started = Date.now();
      const promoted = await cluster.killMaster(master);
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(promoted).not.toBe(master);
      expect(await cluster.masterFor(key)).toBe(promoted);
      expect(await cluster.masters()).toHaveLength(3);

      // The client finds the new master by itself (a failed command refreshes its slot map).
      const deadline = Date.now() + 10_000;
      for (;;) {
        const ok = await client.set(`${key}:after`, "written").then(
          () => true,
          () => false,
        );
        if (ok) break;
        if (Date.now() > deadline) throw new Error("no write succeeded within 10 s of the failover");
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      for (const k of keys) expect(await client.get(k)).toBe("kept");
      expect(await node(promoted).get(`${key}:after`)).toBe("written");
    }, 40_000);
  },
);
