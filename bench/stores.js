// Store benchmarks: decisions through SQLite (one process) and through Redis (8 concurrent clients), each
// beside a baseline measured in the same run on the same backend without the engine.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import Redis from "ioredis";
import { STATE_BOUND_BYTES, resolvePolicy } from "../dist/base/core/index.js";
import { SNAPSHOT_EVERY } from "../dist/base/core/snapshot.js";
import { RedisStore } from "../dist/base/store/redis.js";
import { SqliteStore } from "../dist/base/store/sqlite.js";
import { median, quantile } from "./stats.js";
import { workload } from "./workload.js";

const policy = resolvePolicy({
  budget: { session: { tokens: null }, task: { tokens: null }, taskTypes: {} },
});
const us = (ns) => `${(ns / 1000).toFixed(0)} µs`;

function events(scope, n) {
  return workload(n, scope);
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

/** Appends every event of `sessions` (one list per session) in turn, `concurrent` sessions at once. */
async function drive(store, sessions, concurrent) {
  const latencies = [];
  const t0 = process.hrtime.bigint();
  const rounds = sessions[0].length;
  for (let i = 0; i < rounds; i++) {
    for (let s = 0; s < sessions.length; s += concurrent) {
      await Promise.all(
        sessions.slice(s, s + concurrent).map(async (list) => {
          const e = list[i];
          const start = process.hrtime.bigint();
          await store.append(e.scope, [e], policy);
          latencies.push(Number(process.hrtime.bigint() - start));
        }),
      );
    }
  }
  return { latencies, rate: latencies.length / (Number(process.hrtime.bigint() - t0) / 1e9) };
}

export async function sqliteBench(report) {
  const dir = mkdtempSync(join(tmpdir(), "reins-bench-"));
  const sessions = Array.from({ length: 10 }, (_, i) => events(`session:b${i}`, 2_000));
  const one = new SqliteStore(join(dir, "one.db"));
  const alone = await drive(one, sessions, 1);
  const written = one.writes;
  await one.close();
  const many = new SqliteStore(join(dir, "many.db"));
  const together = await drive(
    many,
    sessions.map((list) => list.map((e) => ({ ...e, scope: e.scope.replace("b", "c") }))),
    10,
  );
  await many.close();

  // Baseline: the same number of one-row write transactions on a bare table with the same journal settings.
  const db = new Database(join(dir, "baseline.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT)");
  const put = db.prepare("INSERT INTO t (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v");
  const tx = db.transaction((k, v) => put.run(k, v));
  const payload = "x".repeat(2_000);
  const b0 = process.hrtime.bigint();
  for (let i = 0; i < alone.latencies.length; i++) tx.immediate(`k${i % 10}`, payload);
  const baseRate = alone.latencies.length / (Number(process.hrtime.bigint() - b0) / 1e9);
  db.close();
  const bytesEach = written.bytes / written.records;
  report(
    "SQLite decisions (one process, 10 sessions, one append at a time)",
    `${Math.round(alone.rate).toLocaleString("en")} decisions/s`,
    {
      latency: `p50 ${us(median(alone.latencies))}, p99 ${us(quantile(alone.latencies, 0.99))}`,
      baseline: `bare one-row write transactions of ${payload.length.toLocaleString("en")} bytes: ${Math.round(baseRate).toLocaleString("en")}/s (reins is ${(baseRate / alone.rate).toFixed(1)}x slower per write)`,
      written: `${Math.round(bytesEach).toLocaleString("en")} bytes per decision (${written.records.toLocaleString("en")} log records, ${written.snapshots.toLocaleString("en")} snapshots, as the store wrote them); bound: the record, plus 1/${SNAPSHOT_EVERY} of a snapshot (< ${STATE_BOUND_BYTES.toLocaleString("en")} bytes) and of the policy`,
      aim: ">= 10,000 decisions/s, p99 <= 1 ms",
    },
  );
  report(
    "SQLite decisions (one process, 10 sessions at once: group commit)",
    `${Math.round(together.rate).toLocaleString("en")} decisions/s`,
    {
      latency: `p50 ${us(median(together.latencies))}, p99 ${us(quantile(together.latencies, 0.99))}`,
      ratio: `${(together.rate / alone.rate).toFixed(1)}x one append at a time`,
      note: "each latency includes the wait for the other sessions' appends committed with it",
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

export async function startRedis() {
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

/** Counts the commands every ioredis client of this process sends, from now until `stop()`. */
function countCommands() {
  const proto = Redis.prototype;
  const original = proto.sendCommand;
  const counts = { sent: 0 };
  proto.sendCommand = function (command, ...rest) {
    counts.sent += 1;
    return original.call(this, command, ...rest);
  };
  return { counts, stop: () => (proto.sendCommand = original) };
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
  const sessions = stores.map((_s, c) => events(`session:r${c}`, perClient));
  const latencies = [];
  const before = await redisCounters(server.url);
  const counting = countCommands();
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await Promise.all(
    stores.map(async (store, c) => {
      for (const e of sessions[c]) {
        const s = process.hrtime.bigint();
        await store.append(e.scope, [e], policy);
        latencies.push(Number(process.hrtime.bigint() - s));
      }
    }),
  );
  const rate = latencies.length / (Number(process.hrtime.bigint() - t0) / 1e9);
  const cpu = process.cpuUsage(cpu0);
  counting.stop();
  const after = await redisCounters(server.url);
  const written = stores
    .map((s) => s.writes)
    .reduce((a, b) => ({
      records: a.records + b.records,
      snapshots: a.snapshots + b.snapshots,
      bytes: a.bytes + b.bytes,
    }));
  // The bound on bytes written per decision, over any SNAPSHOT_EVERY events of a scope: the largest record,
  // a SNAPSHOT_EVERY-th of the largest possible state, and the policy once per scope.
  const logs = await Promise.all(stores.map((store, c) => store.events(`session:r${c}`)));
  const biggest = Math.max(...logs.flat().map((r) => JSON.stringify(r).length));
  const bound = biggest + STATE_BOUND_BYTES / SNAPSHOT_EVERY + JSON.stringify(policy).length / perClient;
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
  const decisions = latencies.length;
  report(
    `Redis decisions (${clients} concurrent clients, one session each)`,
    `${Math.round(rate).toLocaleString("en")} decisions/s`,
    {
      latency: `p50 ${us(median(latencies))}, p99 ${us(quantile(latencies, 0.99))}; client CPU ${Math.round((cpu.user + cpu.system) / decisions)} µs per decision`,
      baseline: `bare WATCH/GET/MULTI/SET/EXEC from ${clients} clients: ${Math.round(baseRate).toLocaleString("en")}/s (reins is ${rate > baseRate ? `${(rate / baseRate).toFixed(1)}x faster` : `${(baseRate / rate).toFixed(1)}x slower`})`,
      commands: `${(counting.counts.sent / decisions).toFixed(2)} sent per decision (one EVALSHA each when the process's copy is current); ${((after.calls - before.calls) / decisions).toFixed(1)} run by Redis, those inside the script included (INFO commandstats)`,
      written: `${perDecision(written.bytes, written.records)} bytes per decision as the store wrote them (${written.records.toLocaleString("en")} log records, ${written.snapshots.toLocaleString("en")} snapshots), ${perDecision(after.bytes - before.bytes, decisions)} received by Redis (INFO total_net_input_bytes: keys and script arguments included); bound ${Math.round(bound).toLocaleString("en")}: the largest record (${biggest.toLocaleString("en")}), plus 1/${SNAPSHOT_EVERY} of a snapshot (< ${STATE_BOUND_BYTES.toLocaleString("en")} bytes) and the policy once per session`,
      aim: ">= 10,000 decisions/s",
    },
  );
}

/** Bytes of one scope's SQLite file after `count` decisions dated today, before and after a gc keeping `keep` records. */
async function scopeBytes(dir, count, keep) {
  const store = new SqliteStore(join(dir, `gc-${count}.db`));
  const list = events("session:gc", count);
  const shift = Date.now() - list.at(-1).at;
  for (const e of list) await store.append(e.scope, [{ ...e, at: e.at + shift }], policy);
  const grown = (await store.usage()).bytes;
  const gc = await store.collect({ before: Date.now() - 30 * 86_400_000, records: keep, dryRun: false });
  await store.close();
  return { grown, kept: gc.after.bytes, records: gc.after.records, vacuumed: gc.vacuumed };
}

export async function sqliteGcBench(report) {
  const dir = mkdtempSync(join(tmpdir(), "reins-bench-gc-"));
  const keep = 1_000;
  const sizes = [1_000, 10_000, 100_000];
  const runs = [];
  for (const n of sizes) runs.push(await scopeBytes(dir, n, keep));
  const kb = (n) => `${Math.round(n / 1024).toLocaleString("en")} KiB`;
  const [, ten, hundred] = runs;
  report(
    "SQLite bytes per scope (file size, page_count * page_size)",
    `${runs.map((r) => kb(r.grown)).join(" / ")} after ${sizes.map((n) => n.toLocaleString("en")).join(" / ")} events, without gc`,
    {
      growth: `${Math.round((hundred.grown - ten.grown) / 90_000).toLocaleString("en")} bytes per event (log record with its decision, indexes, page slack)`,
      "after reins gc": `${runs.map((r) => kb(r.kept)).join(" / ")} with retention.records ${keep.toLocaleString("en")} (${runs.map((r) => r.records.toLocaleString("en")).join(" / ")} records kept${hundred.vacuumed ? ", VACUUM" : ""})`,
    },
  );
}
