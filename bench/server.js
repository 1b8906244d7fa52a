// Control-plane benchmarks: events/s through POST /api/events (batches) and decisions/s through
// POST /api/decide with concurrent clients, against a real `reins serve` process on 127.0.0.1 with
// SQLite, each beside a baseline measured in the same run: a bare Fastify process that parses the same
// bodies and answers without recording anything. On Linux each figure also says the CPU the server spent
// per request, which the load on a shared machine moves far less than the rate.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { workload } from "./workload.js";

const bin = join(import.meta.dirname, "..", "bin", "reins.js");
const TOKEN = "bench-token-0123456789abcdef";
const SECONDS = 6;
const BATCH = 100;
const SESSIONS = 50;
/** Concurrent hook clients for /api/decide: a fleet's agents calling at once. */
const CLIENTS = 32;

/** The CPU time (user + system) a process has used, µs, or null where /proc does not say. */
function cpuMicros(pid) {
  const path = `/proc/${pid}/stat`;
  if (!existsSync(path)) return null;
  // Fields 14 and 15 (utime, stime) in clock ticks of 1/100 s, after the command's parenthesised name.
  const text = readFileSync(path, "utf8");
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** Starts a process that prints its URL; resolves with the URL, its pid and a stop function. */
function start(args, cwd) {
  const child = spawn(process.execPath, args, { cwd, stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (c) => {
      out += c.toString();
      const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
      if (url !== undefined)
        resolve({
          url,
          pid: child.pid,
          stop: () =>
            new Promise((done) => {
              child.on("close", done);
              child.kill("SIGTERM");
            }),
        });
    });
    child.on("close", (code) => reject(new Error(`${args.join(" ")} exited ${code}`)));
  });
}

const BARE = `
import Fastify from "fastify";
const app = Fastify({ bodyLimit: 16 * 1024 * 1024 });
app.post("/api/events", (request) => ({ accepted: request.body.events.length, duplicates: 0 }));
app.post("/api/decide", (request) => ({ decisions: request.body.events.map(() => ({ verdict: "allow" })) }));
console.log(await app.listen({ host: "127.0.0.1", port: 0 }));
`;

/** Endless fresh events: each session's workload in order, every event with a new id. */
function source() {
  const perSession = Array.from({ length: SESSIONS }, (_, i) => workload(5_000, `session:load-${i}`));
  const next = new Array(SESSIONS).fill(0);
  let round = 0;
  let turn = 0;
  /** The next event of session `s` (the next session in turn when not given). */
  return (s = turn++ % SESSIONS) => {
    if (next[s] >= perSession[s].length) {
      next[s] = 0;
      round += 1;
    }
    const event = perSession[s][next[s]++];
    return { ...event, id: `${round}-${event.scope}-${next[s]}` };
  };
}

/**
 * A load of `connections` concurrent clients on `target`, after a 2-second warm-up run that is not counted,
 * with the server's CPU time per request over the counted run (null where it cannot be read).
 */
async function load(target, path, body, connections) {
  const run = (duration) =>
    autocannon({
      url: `${target.url}${path}`,
      connections,
      duration,
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      requests: [{ setupRequest: (req) => ({ ...req, body: body() }) }],
    });
  await run(2);
  const cpuBefore = cpuMicros(target.pid);
  const result = await run(SECONDS);
  const cpuAfter = cpuMicros(target.pid);
  const answered = result["2xx"] + result.non2xx;
  return {
    rps: result.requests.average,
    cpu: cpuBefore === null || cpuAfter === null || answered === 0 ? null : (cpuAfter - cpuBefore) / answered,
    ok: result["2xx"],
    errors: result.non2xx + result.errors,
    p50: result.latency.p50,
    p99: result.latency.p99,
  };
}

export async function serverBench(report) {
  const dir = mkdtempSync(join(tmpdir(), "reins-bench-server-"));
  // No limits: a paused budget or an open breaker would short-circuit the work being measured.
  writeFileSync(
    join(dir, "reins.config.json"),
    JSON.stringify({ budget: { session: { tokens: null }, task: { tokens: null }, taskTypes: {} } }),
  );
  const server = await start([bin, "serve", "--port", "0", "--token", TOKEN], dir);
  const bare = await start(
    ["--input-type=module", "-e", BARE.replace('"fastify"', JSON.stringify(import.meta.resolve("fastify")))],
    dir,
  );
  try {
    const next = source();
    let batches = 0;
    const batchBody = () => {
      // One session's events per batch: what a remote hook's spool or an importer sends.
      const s = batches++ % SESSIONS;
      const events = [];
      for (let i = 0; i < BATCH; i++) events.push(next(s));
      return JSON.stringify({ events });
    };
    const decideBody = () => {
      const event = next();
      return JSON.stringify({ scope: event.scope, events: [event] });
    };

    const ingest = await load(server, "/api/events", batchBody, 4);
    const ingestBase = await load(bare, "/api/events", batchBody, 4);
    const decide = await load(server, "/api/decide", decideBody, CLIENTS);
    const decideBase = await load(bare, "/api/decide", decideBody, CLIENTS);
    const cpu = (reins, base, what) =>
      reins.cpu === null || base.cpu === null
        ? {}
        : {
            cpu: `server ${Math.round(reins.cpu)} µs per ${what}, bare Fastify ${Math.round(base.cpu)} µs (${(reins.cpu / base.cpu).toFixed(1)}x)`,
          };

    const eps = ingest.rps * BATCH;
    report(
      "Ingest through POST /api/events (SQLite, batches of 100, 4 connections)",
      `${Math.round(eps).toLocaleString("en")} events/s`,
      {
        latency: `p50 ${ingest.p50} ms, p99 ${ingest.p99} ms per batch; ${ingest.errors} non-2xx`,
        baseline: `bare Fastify parsing the same batches: ${Math.round(ingestBase.rps * BATCH).toLocaleString("en")} events/s (reins ${((ingestBase.rps * BATCH) / eps).toFixed(1)}x slower)`,
        ...cpu(ingest, ingestBase, "batch"),
        aim: ">= 10,000 events/s",
      },
    );
    report(
      `Decisions through POST /api/decide (SQLite, ${CLIENTS} concurrent clients)`,
      `${Math.round(decide.rps).toLocaleString("en")} decisions/s`,
      {
        latency: `p50 ${decide.p50} ms, p99 ${decide.p99} ms; ${decide.errors} non-2xx`,
        baseline: `bare Fastify answering the same requests: ${Math.round(decideBase.rps).toLocaleString("en")}/s (reins ${(decideBase.rps / decide.rps).toFixed(1)}x slower)`,
        ...cpu(decide, decideBase, "decision"),
        aim: ">= 5,000 decisions/s",
      },
    );
  } finally {
    await server.stop();
    await bare.stop();
  }
}
