/** Child processes for tests: reins' bin, fixtures, and waiting for them to finish. */
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { listDaemons } from "../../src/guard/daemon/list.js";
import { socketRequest } from "../../src/guard/daemon/probe.js";

const root = join(import.meta.dirname, "..", "..");

/** reins' own bin, as agents' hooks run it. */
export const reinsBin = join(root, "bin", "reins.js");

/** Starts `test/fixtures/<script>` in a new Node process. */
export function startFixture(script: string, args: string[], cwd: string): ChildProcess {
  return spawn(process.execPath, [join(root, "test", "fixtures", script), ...args], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Waits for a process to exit; resolves with its code and everything it printed. */
export function finished(
  child: ChildProcess,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/**
 * A clean environment for an agent CLI: PATH, the given HOME, and LANG, TMPDIR and SHELL when set; nothing
 * else of the calling session (API keys, the agent's own variables) leaks in. npm's update check is off, so
 * an `npm test` the agent runs makes no registry call. `extra` is applied last.
 */
export function cleanEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    npm_config_update_notifier: "false",
  };
  for (const name of ["LANG", "TMPDIR", "SHELL"] as const) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return Object.assign(env, extra);
}

/** How a bounded run ended. */
export interface BoundedRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The time limit was reached and the process group was killed. */
  timedOut: boolean;
  durationMs: number;
}

/**
 * Runs a command with stdin closed and waits for it to exit. It runs in its own process group, which is
 * SIGKILLed after `timeoutMs`, so the tools and hooks it started go with it.
 */
export function runBounded(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<BoundedRun> {
  const started = Date.now();
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid);
  }, options.timeoutMs);
  return new Promise((resolve, reject) => {
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut, durationMs: Date.now() - started });
    });
  });
}

/** The command and arguments that run `binary`: with this Node when it is a `.js` file, else as it is. */
export function commandFor(binary: string, args: readonly string[]): [string, string[]] {
  return binary.endsWith(".js") ? [process.execPath, [binary, ...args]] : [binary, [...args]];
}

/**
 * Makes an agent CLI's `...UnavailableReason()`: why the CLI cannot run here (what `probe`, run once,
 * says), or null when it can. A reason throws on CI (`CI=true`): there the tests must run, not be skipped
 * quietly.
 */
export function unavailableReason(agent: string, probe: () => string | null): () => string | null {
  let reason: string | null | undefined;
  return () => {
    if (reason === undefined) reason = probe();
    if (reason !== null && process.env.CI === "true") {
      throw new Error(`${agent} tests cannot run on CI: ${reason}`);
    }
    return reason;
  };
}

/** The events of a CLI's JSONL output: the lines that are JSON objects with a string `type`, in order. */
export function jsonEvents<Event extends { type: string }>(stdout: string): Event[] {
  return stdout.split("\n").flatMap((line) => {
    if (!line.trimStart().startsWith("{")) return [];
    try {
      const value = JSON.parse(line) as { type?: unknown } | null;
      return typeof value?.type === "string" ? [value as Event] : [];
    } catch {
      return [];
    }
  });
}

/** Whether a process runs; a zombie nobody has reaped yet counts as gone (Linux: /proc). */
export function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

/** Waits up to `ms` for a process to be gone (see `alive`); whether it went. */
export async function exits(pid: number, ms = 3_000): Promise<boolean> {
  for (const end = Date.now() + ms; alive(pid) && Date.now() < end;)
    await new Promise((r) => setTimeout(r, 20));
  return !alive(pid);
}

/** SIGKILLs a process group; nothing when it is gone. */
export function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/** Runs `node bin/reins.js <args>` in `cwd` (bounded at 30 s) and returns what it printed. */
export function runReins(
  args: readonly string[],
  options: { cwd: string; env: Record<string, string> },
): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [reinsBin, ...args], {
    cwd: options.cwd,
    env: options.env,
    encoding: "utf8",
    timeout: 30_000,
  });
}

/**
 * Stops the server a hook started for `project` (the pid in `.reins/serve.pid`), if any, and waits up to
 * 5 s for it to exit, so the test's folder can be removed under no writer. For an e2e test's `afterEach`.
 */
export async function stopServer(project: string): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(join(project, ".reins", "serve.pid"), "utf8").trim());
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0) return;
  const running = () => {
    try {
      process.kill(pid, 0);
    } catch {
      return false;
    }
    try {
      // A zombie is gone for our purposes (on Linux; elsewhere, wait until it is reaped).
      return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
    } catch {
      return true;
    }
  };
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return; // Already gone.
  }
  for (const deadline = Date.now() + 5_000; running() && Date.now() < deadline;)
    await new Promise((resolve) => setTimeout(resolve, 20));
}

/**
 * Stops every hook daemon of the runtime folder `env` names (REINS_RUNTIME_DIR, else XDG_RUNTIME_DIR, else
 * HOME) and waits up to 5 s for each to go, so a test leaves no reins process behind.
 */
export async function stopHookDaemons(env: NodeJS.ProcessEnv): Promise<void> {
  const entries = (await listDaemons(env)).filter((e) => e.running);
  await Promise.all(
    entries.map(async (entry) => {
      if (!entry.running) return;
      await socketRequest(entry.socket, "POST", "/stop", 2_000);
      await exits(entry.status.pid, 5_000);
    }),
  );
}
