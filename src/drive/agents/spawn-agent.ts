import { spawn } from "node:child_process";
import {
  HeadTailBuffer,
  STDERR_TAIL_BYTES,
  STDOUT_HEAD_BYTES,
  STDOUT_TAIL_BYTES,
  TailBuffer,
} from "./capture.js";

/** Spawning an agent program for one iteration: bounded, killable, and leaving nothing behind. */

/** The exit code a run gets when its program cannot start (as a shell's "command not found"). */
export const CANNOT_START = 127;

/** How long the group gets between SIGTERM and SIGKILL on a timeout or an abort. */
const KILL_GRACE_MS = 2_000;
/** How long the pipes may stay open after the program exited (an escaped grandchild may hold them). */
const DRAIN_MS = 1_000;

export interface SpawnAgentOptions {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** Written to stdin, which is then closed. */
  stdin: string;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

export interface SpawnedAgent {
  /** Bounded: the first 6 MB and the last 2 MB. */
  stdout: string;
  /** The last 64 KB, then reins' notes on a timeout, an abort or a failure to start. */
  stderr: string;
  /** null when killed by a signal; `CANNOT_START` when it could not start. */
  exitCode: number | null;
  timedOut: boolean;
  aborted: boolean;
}

/**
 * Runs a program without a shell in its own process group, the prompt on stdin, and resolves when it ends;
 * it never rejects. A timeout or an abort stops the whole group (SIGTERM, then SIGKILL after 2 s), and when
 * the program exits, whatever it left running in its group is killed: nothing an agent started outlives
 * its iteration.
 */
export function spawnAgent(options: SpawnAgentOptions): Promise<SpawnedAgent> {
  const stdout = new HeadTailBuffer(STDOUT_HEAD_BYTES, STDOUT_TAIL_BYTES);
  const stderr = new TailBuffer(STDERR_TAIL_BYTES);
  const notes: string[] = [];
  if (options.signal?.aborted === true) {
    return Promise.resolve({
      stdout: "",
      stderr: "[reins] aborted before start\n",
      exitCode: null,
      timedOut: false,
      aborted: true,
    });
  }

  return new Promise((resolve) => {
    const child = spawn(options.command, options.args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let timedOut = false;
    let aborted = false;
    let exitCode: number | null = null;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;

    const stop = () => {
      killGroup(child.pid, "SIGTERM");
      killTimer ??= setTimeout(() => killGroup(child.pid, "SIGKILL"), KILL_GRACE_MS);
    };
    const onAbort = () => {
      aborted = true;
      notes.push("[reins] aborted: process group killed");
      stop();
    };
    const timeout = setTimeout(() => {
      timedOut = true;
      notes.push(`[reins] timed out after ${options.timeoutMs} ms: process group killed`);
      stop();
    }, options.timeoutMs);
    options.signal?.addEventListener("abort", onAbort, { once: true });

    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timeout);
      clearTimeout(drainTimer);
      clearTimeout(killTimer);
      options.signal?.removeEventListener("abort", onAbort);
      killGroup(child.pid, "SIGKILL");
      child.stdout.destroy();
      child.stderr.destroy();
      const tail = stderr.text();
      const note =
        notes.length === 0 ? "" : `${tail === "" || tail.endsWith("\n") ? "" : "\n"}${notes.join("\n")}\n`;
      resolve({ stdout: stdout.text(), stderr: tail + note, exitCode, timedOut, aborted });
    };

    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    // A program that exits without reading its stdin makes the write fail with EPIPE: not our concern.
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.stdin);
    child.on("error", (error) => {
      exitCode = CANNOT_START;
      notes.push(`[reins] cannot start ${options.command}: ${error.message}`);
      finish();
    });
    child.on("exit", (code) => {
      exitCode = code;
      // Leftovers of the group (a server the agent started) would hold the pipes open and keep running.
      killGroup(child.pid, "SIGTERM");
      drainTimer = setTimeout(finish, DRAIN_MS);
    });
    child.on("close", finish);
  });
}

/** Sends a signal to a whole process group; a group already gone is fine. */
function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: every process of the group has exited.
  }
}
