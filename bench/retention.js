// Retention: how much a scope holds as it is written, on each store, with trimming (Redis) or gc (SQLite)
// against without, the decision rate with Redis trimming on against off, and the hook daemon's memory as
// sessions come and go.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Redis from "ioredis";
import { resolvePolicy } from "../dist/base/core/index.js";
import { socketRequest } from "../dist/guard/daemon/probe.js";
import { socketPath } from "../dist/guard/daemon/paths.js";
import { chargeKey } from "../dist/base/core/batch.js";
import { chargeField, RedisStore } from "../dist/base/store/redis.js";
import { hookSecret } from "../dist/base/config/hook-secret.js";
import { input, rssOf, socketCall, startDaemon } from "./projects.js";
import { median } from "./stats.js";
import { startRedis } from "./stores.js";
import { startCluster } from "./cluster.js";

const CHECKPOINTS = [1_000, 10_000, 100_000];
const WRITERS = 8;
const KEYS = ["snap", "log", "ids", "ids0", "alerts"];
const policy = resolvePolicy({
  budget: { session: { tokens: null }, task: { tokens: null }, taskTypes: {} },
  pools: { team: { tokens: 1e15 } },
});
const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;

/** A usage event of writer `w`, number `i`, in its own session: every one charges the pool. */
const usage = (w, i) => ({
  kind: "usage.recorded",
  at: Date.UTC(2026, 10, 1) + i * 1_000,
  scope: `session:keep-${w}`,
  id: `k${w}-${i}`,
  inputTokens: 900,
  outputTokens: 200,
});

/** Sends 100,000 events from WRITERS writers, one event per append as hooks do; the pool's and a session's bytes on the way. */
async function fillRedis(url, tag, options, checkpoints = CHECKPOINTS) {
  const prefix = `keep-${tag}:`;
  // The stores' clock for the ids' generations: 10 ms an append, so 100,000 events take 1,000 s of it.
  let appends = 0;
  const now = () => Date.UTC(2026, 10, 1) + appends * 10;
  const stores = await Promise.all(
    Array.from({ length: WRITERS }, () => RedisStore.connect(url, { keyPrefix: prefix, now, ...options })),
  );
  const raw = new Redis(url);
  const ids = new Map();
  const bytesOf = async (scope, kinds = KEYS) => {
    let sum = 0;
    for (const kind of kinds)
      sum += Number((await raw.call("MEMORY", "USAGE", `${prefix}{${scope}}:${kind}`)) ?? 0);
    return sum;
  };
  const pool = new Map();
  const session = new Map();
  let elapsed = 0;
  let sent = 0;
  for (const until of checkpoints) {
    const each = (until - sent) / WRITERS;
    const t0 = process.hrtime.bigint();
    await Promise.all(
      stores.map(async (store, w) => {
        for (let i = sent / WRITERS; i < sent / WRITERS + each; i++)
          await store.append(`session:keep-${w}`, [usage(w, i)], policy).then(() => (appends += 1));
      }),
    );
    elapsed += Number(process.hrtime.bigint() - t0) / 1e9;
    sent = until;
    pool.set(until, await bytesOf("pool:team"));
    session.set(until, await bytesOf("session:keep-0"));
    ids.set(until, await bytesOf("pool:team", ["ids", "ids0"]));
  }
  await Promise.all(stores.map((s) => s.close()));
  raw.disconnect();
  return { pool, session, ids, rate: sent / elapsed };
}

/**
 * Only the ids figures of redisRetentionBench (`node bench/run.js redis-ids`): one server and Cluster;
 * `--cluster only` measures the Cluster pool alone.
 */
export async function redisIdsBench(report, options = []) {
  if (options[options.indexOf("--cluster") + 1] === "only" && options.includes("--cluster")) {
    const marks = [20_000, 200_000];
    const cluster = await fillCluster(marks);
    if (cluster === null)
      return report("Redis bytes per pool on Cluster", "skipped: redis-cli is not installed");
    report(
      `Redis bytes per pool after ${marks.map((n) => n.toLocaleString("en")).join(" / ")} charged events (${WRITERS} writers, ids window 24 h)`,
      clusterRow(cluster, marks),
    );
    return;
  }
  const server = await startRedis();
  if (server === null) {
    report("Redis bytes per pool", "skipped: redis-server is not installed");
    return;
  }
  try {
    await redisIdsFigures(server.url, report);
  } finally {
    await server.stop();
  }
}

