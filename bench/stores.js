// Store benchmarks: decisions through SQLite (one process) and through Redis (8 concurrent clients), each
// beside a baseline measured in the same run on the same backend without the engine.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import Redis from "ioredis";
import { resolvePolicy } from "../dist/core/index.js";
import { RedisStore } from "../dist/store/redis.js";
import { SqliteStore } from "../dist/store/sqlite.js";
import { median, quantile } from "./stats.js";
import { workload } from "./workload.js";

const policy = resolvePolicy({
  budget: { session: { tokens: null }, task: { tokens: null }, taskTypes: {} },
});
const us = (ns) => `${(ns / 1000).toFixed(0)} µs`;

function events(scope, n) {
  return workload(n, scope);
}

/**
 * The bytes a store writes for one append, as it writes them: each record's event and decision, and the
 * new snapshot of every scope the batch changed, as JSON. (The OS's own count of bytes written is not
 * trusted here: sandboxes report it loosely.)
 */
function payloadBytes(result) {
  let bytes = 0;
  for (const r of result.records) bytes += JSON.stringify(r.event).length + JSON.stringify(r.decision).length;
  for (const state of result.states.values()) bytes += JSON.stringify(state).length;
  return bytes;
}

/** A Redis server's count of bytes it received and commands it ran, from INFO. */
async function redisCounters(url) {
  const r = new Redis(url);
  const stats = await r.info("stats");
  const commands = await r.info("commandstats");
  r.disconnect();
  const bytes = Number(/total_net_input_bytes:(\d+)/.exec(stats)?.[1] ?? Number.NaN);
  const calls = [...commands.matchAll(/calls=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
  return { bytes, calls };
}

const perDecision = (n, decisions) => Math.round(n / decisions).toLocaleString("en");

export async function sqliteBench(report) {
  const dir = mkdtempSync(join(tmpdir(), "reins-bench-"));
  const store = new SqliteStore(join(dir, "reins.db"));
  const sessions = Array.from({ length: 10 }, (_, i) => events(`session:b${i}`, 2_000));
  const latencies = [];
  const results = [];
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < 2_000; i++) {
    for (const list of sessions) {
      const e = list[i];
      const s = process.hrtime.bigint();
      results.push(await store.append(e.scope, [e], policy));
      latencies.push(Number(process.hrtime.bigint() - s));
    }
  }
  const rate = latencies.length / (Number(process.hrtime.bigint() - t0) / 1e9);
  const written = results.map(payloadBytes);
  await store.close();

  // Baseline: the same number of one-row write transactions on a bare table with the same journal settings.
  const db = new Database(join(dir, "baseline.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT)");
  const put = db.prepare("INSERT INTO t (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v");
  const tx = db.transaction((k, v) => put.run(k, v));
  const payload = "x".repeat(2_000);
  const b0 = process.hrtime.bigint();
  for (let i = 0; i < latencies.length; i++) tx.immediate(`k${i % 10}`, payload);
  const baseRate = latencies.length / (Number(process.hrtime.bigint() - b0) / 1e9);
  db.close();
  report(
    "SQLite decisions (one process, 10 sessions)",
    `${Math.round(rate).toLocaleString("en")} decisions/s`,
    {
      latency: `p50 ${us(median(latencies))}, p99 ${us(quantile(latencies, 0.99))}`,
      baseline: `bare one-row write transactions: ${Math.round(baseRate).toLocaleString("en")}/s (reins is ${(baseRate / rate).toFixed(1)}x slower per write)`,
      written: `${Math.round(median(written)).toLocaleString("en")} bytes written per decision (median; max ${Math.max(...written).toLocaleString("en")}): the event, its decision and the whole new snapshot, as JSON; the bare row above is ${payload.length.toLocaleString("en")} bytes`,
      aim: ">= 5,000 decisions/s, p99 < 2 ms",
    },
  );
}

function freePort() {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function startRedis() {
  if (process.env.REINS_TEST_REDIS_URL)
    return { url: process.env.REINS_TEST_REDIS_URL, stop: async () => {} };
  if (spawnSync("redis-server", ["--version"]).error) return null;
  const port = await freePort();
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: "ignore" },
  );
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on("error", () => {}); // refused until the server is up
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  return { url, stop: () => new Promise((resolve) => (child.once("exit", resolve), child.kill("SIGTERM"))) };
}

export async function redisBench(report) {
  const server = await startRedis();
  if (server === null) {
    report("Redis decisions", "skipped: redis-server is not installed");
    return;
  }
  const clients = 8;
  const perClient = 1_500;
  const stores = await Promise.all(
    Array.from({ length: clients }, () => RedisStore.connect(server.url, { keyPrefix: "bench:" })),
  );
  const latencies = [];
  const before = await redisCounters(server.url);
  const t0 = process.hrtime.bigint();
  await Promise.all(
    stores.map(async (store, c) => {
      for (const e of events(`session:r${c}`, perClient)) {
        const s = process.hrtime.bigint();
        await store.append(e.scope, [e], policy);
        latencies.push(Number(process.hrtime.bigint() - s));
      }
    }),
  );
  const rate = latencies.length / (Number(process.hrtime.bigint() - t0) / 1e9);
  const after = await redisCounters(server.url);
  await Promise.all(stores.map((s) => s.close()));

  // Baseline: the same round trips without the engine (WATCH + GET, then MULTI SET EXEC) from 8 clients.
  const raw = Array.from({ length: clients }, () => new Redis(server.url));
  const b0 = process.hrtime.bigint();
  const payload = "x".repeat(2_000);
  await Promise.all(
    raw.map(async (r, c) => {
      for (let i = 0; i < perClient; i++) {
        await r.watch(`base:${c}`);
        await r.get(`base:${c}`);
        await r.multi().set(`base:${c}`, payload).exec();
      }
    }),
  );
  const baseRate = (clients * perClient) / (Number(process.hrtime.bigint() - b0) / 1e9);
  raw.forEach((r) => r.disconnect());
  await server.stop();
  report(
    `Redis decisions (${clients} concurrent clients, one session each)`,
    `${Math.round(rate).toLocaleString("en")} decisions/s`,
    {
      latency: `p50 ${us(median(latencies))}, p99 ${us(quantile(latencies, 0.99))}`,
      baseline: `bare WATCH/GET/MULTI/SET/EXEC from ${clients} clients: ${Math.round(baseRate).toLocaleString("en")}/s (reins is ${(baseRate / rate).toFixed(1)}x slower)`,
      sent: `${perDecision(after.bytes - before.bytes, latencies.length)} bytes sent to Redis and ${((after.calls - before.calls) / latencies.length).toFixed(1)} commands per decision (INFO stats, commandstats; the counters' own INFO calls included)`,
      aim: ">= 5,000 decisions/s",
    },
  );
}
