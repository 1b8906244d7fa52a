/** Starting the user's hook daemon in the background, once, from whichever hook or command finds it gone. */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { takeStartLock } from "../../base/config/start-lock.js";
import { appendTamper } from "../hooks/tamper-record.js";
import { hookSecret } from "../../base/config/hook-secret.js";
import { runtimeDir } from "../../base/config/user-dirs.js";
import { HANDOFF_VARIABLE } from "./handoff.js";
import { logPath, privateRuntimeDir, socketPath } from "./paths.js";
import { probeDaemon, type DaemonStatus } from "./probe.js";

/**
 * The environment a daemon is started with: what locating the user's files needs, never the starting
 * session's own variables (its API keys, its project): the daemon serves every project, and each hook call
 * brings the `REINS_*` variables of its own session.
 */
const KEPT = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "LANG",
  "LC_ALL",
  "TMPDIR",
  "TZ",
  "XDG_RUNTIME_DIR",
  "XDG_CACHE_HOME",
  // The state folder: what `reins init` installed and the store's marks, checked at every turn's start.
  "XDG_STATE_HOME",
  "REINS_STATE_DIR",
  "REINS_RUNTIME_DIR",
  "REINS_DAEMON_IDLE",
  "REINS_DAEMON_PROJECT_IDLE",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
];

/** The part of `env` a daemon is started with (see KEPT). */
export function daemonEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of KEPT) {
    const value = env[name];
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}

/**
 * The node arguments a daemon is started with. A young generation of 1 MB semi-spaces instead of V8's 16 MB:
 * a hook's garbage is small and short-lived, and the larger one alone held about 30 MB of the daemon's RSS
 * (docs/performance.md, "The daemon's memory").
 */
export function daemonArgs(bin: string, name: string): string[] {
  return ["--max-semi-space-size=1", bin, "daemon", "run", "--name", name];
}

/**
 * Starts the daemon `name` of the reins at `bin` in the background (`node <bin> daemon run --name <name>`,
 * logging to its log in the runtime folder), unless another start began less than ten seconds ago: many
 * hooks finding the daemon gone at once start one. Never throws; false when it did not start one.
 */
export function spawnDaemon(options: { bin: string; name: string; env: NodeJS.ProcessEnv }): boolean {
  try {
    privateRuntimeDir(options.env);
    if (!takeStartLock(`${socketPath(options.env, options.name)}.starting`)) return false;
    const log = openSync(logPath(options.env, options.name), "a", 0o600);
    const child = spawn(process.execPath, daemonArgs(options.bin, options.name), {
      cwd: "/",
      detached: true,
      stdio: ["ignore", log, log],
      env: daemonEnv(options.env),
    });
    child.unref();
    closeSync(log);
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts the successor of this process's daemon `name` as `spawnDaemon` starts a daemon (the reins at `bin`,
 * so the new code once it was updated; detached, logging to the daemon's log), with an IPC channel over
 * which the retiring daemon hands it the http hooks' port (handoff.ts). Throws when it cannot.
 */
export function spawnSuccessor(options: { bin: string; name: string; env: NodeJS.ProcessEnv }): ChildProcess {
  const log = openSync(logPath(options.env, options.name), "a", 0o600);
  try {
    return spawn(process.execPath, daemonArgs(options.bin, options.name), {
      cwd: "/",
      detached: true,
      stdio: ["ignore", log, log, "ipc"],
      env: { ...daemonEnv(options.env), [HANDOFF_VARIABLE]: String(process.pid) },
    });
  } finally {
    closeSync(log);
  }
}

/**
 * What a hook answered in-process does when its client found no daemon: gives the project at `root` its
 * hook secret if it had none (the daemon asks each call to prove it), then starts the daemon `name`. Never
 * throws: a secret that cannot be made keeps the project on the in-process path, guarded all the same.
 */
export function startDaemonFor(
  root: string,
  options: { bin: string; name: string; env: NodeJS.ProcessEnv },
): void {
  try {
    hookSecret(root);
  } catch {
    return;
  }
  spawnDaemon(options);
}

/**
 * Waits up to `waitMs` for the daemon `name` to answer its socket and its http hooks' port: a Claude Code
 * session's start waits so, since its tool calls post to that port and a call nobody takes goes unguarded.
 * Whether it answered in time.
 */
export async function awaitDaemon(name: string, env: NodeJS.ProcessEnv, waitMs: number): Promise<boolean> {
  const socket = socketPath(env, name);
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    const status = await probeDaemon(socket, 500);
    if (status?.httpPort !== undefined) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return false;
}

/**
 * Makes sure the daemon `name` answers: the status of the one that does, else starts one and waits up to
 * `waitMs` for it. Null when none answered in time (see its log).
 */
export async function ensureDaemon(options: {
  bin: string;
  name: string;
  env: NodeJS.ProcessEnv;
  waitMs?: number;
}): Promise<{ state: "running" | "started"; status: DaemonStatus } | null> {
  const socket = socketPath(options.env, options.name);
  const found = await probeDaemon(socket);
  if (found !== null) return { state: "running", status: found };
  spawnDaemon(options);
  const deadline = Date.now() + (options.waitMs ?? 10_000);
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const status = await probeDaemon(socket, 500);
    if (status !== null) return { state: "started", status };
  }
  return null;
}

/**
 * What a hook answered in-process does when its client met an answer on the daemon `name`'s socket without
 * the daemon key's proof: the tamper record gets a line (turn starts and `reins doctor` tell of it). Never
 * throws.
 */
export function recordUnproven(name: string, env: NodeJS.ProcessEnv, by = "hook client"): void {
  appendTamper(runtimeDir(env), {
    at: Date.now(),
    kind: "unproven-answer",
    socket: socketPath(env, name),
    by,
    detail: "a program answered a hook call on the daemon's socket without the daemon key's proof",
  });
}
