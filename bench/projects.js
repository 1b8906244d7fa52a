// Many projects on one machine: 10 projects x 3 agents sending hook calls at once through the compiled
// client to the user's one hook daemon, against one project's single agent sending alone (same run, same
// daemon). Figures: hook latency (p50, p99) as the agent sees it (the client process, spawned per call), the
// daemon's own answer time over its socket, and the daemon's memory.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REINS_BIN } from "../dist/base/config/package-info.js";
import { probeDaemon, socketRequest } from "../dist/guard/daemon/probe.js";
import { freshNonce, mac } from "../dist/guard/daemon/key.js";
import { callParts, encodeHeaderValue, PROTOCOL } from "../dist/guard/daemon/protocol.js";
import { socketPath } from "../dist/guard/daemon/paths.js";
import { buildClient } from "../dist/install/native-client.js";
import { hookSecret } from "../dist/base/config/hook-secret.js";
import { median, quantile } from "./stats.js";

const root = join(import.meta.dirname, "..");
const ms = (ns) => `${(ns / 1e6).toFixed(2)} ms`;
const AGENTS = ["claude", "codex", "gemini"];
const PROJECTS = 10;
/** Hook calls per agent under load: a tool call is two (before and after). */
const CALLS = 40;
/** The paced agents' time between tool calls, ms. */
const THINK = 500;

/** A hook input of `agent` for a Bash call (before or after it ran). */
export function input(agent, project, session, i) {
  const command = `cat src/file${i % 7}.ts`;
  if (agent === "gemini")
    return i % 2 === 0
      ? {
          session_id: session,
          hook_event_name: "BeforeTool",
          tool_name: "run_shell_command",
          tool_input: { command },
          cwd: project,
          timestamp: "2026-11-28T00:00:00Z",
        }
      : {
          session_id: session,
          hook_event_name: "AfterTool",
          tool_name: "run_shell_command",
          tool_input: { command },
          tool_response: { llmContent: "ok" },
          cwd: project,
          timestamp: "2026-11-28T00:00:00Z",
        };
  const base = {
    session_id: session,
    tool_name: "Bash",
    tool_input: { command },
    cwd: project,
    ...(agent === "codex"
      ? {
          turn_id: `t${i}`,
          model: "m",
          permission_mode: "default",
          transcript_path: null,
          tool_use_id: `u${i}`,
        }
      : {}),
  };
  return i % 2 === 0
    ? { ...base, hook_event_name: "PreToolUse" }
    : {
        ...base,
        hook_event_name: "PostToolUse",
        tool_response: agent === "codex" ? "ok" : { stdout: "ok", stderr: "", interrupted: false },
      };
}

/** Runs bench/hook-agent.js on `spec` (see there) in a process of its own; the wall time of each call, ns. */
async function runAgent(base, tag, spec) {
  const file = join(base, `${tag}.json`);
  writeFileSync(file, JSON.stringify(spec));
  const child = spawn(process.execPath, [join(root, "bench", "hook-agent.js"), file], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const code = await new Promise((resolve) => child.on("close", resolve));
  if (code !== 0) throw new Error(`bench agent ${tag} exited ${code}`);
  return JSON.parse(out);
}

/** Runs the client once with `body` on stdin; its wall time in ns. */
function clientCall(client, agent, cwd, env, body, name) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(client, [agent, process.execPath, REINS_BIN, name], {
      cwd,
      env,
      stdio: ["pipe", "ignore", "ignore"],
    });
    child.on("close", (code) =>
      code === 0 ? resolve(Number(process.hrtime.bigint() - t0)) : reject(new Error(`client exited ${code}`)),
    );
    child.stdin.end(JSON.stringify(body));
  });
}

/**
 * One hook call over the daemon's socket (no client process), signed over a fresh nonce with the project's
 * hook secret as the clients sign it (docs/daemon-proof.md); the parsed answer.
 */