export async function redisRetentionBench(report) {
  const server = await startRedis();
  if (server === null) {
    report("Redis bytes per scope", "skipped: redis-server is not installed");
    return;
  }
  await redisIdsFigures(server.url, report);
  const on = await fillRedis(server.url, "on", {});
  const off = await fillRedis(server.url, "off", { trim: false });
  const windowed = await fillRedis(server.url, "window", { idsWindowSeconds: 60 });
  // The decision rate, on and off in turn, five times over 20,000 events each: medians, and the median ratio.
  const rates = { on: [], off: [], ratio: [] };
  for (let r = 0; r < 5; r++) {
    const a = (await fillRedis(server.url, `rate-on-${r}`, {}, [20_000])).rate;
    const b = (await fillRedis(server.url, `rate-off-${r}`, { trim: false }, [20_000])).rate;
    rates.on.push(a);
    rates.off.push(b);
    rates.ratio.push(a / b);
  }
  await server.stop();
  const row = (m) => CHECKPOINTS.map((n) => kib(m.get(n))).join(" / ");
  report(
    `Redis bytes per scope (MEMORY USAGE of its keys) after ${CHECKPOINTS.map((n) => n.toLocaleString("en")).join(" / ")} events, ${WRITERS} writers charging one pool`,
    `pool ${row(on.pool)} with trimming, of which ids ${row(on.ids)}; a session (1/${WRITERS} of the events) ${row(on.session)}`,
    {
      baseline: `trimming off: pool ${row(off.pool)}; session ${row(off.session)}`,
      "ids window 60 s (events at 100/s)": `pool ${row(windowed.pool)}, of which ids ${row(windowed.ids)}`,
      growth: `with trimming the pool holds its snapshot, up to 2 x 32 records, and the ids of one to two windows (${Math.round((on.ids.get(100_000) - on.ids.get(10_000)) / 90_000)} bytes per event of the window; 24 h by default); without, ${Math.round((off.pool.get(100_000) - off.pool.get(10_000)) / 90_000)} bytes per event for as long as it is written`,
      rate: `median of 5 alternating runs of 20,000 events: ${Math.round(median(rates.on)).toLocaleString("en")} decisions/s with trimming, ${Math.round(median(rates.off)).toLocaleString("en")}/s without; median ratio ${median(rates.ratio).toFixed(2)}x (range ${Math.min(...rates.ratio).toFixed(2)}-${Math.max(...rates.ratio).toFixed(2)})`,
    },
  );
}

/**
 * As fillRedis, but the WRITERS append in rounds (each its next event, all at once): free-running, one of
 * 8 writers on one pool may lose 200 attempts in a row on a loaded machine and give up. `raw` is a plain
 * connection to the server (on Cluster, to the master holding the pool). Also counts the pool's fields.
 */
async function fillInRounds(url, raw, marks) {
  const prefix = "keep-ids:";
  let appends = 0;
  const now = () => Date.UTC(2026, 10, 1) + appends * 10;
  const stores = await Promise.all(
    Array.from({ length: WRITERS }, () => RedisStore.connect(url, { keyPrefix: prefix, now })),
  );
  const bytesOf = async (kinds) => {
    let sum = 0;
    for (const kind of kinds) sum += await exactBytes(raw, `${prefix}{pool:team}:${kind}`);
    return sum;
  };
  const pool = new Map();
  const ids = new Map();
  const fields = new Map();
  let i = 0;
  for (const until of marks) {
    for (; i < until / WRITERS; i++) {
      await Promise.all(stores.map((store, w) => store.append(`session:keep-${w}`, [usage(w, i)], policy)));
      appends += WRITERS;
    }
    pool.set(until, await bytesOf(KEYS));
    ids.set(until, await bytesOf(["ids", "ids0"]));
    fields.set(
      until,
      (await raw.hlen(`${prefix}{pool:team}:ids`)) + (await raw.hlen(`${prefix}{pool:team}:ids0`)),
    );
  }
  const spent = (await stores[0].state("pool:team"))?.budget.session.spent.tokens;
  if (spent !== marks.at(-1) * 1_100)
    throw new Error(`pool spent ${spent} tokens, not ${marks.at(-1) * 1_100}`);
  await Promise.all(stores.map((s) => s.close()));
  return { pool, ids, fields };
}

/** What fillCluster measured, in one line. */
function clusterRow(cluster, marks) {
  const row = (m) => marks.map((n) => kib(m.get(n))).join(" / ");
  const fields = marks.map((n) => cluster.fields.get(n)).join(" / ");
  return `measured on a Redis Cluster of 3 masters (${Math.round(cluster.seconds)} s): pool ${row(cluster.pool)}, of which ids ${row(cluster.ids)} (${fields} fields: a fence per session, the charges not yet confirmed, each session's first)`;
}

/** fillInRounds on a real Redis Cluster of 3 masters: the pool's step, the session's, the drop. */
async function fillCluster(marks) {
  const cluster = await startCluster();
  if (cluster === null) return null;
  try {
    const raw = await cluster.nodeFor("keep-ids:{pool:team}:snap");
    const t0 = process.hrtime.bigint();
    const filled = await fillInRounds(cluster.url, raw, marks);
    return { ...filled, seconds: Number(process.hrtime.bigint() - t0) / 1e9 };
  } finally {
    await cluster.stop();
  }
}

