// The hook daemon's memory bounded by sessions (issue 39): the daemon started as the clients start it, in a
// throwaway HOME, runtime and state folder, 64 projects (git init, a config, a hook secret: what `reins init`
// leaves that the daemon reads), and 10,000 Claude Code sessions spread over them, each a SessionStart and
// two tool calls (their PreToolUse and PostToolUse) over the daemon's socket, signed as
// the clients sign. Figures: the daemon's VmRSS after a settle and its peak (VmHWM), beside an idle daemon's
// and its RSS at 1,000 sessions, in the same run. `--sessions <n>` and `--projects <n>` change the load.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REINS_BIN } from "../dist/base/config/package-info.js";
import { probeDaemon, socketRequest } from "../dist/guard/daemon/probe.js";
import { daemonArgs } from "../dist/guard/daemon/start.js";
import { socketPath } from "../dist/guard/daemon/paths.js";
import { hookSecret } from "../dist/base/config/hook-secret.js";
import { rssOf, signedCall } from "./projects.js";

/** Sessions sent at once (each one's calls in order, as an agent makes them). */
const AT_ONCE = 8;
/** How long the daemon is left without calls before its RSS is read: V8 gives memory back once idle. */
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 10_000);

/** The hook calls of one short Claude Code session in `cwd`. */
export function sessionCalls(session, cwd) {
  const base = {
    session_id: session,
    cwd,
    transcript_path: join(cwd, "none.jsonl"),
    permission_mode: "default",
  };
  const tool = (i) => ({ ...base, tool_name: "Bash", tool_input: { command: `cat src/file${i}.ts` } });
  return [
    { ...base, hook_event_name: "SessionStart", source: "startup" },
    ...[0, 1].flatMap((i) => [
      { ...tool(i), hook_event_name: "PreToolUse", tool_use_id: `u${i}` },
      {
        ...tool(i),
        hook_event_name: "PostToolUse",
        tool_use_id: `u${i}`,
        tool_response: { stdout: "ok", stderr: "", interrupted: false },
      },
    ]),
  ];
}

/** The hook daemon started with the arguments the clients start it with, in a process of its own. */
async function startDaemon(env, name, socket) {
  const daemon = spawn(process.execPath, daemonArgs(REINS_BIN, name), { env, stdio: "ignore" });
  let status = null;
  for (let i = 0; i < 200 && status === null; i++) {
    await new Promise((r) => setTimeout(r, 50));
    status = await probeDaemon(socket, 500);
  }
  if (status === null) throw new Error("the hook daemon did not start");
  return daemon;
}

/**
 * Where a process's resident memory is, from /proc/<pid>/smaps: node's own code (file-backed, shared with
 * every node process), malloc's main heap (SQLite, native code), anonymous maps in 256 KiB multiples under
 * 32 MB (about V8's heap pages), and the other anonymous maps (threads' stacks and arenas).
 */
function residentParts(pid) {
  const parts = { "node's code": 0, "malloc heap": 0, "V8 pages": 0, "other anonymous": 0, "other files": 0 };
  let part = null;
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const map = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (map !== null) {
      const kib = (parseInt(map[2], 16) - parseInt(map[1], 16)) / 1024;
      const name = map[3];
      part =
        name === process.execPath || name.endsWith("/node")
          ? "node's code"
          : name === "[heap]"
            ? "malloc heap"
            : name === "" && kib % 256 === 0 && kib < 32_768
              ? "V8 pages"
              : name === "" || name.startsWith("[")
                ? "other anonymous"
                : "other files";
      continue;
    }
    const rss = /^Rss:\s+(\d+)/.exec(line);
    if (rss !== null && part !== null) parts[part] += Number(rss[1]) * 1024;
  }
  return Object.entries(parts)
    .map(([name, bytes]) => `${name} ${mb(bytes)}`)
    .join(", ");
}

const mb = (n) => `${(n / 1048576).toFixed(1)} MB`;
const settle = () => new Promise((r) => setTimeout(r, SETTLE_MS));

export async function daemonRssBench(report, options = []) {
  const flag = (name, fallback) => {
    const i = options.indexOf(`--${name}`);
    return i >= 0 ? Number(options[i + 1]) : fallback;
  };
  const sessions = flag("sessions", 10_000);
  const projectCount = flag("projects", 64);
  const base = realpathSync(mkdtempSync(join(tmpdir(), "reins-bench-rss-")));
  const env = {
    PATH: process.env.PATH,
    HOME: join(base, "home"),
    REINS_RUNTIME_DIR: join(base, "run"),
    REINS_STATE_DIR: join(base, "state"),
    // The daemon's bounds, when the run sets them (see docs/performance.md).
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("REINS_DAEMON_"))),
  };
  const name = "d-rss";
  const socket = socketPath(env, name);
  const projects = [];
  for (let p = 0; p < projectCount; p++) {
    const dir = join(base, `project-${p}`);
    mkdirSync(dir);
    execFileSync("git", ["init", "-q", dir]);
    writeFileSync(join(dir, "reins.config.json"), "{}");
    projects.push({ dir, secret: hookSecret(dir) });
  }
  const daemon = await startDaemon(env, name, socket);
  await settle();
  const idle = rssOf(daemon.pid).rss;
  const marks = new Map();
  const baseline = Math.min(1_000, sessions);
  let next = 0;
  const runSession = async (s) => {
    const { dir, secret } = projects[s % projects.length];
    for (const body of sessionCalls(`bench-${s}`, dir)) await signedCall(socket, "claude", dir, secret, body);
  };
  const runUntil = async (end) => {
    await Promise.all(
      Array.from({ length: AT_ONCE }, async () => {
        while (next < end) await runSession(next++);
      }),
    );
  };
  const t0 = process.hrtime.bigint();
  await runUntil(baseline);
  await settle();
  marks.set(baseline, rssOf(daemon.pid).rss);
  await runUntil(sessions);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const atEnd = rssOf(daemon.pid).rss;
  await settle();
  const after = rssOf(daemon.pid);
  const where = residentParts(daemon.pid);
  const status = (await socketRequest(socket, "GET", "/status", 5_000))?.body ?? {};
  await socketRequest(socket, "POST", "/stop", 5_000);
  await new Promise((resolve) => daemon.on("close", resolve));
  rmSync(base, { recursive: true, force: true });

  const perSession = (after.rss - marks.get(baseline)) / Math.max(1, sessions - baseline);
  report(
    `memory: the hook daemon after ${sessions.toLocaleString("en")} Claude Code sessions across ${projectCount} projects (5 hook calls each, ${((sessions * 5) / seconds).toFixed(0)} calls/s)`,
    `${mb(after.rss)} RSS after a ${SETTLE_MS / 1000} s settle (${mb(atEnd)} as the last call was answered; peak ${mb(after.peak)})`,
    {
      baseline: `${mb(idle)} idle, before any project; ${mb(marks.get(baseline))} at ${baseline.toLocaleString("en")} sessions`,
      ratio: `${(perSession / 1024).toFixed(2)} KiB per session from ${baseline.toLocaleString("en")} to ${sessions.toLocaleString("en")}; ${(status.projects ?? []).length} projects open at the end`,
      where: where,
      aim: "<= 150 MB at 10,000 sessions across 64 projects, and flat beyond",
    },
  );
}