export function signedCall(socket, agent, root, secret, body) {
  const text = JSON.stringify(body);
  const nonce = freshNonce();
  const rootHeader = encodeHeaderValue(root);
  const auth = mac(secret, callParts(nonce, agent, rootHeader, "", text));
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath: socket,
        method: "POST",
        path: `/hooks/${agent}`,
        agent: false,
        headers: {
          "content-type": "application/json",
          "x-reins-nonce": nonce,
          "x-reins-auth": auth,
          "x-reins-protocol": PROTOCOL,
          "x-reins-root": rootHeader,
        },
      },
      (res) => {
        let answer = "";
        res.on("data", (chunk) => (answer += chunk));
        res.on("end", () =>
          res.statusCode === 200
            ? resolve(JSON.parse(answer))
            : reject(new Error(`daemon answered ${res.statusCode}: ${answer}`)),
        );
      },
    );
    req.on("error", reject);
    req.end(text);
  });
}

/** One signed hook call straight to the daemon's socket; its wall time in ns. */
export async function socketCall(socket, agent, project, secret, body) {
  const t0 = process.hrtime.bigint();
  await signedCall(socket, agent, project, secret, body);
  return Number(process.hrtime.bigint() - t0);
}

/** A process's resident memory now and at its peak, bytes. */
export const rssOf = (pid) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
  return { rss: kb("VmRSS") * 1024, peak: kb("VmHWM") * 1024 };
};

/** The hook daemon as the clients start it: its own process, so its memory is measured alone. */
export async function startDaemon(env, name, socket) {
  // BENCH_DAEMON_NODE_FLAGS (say `--cpu-prof --cpu-prof-dir=/tmp/prof`) profiles the daemon under load.
  const flags = process.env.BENCH_DAEMON_NODE_FLAGS?.split(" ").filter(Boolean) ?? [];
  const daemon = spawn(process.execPath, [...flags, REINS_BIN, "daemon", "run", "--name", name], {
    env,
    stdio: "ignore",
  });
  let status = null;
  for (let i = 0; i < 200 && status === null; i++) {
    await new Promise((r) => setTimeout(r, 50));
    status = await probeDaemon(socket, 500);
  }
  if (status === null) throw new Error("the hook daemon did not start");
  return daemon;
}

