// Many projects on one machine: 10 projects x 3 agents sending hook calls at once through the compiled
// client to the user's one hook daemon, against one project's single agent sending alone (same run, same
// daemon). Figures: hook latency (p50, p99) as the agent sees it (the client process, spawned per call), the
// daemon's own answer time over its socket, and the daemon's memory.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REINS_BIN } from "../dist/config/package-info.js";
import { probeDaemon, socketRequest } from "../dist/daemon/probe.js";
import { encodeHeaderValue, PROTOCOL } from "../dist/daemon/protocol.js";
import { socketPath } from "../dist/daemon/paths.js";
import { buildClient } from "../dist/hooks/init.js";
import { hookSecret } from "../dist/server/secret.js";
import { median, quantile } from "./stats.js";

const root = join(import.meta.dirname, "..");
const ms = (ns) => `${(ns / 1e6).toFixed(2)} ms`;
const AGENTS = ["claude", "codex", "gemini"];
const PROJECTS = 10;
/** Hook calls per agent under load: a tool call is two (before and after). */
const CALLS = 60;

/** A hook input of `agent` for a Bash call (before or after it ran). */
function input(agent, project, session, i) {
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

/** One hook call straight to the daemon's socket (no client process); its wall time in ns. */
function socketCall(socket, agent, project, secret, body) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = request(
      {
        socketPath: socket,
        method: "POST",
        path: `/hooks/${agent}`,
        agent: false,
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${secret}`,
          "x-reins-protocol": PROTOCOL,
          "x-reins-root": encodeHeaderValue(project),
        },
      },
      (res) => {
        res.resume();
        res.on("end", () =>
          res.statusCode === 200
            ? resolve(Number(process.hrtime.bigint() - t0))
            : reject(new Error(`daemon answered ${res.statusCode}`)),
        );
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

const rssOf = (pid) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
  return { rss: kb("VmRSS") * 1024, peak: kb("VmHWM") * 1024 };
};

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
  // The daemon as the clients start it: its own process, started here so its memory is measured alone.
  const daemon = spawn(process.execPath, [REINS_BIN, "daemon", "run", "--name", name], {
    env,
    stdio: "ignore",
  });
  let status = null;
  for (let i = 0; i < 200 && status === null; i++) {
    await new Promise((r) => setTimeout(r, 50));
    status = await probeDaemon(socket, 500);
  }
  if (status === null) throw new Error("the hook daemon did not start");
  const idleRss = rssOf(daemon.pid).rss;

  // Warm up: every project opened once, through the client.
  for (const [p, { dir }] of projects.entries())
    for (const agent of AGENTS)
      await clientCall(client, agent, dir, env, input(agent, dir, `warm-${p}-${agent}`, 0), name);

  // One project's one agent alone: the baseline.
  const alone = [];
  const aloneSocket = [];
  const one = projects[0];
  for (let i = 0; i < CALLS * 2; i++)
    alone.push(await clientCall(client, "claude", one.dir, env, input("claude", one.dir, "alone", i), name));
  for (let i = 0; i < CALLS * 4; i++)
    aloneSocket.push(
      await socketCall(socket, "claude", one.dir, one.secret, input("claude", one.dir, "alone-socket", i)),
    );

  // 10 projects x 3 agents, each agent sending its calls one after another, all agents at once.
  const loaded = [];
  const agents = projects.flatMap(({ dir }, p) =>
    AGENTS.map((agent) => ({ dir, agent, session: `load-${p}-${agent}` })),
  );
  const t0 = process.hrtime.bigint();
  await Promise.all(
    agents.map(async ({ dir, agent, session }) => {
      for (let i = 0; i < CALLS; i++)
        loaded.push(await clientCall(client, agent, dir, env, input(agent, dir, session, i), name));
    }),
  );
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const loadedSocket = [];
  await Promise.all(
    projects.flatMap(({ dir, secret }, p) =>
      AGENTS.map(async (agent) => {
        for (let i = 0; i < CALLS; i++)
          loadedSocket.push(
            await socketCall(socket, agent, dir, secret, input(agent, dir, `load-socket-${p}-${agent}`, i)),
          );
      }),
    ),
  );
  const memory = rssOf(daemon.pid);
  const open = (await probeDaemon(socket))?.projects.length ?? 0;
  await socketRequest(socket, "POST", "/stop", 5_000);
  await new Promise((resolve) => daemon.on("close", resolve));
  rmSync(base, { recursive: true, force: true });

  const calls = agents.length * CALLS;
  report(
    `hooks: 10 projects x 3 agents at once through the client to the user's one hook daemon (${calls} calls, ${(calls / wall).toFixed(0)}/s)`,
    `p50 ${ms(median(loaded))}, p99 ${ms(quantile(loaded, 0.99))}`,
    {
      baseline: `one project's one agent alone, same client and daemon: p50 ${ms(median(alone))}, p99 ${ms(quantile(alone, 0.99))}`,
      ratio: `p50 ${(median(loaded) / median(alone)).toFixed(2)}x, p99 ${(quantile(loaded, 0.99) / quantile(alone, 0.99)).toFixed(2)}x the one project's`,
      note: "30 agents each sending back to back on 2 cores: every call is a process the agent spawns; real agents wait seconds for the model between calls",
      aim: "p99 <= 5 ms",
    },
  );
  report(
    "hooks: the daemon's own answer over its socket (no client process), 30 agents at once",
    `p50 ${ms(median(loadedSocket))}, p99 ${ms(quantile(loadedSocket, 0.99))}`,
    { baseline: `one agent alone: p50 ${ms(median(aloneSocket))}, p99 ${ms(quantile(aloneSocket, 0.99))}` },
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
