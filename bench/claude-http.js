// Claude Code's default hook path: its native http hooks posting to the user's one hook daemon on its
// loopback port. 10 projects x 3 sessions, each making a hook call every 100 ms, against a bare loopback
// POST (a server that answers {} and nothing else) measured at the same time under the same load; the
// daemon's p99.9; and the SQLite WAL's growth per decision beside the bytes the store writes per event.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { resolvePolicy } from "../dist/base/core/index.js";
import { httpHookToken } from "../dist/guard/daemon/http-port.js";
import { probeDaemon, socketRequest } from "../dist/guard/daemon/probe.js";
import { encodeHeaderValue } from "../dist/guard/daemon/protocol.js";
import { socketPath } from "../dist/guard/daemon/paths.js";
import { hookSecret } from "../dist/base/config/hook-secret.js";
import { SqliteStore } from "../dist/base/store/sqlite.js";
import { input, startDaemon } from "./projects.js";
import { median, quantile } from "./stats.js";
import { workload } from "./workload.js";

const ms = (ns) => `${(ns / 1e6).toFixed(2)} ms`;
const PROJECTS = 10;
const SESSIONS = 3;
const PACE = 100;
/** Calls per session (`BENCH_CALLS` to change). */
const CALLS = Number(process.env.BENCH_CALLS ?? 100);

/** POSTs `body` on a kept-alive connection as Claude Code does; the wall time in ns. */
function post(agent, port, headers, body) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = request(
      { host: "127.0.0.1", port, method: "POST", path: "/hooks/claude", agent, headers },
      (res) => {
        res.resume();
        res.on("end", () =>
          res.statusCode === 200
            ? resolve(Number(process.hrtime.bigint() - t0))
            : reject(new Error(`answered ${res.statusCode}`)),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** A bare loopback server in a process of its own: reads the body, answers {}. Its port and process. */
async function bareServer() {
  const code = `require("node:http").createServer((q, r) => { q.resume(); q.on("end", () => { r.setHeader("content-type", "application/json"); r.end("{}"); }); }).listen(0, "127.0.0.1", function () { process.stdout.write(String(this.address().port)); });`;
  const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise((resolve) => child.stdout.once("data", (d) => resolve(Number(d))));
  return { port, child };
}

/** Streams that each POST every PACE ms, CALLS times; every call's time, ns. */
async function paced(streams) {
  const times = [];
  await Promise.all(
    streams.map(async (s, n) => {
      await new Promise((r) => setTimeout(r, (n * PACE) / streams.length));
      for (let i = 0; i < CALLS; i++) {
        const started = Date.now();
        times.push(await s(i));
        await new Promise((r) => setTimeout(r, Math.max(0, PACE - (Date.now() - started))));
      }
    }),
  );
  return times;
}

async function hookLoad(report) {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "reins-bench-http-")));
  const env = { PATH: process.env.PATH, HOME: join(base, "home"), REINS_RUNTIME_DIR: join(base, "run") };
  const name = "d-benchhttp";
  const socket = socketPath(env, name);
  const projects = [];
  for (let p = 0; p < PROJECTS; p++) {
    const dir = join(base, `project-${p}`);
    mkdirSync(dir);
    writeFileSync(join(dir, "reins.config.json"), "{}");
    projects.push({ dir, token: httpHookToken(hookSecret(dir), dir) });
  }
  const daemon = await startDaemon(env, name, socket);
  const port = (await probeDaemon(socket))?.httpPort;
  if (port === undefined) throw new Error("the daemon answers no http hooks");
  const bare = await bareServer();
  const sessions = projects.flatMap(({ dir, token }, p) =>
    Array.from({ length: SESSIONS }, (_x, s) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const headers = {
        "content-type": "application/json",
        "x-reins-root": encodeHeaderValue(dir),
        authorization: `Bearer ${token}`,
      };
      return (i) => post(agent, port, headers, JSON.stringify(input("claude", dir, `http-${p}-${s}`, i)));
    }),
  );
  // Warm up: every project opened once.
  for (const s of sessions) await s(0);
  // The baseline under the same load: three sessions' worth of bare POSTs, at the same pace, at the same time.
  const bareStreams = Array.from({ length: SESSIONS }, (_x, s) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const headers = { "content-type": "application/json" };
    const dir = projects[0].dir;
    return (i) => post(agent, bare.port, headers, JSON.stringify(input("claude", dir, `bare-${s}`, i)));
  });
  const t0 = process.hrtime.bigint();
  const [hooks, bareTimes] = await Promise.all([paced(sessions), paced(bareStreams)]);
  const rate = hooks.length / (Number(process.hrtime.bigint() - t0) / 1e9);
  await socketRequest(socket, "POST", "/stop", 5_000);
  await new Promise((resolve) => daemon.on("close", resolve));
  bare.child.kill();
  rmSync(base, { recursive: true, force: true });
  const p = (t) => `p50 ${ms(median(t))}, p99 ${ms(quantile(t, 0.99))}`;
  report(
    `Claude Code's http hook to the user's daemon: 10 projects x 3 sessions, each a call every ${PACE} ms (${rate.toFixed(0)} calls/s)`,
    p(hooks),
    {
      baseline: `a bare loopback POST (a server answering {}), same time, same load: ${p(bareTimes)}`,
      ratio: `p50 ${(median(hooks) / median(bareTimes)).toFixed(2)}x, p99 ${(quantile(hooks, 0.99) / quantile(bareTimes, 0.99)).toFixed(2)}x the bare POST's`,
      "the daemon's p99.9": `${ms(quantile(hooks, 0.999))} (bare POST ${ms(quantile(bareTimes, 0.999))}); max ${ms(Math.max(...hooks))} of ${hooks.length} calls`,
      aim: "p99 <= 5 ms",
    },
  );
}