export async function projectsBench(report) {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "reins-bench-projects-")));
  const runtime = join(base, "run");
  const env = { PATH: process.env.PATH, HOME: join(base, "home"), REINS_RUNTIME_DIR: runtime };
  const name = "d-bench";
  const socket = socketPath(env, name);
  const client = buildClient(base, join(root, "src", "client", "reins-hook.c"));
  if (client === null) {
    report("hooks of 10 projects x 3 agents at once", "skipped: no C compiler");
    return;
  }
  const projects = [];
  for (let p = 0; p < PROJECTS; p++) {
    const dir = join(base, `project-${p}`);
    mkdirSync(dir);
    writeFileSync(join(dir, "reins.config.json"), "{}");
    projects.push({ dir, secret: hookSecret(dir) });
  }
  const daemon = await startDaemon(env, name, socket);
  const idleRss = rssOf(daemon.pid).rss;

  // Warm up: every project opened once, through the client.
  for (const [p, { dir }] of projects.entries())
    for (const agent of AGENTS)
      await clientCall(client, agent, dir, env, input(agent, dir, `warm-${p}-${agent}`, 0), name);

  // The floor: a no-op command hook (/bin/true), spawned as an agent spawns its hooks.
  const inputs = Array.from({ length: 200 }, () => ({}));
  const noop = await runAgent(base, "noop", {
    client: "/bin/true",
    args: [],
    cwd: base,
    env,
    inputs,
    pace: 0,
    delay: 0,
  });

  // One project's one agent alone, straight to the daemon's socket: the baseline of its own answer.
  const aloneSocket = [];
  const one = projects[0];
  for (let i = 0; i < CALLS * 4; i++)
    aloneSocket.push(
      await socketCall(socket, "claude", one.dir, one.secret, input("claude", one.dir, "alone", i)),
    );

  // 10 projects x 3 agents at once, two ways. Paced: each agent makes a tool call (its two hook calls) every
  // THINK ms, as an agent does between model turns (real ones take seconds: this is many times their rate).
  // Burst: each agent sends its hook calls back to back, all agents at once (a stress test of the daemon).
  const agents = projects.flatMap(({ dir, secret }, p) =>
    AGENTS.map((agent) => ({ dir, secret, agent, session: `load-${p}-${agent}` })),
  );
  const everyAgent = async (calls, pace, send) => {
    const times = [];
    const t0 = process.hrtime.bigint();
    await Promise.all(
      agents.map(async (a, n) => {
        // Agents start spread over one pace, as sessions do.
        if (pace > 0) await new Promise((r) => setTimeout(r, (n * pace) / agents.length));
        for (let i = 0; i < calls; i++) {
          times.push(await send(a, i));
          if (pace > 0 && i % 2 === 1) await new Promise((r) => setTimeout(r, pace));
        }
      }),
    );
    return { times, rate: (agents.length * calls) / (Number(process.hrtime.bigint() - t0) / 1e9) };
  };
  // Each agent in a process of its own, spawning its own hooks as agent CLIs do: the client's time is then
  // not the time one bench process takes to spawn thirty agents' hooks one after another.
  const agentProcesses = async (tag, pace, which) => {
    const t0 = process.hrtime.bigint();
    const results = await Promise.all(
      which.map((a, n) =>
        runAgent(base, `${tag}-${n}`, {
          client,
          args: [a.agent, process.execPath, REINS_BIN, name],
          cwd: a.dir,
          env,
          inputs: Array.from({ length: CALLS }, (_x, i) => input(a.agent, a.dir, `${tag}-${a.session}`, i)),
          pace,
          delay: (n * pace) / which.length,
        }),
      ),
    );
    return {
      times: results.flat(),
      rate: (which.length * CALLS) / (Number(process.hrtime.bigint() - t0) / 1e9),
    };
  };
  const viaSocket = (tag) => (a, i) =>
    socketCall(socket, a.agent, a.dir, a.secret, input(a.agent, a.dir, `${tag}-${a.session}`, i));
  const paced = await agentProcesses("paced", THINK, agents);
  const pacedAlone = await agentProcesses("paced-alone", THINK, agents.slice(0, 1));
  const pacedSocket = await everyAgent(CALLS, THINK, viaSocket("paced-socket"));
  const burst = await agentProcesses("burst", 0, agents);
  const burstSocket = await everyAgent(CALLS, 0, viaSocket("burst-socket"));
  const memory = rssOf(daemon.pid);
  const open = (await probeDaemon(socket))?.projects.length ?? 0;
  await socketRequest(socket, "POST", "/stop", 5_000);
  await new Promise((resolve) => daemon.on("close", resolve));
  rmSync(base, { recursive: true, force: true });

  const p = (times) => `p50 ${ms(median(times))}, p99 ${ms(quantile(times, 0.99))}`;
  const versus = (times, base) =>
    `p50 ${(median(times) / median(base)).toFixed(2)}x, p99 ${(quantile(times, 0.99) / quantile(base, 0.99)).toFixed(2)}x the one project's`;
  report(
    `hooks: 10 projects x 3 agents at once, each a tool call every ${THINK} ms, through the client to the user's one hook daemon (${paced.rate.toFixed(0)} hook calls/s)`,
    p(paced.times),
    {
      baseline: `one project's one agent alone, same client, daemon and pace: ${p(pacedAlone.times)}`,
      ratio: versus(paced.times, pacedAlone.times),
      floor: `a bare process spawn here: ${p(noop)} (every command hook pays it, whatever it runs)`,
      "the daemon's own answer (over its socket, no client process)": `${p(pacedSocket.times)}; alone ${p(aloneSocket)} (${versus(pacedSocket.times, aloneSocket)})`,
      aim: "p99 <= 5 ms",
    },
  );
  report(
    `hooks, burst: 30 agents sending back to back at once (${burst.rate.toFixed(0)} hook calls/s through the client, ${burstSocket.rate.toFixed(0)}/s over the socket)`,
    p(burst.times),
    {
      "the daemon's own answer": p(burstSocket.times),
      note: "every call waits behind the others on 2 cores: this is the machine's ceiling, not an agent's experience",
    },
  );
  report(
    "memory: the one hook daemon serving 10 projects (all daemons' RSS)",
    `${(memory.rss / 1048576).toFixed(0)} MB after the load (peak ${(memory.peak / 1048576).toFixed(0)} MB)`,
    {
      baseline: `${(idleRss / 1048576).toFixed(0)} MB when it started, before any project; ${open} projects open after`,
      aim: "<= 150 MB in all",
    },
  );
}