/** Exact bytes of one key (every element counted, not a sample). */
const exactBytes = async (raw, key) => Number((await raw.call("MEMORY", "USAGE", key, "SAMPLES", "0")) ?? 0);

/**
 * Writes the fields a pool's ids would hold for the first `n` charges of fillRedis (each writer's share)
 * into `key`, a hash field → seq: the same-run baselines of what the ids cost in another form.
 */
async function idsHash(raw, key, n, field) {
  await raw.del(key);
  const pipeline = raw.pipeline();
  for (let i = 0; i < n / WRITERS; i++)
    for (let w = 0; w < WRITERS; w++)
      pipeline.hset(key, field(`session:keep-${w}`, `k${w}-${i}`), i * WRITERS + w);
  await pipeline.exec();
  const bytes = await exactBytes(raw, key);
  await raw.del(key);
  return bytes;
}

/**
 * Redis bytes of one pool after 20,000 and 200,000 charged events, with the default ids window (24 h: the
 * 200,000 are all within it), on one server and on a real Redis Cluster (its own fill), beside what its ids
 * cost in the forms before: a hash `<session>\n<id>` → seq, and the Cluster form before fences (a hash of
 * 11-character fields, 8 bytes of SHA-1, one per charge), each written in the same run.
 */
export async function redisIdsFigures(url, report) {
  const marks = [20_000, 200_000];
  const raw = new Redis(url);
  const filled = await fillInRounds(url, raw, marks);
  const cluster = await fillCluster(marks);
  const old = new Map();
  const compact = new Map();
  for (const n of marks) {
    old.set(n, await idsHash(raw, "keep-baseline:old", n, chargeKey));
    compact.set(n, await idsHash(raw, "keep-baseline:cluster", n, chargeField));
  }
  const listpack = await raw.config("GET", "hash-max-listpack-entries");
  raw.disconnect();
  const row = (m) => marks.map((n) => kib(m.get(n))).join(" / ");
  const per = (m) => marks.map((n) => (m.get(n) / n).toFixed(1)).join(" / ");
  report(
    `Redis bytes per pool after ${marks.map((n) => n.toLocaleString("en")).join(" / ")} charged events (${WRITERS} writers, ids window 24 h)`,
    `one server: pool ${row(filled.pool)}, of which ids ${row(filled.ids)}`,
    {
      baseline: `the ids as they were kept before (a hash <session>\n<id> -> seq, written in this run): ${row(old)}, ${per(old)} bytes per charge`,
      "cluster before": `a pool's ids on Redis Cluster before fences (8 bytes of SHA-1 per charge, base64url): ${row(compact)}, ${per(compact)} bytes per charge (${listpack.join(" ")}: past it a hash is a hashtable)`,
      cluster: cluster === null ? "skipped: redis-cli is not installed" : clusterRow(cluster, marks),
    },
  );
}

/** The hook daemon's RSS as 1,000 sessions of one project each make 5 tool calls over its socket. */
export async function daemonSessionsBench(report) {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "reins-bench-sessions-")));
  const env = { PATH: process.env.PATH, HOME: join(base, "home"), REINS_RUNTIME_DIR: join(base, "run") };
  const name = "d-sessions";
  const socket = socketPath(env, name);
  const dir = join(base, "project");
  mkdirSync(dir);
  writeFileSync(join(dir, "reins.config.json"), "{}");
  const secret = hookSecret(dir);
  const daemon = await startDaemon(env, name, socket);
  const rss = new Map([[0, rssOf(daemon.pid).rss]]);
  const marks = [10, 100, 1_000, 3_000];
  for (let s = 1; s <= marks.at(-1); s++) {
    for (let i = 0; i < 10; i++)
      await socketCall(socket, "claude", dir, secret, input("claude", dir, `s-${s}`, i));
    if (marks.includes(s)) rss.set(s, rssOf(daemon.pid).rss);
  }
  const peak = rssOf(daemon.pid).peak;
  await socketRequest(socket, "POST", "/stop", 5_000);
  await new Promise((resolve) => daemon.on("close", resolve));
  rmSync(base, { recursive: true, force: true });
  const mb = (n) => `${(n / 1048576).toFixed(0)} MB`;
  report(
    "memory: the hook daemon after 10 / 100 / 1,000 / 3,000 sessions of one project (5 tool calls each)",
    marks.map((m) => mb(rss.get(m))).join(" / "),
    {
      baseline: `${mb(rss.get(0))} when it started; peak ${mb(peak)}`,
      growth: `${Math.round((rss.get(1_000) - rss.get(100)) / 900 / 1024)} KiB per session from 100 to 1,000, ${Math.round((rss.get(3_000) - rss.get(1_000)) / 2_000 / 1024)} KiB from 1,000 to 3,000 (a store keeps at most 1,024 scopes' states in memory; a project idle 10 min is closed)`,
    },
  );
}
