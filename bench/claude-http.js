// Claude Code's default hook path: its native http hooks posting to the user's one hook daemon on its
// loopback port. 10 projects x 3 sessions, each making a hook call every 100 ms, against a bare loopback
// POST (a server that answers {} and nothing else) measured at the same time under the same load; the
// daemon's p99.9; and the SQLite WAL's growth per decision beside the bytes the store writes per event.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolvePolicy } from "../dist/core/index.js";
import { httpHookToken } from "../dist/daemon/http-port.js";
import { probeDaemon, socketRequest } from "../dist/daemon/probe.js";
import { encodeHeaderValue } from "../dist/daemon/protocol.js";
import { socketPath } from "../dist/daemon/paths.js";
import { hookSecret } from "../dist/server/secret.js";
import { SqliteStore } from "../dist/store/sqlite.js";
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

/** The WAL's growth per decision: one event appended at a time, as a hook call does, checkpoints left out. */
function walGrowth(report) {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "reins-bench-wal-")));
  const policy = resolvePolicy({ budget: { session: { tokens: null }, task: { tokens: null } } });
  const path = join(base, "reins.db");
  const store = new SqliteStore(path);
  const events = workload(1_200);
  const N = 1_000;
  return (async () => {
    for (const e of events.slice(0, 200)) await store.append("session:bench", [e], policy);
    const walBefore = statSync(`${path}-wal`).size;
    const bytesBefore = store.writes.bytes;
    for (const e of events.slice(200, 200 + N)) await store.append("session:bench", [e], policy);
    const wal = (statSync(`${path}-wal`).size - walBefore) / N;
    const stored = (store.writes.bytes - bytesBefore) / N;
    await store.close();
    rmSync(base, { recursive: true, force: true });
    report(
      "SQLite WAL growth per decision (one event per commit, as a hook call)",
      `${(wal / 1024).toFixed(1)} KiB`,
      {
        baseline: `the bytes the store writes per event (its record, decision and snapshot share): ${(stored / 1024).toFixed(2)} KiB`,
        ratio: `${(wal / stored).toFixed(1)}x`,
        where:
          "each commit writes every page it touched whole (4 KiB + 24 bytes a frame): the log's leaf, its two indexes' leaves, the scope's head, and a snapshot's pages when one is due",
      },
    );
  })();
}

export async function claudeHttpBench(report) {
  await hookLoad(report);
  await walGrowth(report);
}