/** An empty SQLite file with 4 KiB pages, as reins made every store before 1 KiB pages: the same-run baseline. */
function fileOf4KiB(path) {
  const db = new Database(path);
  db.pragma("page_size = 4096");
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE t (x); DROP TABLE t;");
  db.close();
}

/**
 * The WAL frames appended to `path` from byte `from` on, counted by what their page holds (dbstat's table or
 * index and page type, or the file's first page): frames per decision, most first.
 */
function framesByOwner(path, from, decisions) {
  const db = new Database(path, { readonly: true });
  const pageSize = db.pragma("page_size", { simple: true });
  const owner = new Map(
    db
      .prepare("SELECT pageno, name, pagetype FROM dbstat")
      .all()
      .map((r) => [r.pageno, `${r.name} ${r.pagetype}`]),
  );
  db.close();
  const wal = readFileSync(`${path}-wal`);
  const counts = new Map();
  let commits = 0;
  for (let off = from; off + 24 + pageSize <= wal.length; off += 24 + pageSize) {
    const page = wal.readUInt32BE(off);
    // A commit's last frame holds the file's size in pages after it; every other frame holds 0.
    if (wal.readUInt32BE(off + 4) !== 0) commits += 1;
    const who = page === 1 ? "first page" : (owner.get(page) ?? "free");
    counts.set(who, (counts.get(who) ?? 0) + 1);
  }
  const frames = [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([who, n]) => `${who} ${(n / decisions).toFixed(2)}`)
    .join(", ");
  return `${frames}; ${(commits / decisions).toFixed(2)} commits per decision`;
}

/**
 * The WAL's growth per decision in a new store and in one of 4 KiB pages: one event appended at a time, as
 * a hook call does. A reader holds its snapshot meanwhile, so no checkpoint starts the WAL over.
 */
async function walOf(path, events) {
  const policy = resolvePolicy({ budget: { session: { tokens: null }, task: { tokens: null } } });
  const store = new SqliteStore(path);
  for (const e of events.slice(0, 200)) await store.append("session:bench", [e], policy);
  const reader = new Database(path, { readonly: true });
  reader.prepare("BEGIN").run();
  reader.prepare("SELECT count(*) FROM snapshots").get();
  const walBefore = statSync(`${path}-wal`).size;
  const bytesBefore = store.writes.bytes;
  const decisions = events.length - 200;
  let whole = 0;
  for (const e of events.slice(200)) {
    const result = await store.append("session:bench", [e], policy);
    for (const r of result.records)
      whole += JSON.stringify(r.event).length + JSON.stringify(r.decision).length;
  }
  const wal = (statSync(`${path}-wal`).size - walBefore) / decisions;
  const stored = (store.writes.bytes - bytesBefore) / decisions;
  const where = framesByOwner(path, walBefore, decisions);
  reader.prepare("COMMIT").run();
  reader.close();
  await store.close();
  return { wal, stored, whole: whole / decisions, where };
}

/** The WAL's growth per decision, new store against a store of 4 KiB pages made in the same run. */
export async function walBench(report) {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "reins-bench-wal-")));
  const events = workload(1_200);
  const small = await walOf(join(base, "new.db"), events);
  fileOf4KiB(join(base, "old.db"));
  const large = await walOf(join(base, "old.db"), events);
  rmSync(base, { recursive: true, force: true });
  const kib = (n) => `${(n / 1024).toFixed(2)} KiB`;
  report(
    "SQLite WAL growth per decision (one event per commit, as a hook call; 1 KiB pages)",
    kib(small.wal),
    {
      baseline: `the bytes the store writes per event (its record, decision and snapshot share): ${kib(small.stored)}`,
      ratio: `${(small.wal / small.stored).toFixed(1)}x`,
      "a record as the API serves it (the event and its whole decision)": `${kib(small.whole)}; the WAL per decision is ${(small.wal / small.whole).toFixed(1)}x it`,
      "a store of 4 KiB pages (made before), same run": `${kib(large.wal)}, ${(large.wal / large.stored).toFixed(1)}x; the new store's WAL is ${((100 * small.wal) / large.wal).toFixed(0)}% of it`,
      "frames per decision, 1 KiB": small.where,
      "frames per decision, 4 KiB": large.where,
    },
  );
}

export async function claudeHttpBench(report) {
  await hookLoad(report);
  await walBench(report);
}
