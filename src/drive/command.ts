import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";

/**
 * Runs one shell command for the loop (a check, a setup step): `sh -c` in its own process group, stdout
 * and stderr interleaved into one bounded output, killed as a group on timeout or abort.
 */

/** Output kept of a command: the last 64 KB. */
export const MAX_COMMAND_OUTPUT = 64 * 1024;

/** How long a command may take to stop after SIGTERM before its group gets SIGKILL. */
const KILL_GRACE_MS = 2_000;

/** How long to wait for the pipes to drain after the shell exited (a background child may hold them open). */
const DRAIN_MS = 250;

export interface RunCommandOptions {
  cwd: string;
  /** Added to (and overriding) the inherited environment. @default {} */
  env?: Record<string, string>;
  /** After this, the whole process group is killed and `timedOut` is set. */
  timeoutMs: number;
  /** Aborting kills the whole process group and sets `aborted`. */
  signal?: AbortSignal;
  /** Milliseconds from any origin, for `durationMs`. @default performance.now */
  clock?: () => number;
  /** Bytes of output kept (the tail). @default MAX_COMMAND_OUTPUT */
  maxOutput?: number;
}

export interface CommandResult {
  /** The exit code, or null when the command was killed by a signal (timeout, abort) or could not start. */
  exitCode: number | null;
  /** stdout and stderr as interleaved by the pipe, the tail only: a head line `[… N bytes cut]` says how much went. */
  output: string;
  durationMs: number;
  timedOut: boolean;
  aborted: boolean;
}

/** Keeps the last `max` bytes written, counting what it dropped. */
class TailBuffer {
  #chunks: Buffer[] = [];
  #kept = 0;
  #dropped = 0;

  constructor(private readonly max: number) {}

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#kept += chunk.length;
    while (this.#chunks.length > 1 && this.#kept - (this.#chunks[0]?.length ?? 0) >= this.max) {
      const first = this.#chunks.shift();
      this.#kept -= first?.length ?? 0;
      this.#dropped += first?.length ?? 0;
    }
  }

  text(): string {
    let bytes = Buffer.concat(this.#chunks);
    let cut = this.#dropped;
    if (bytes.length > this.max) {
      cut += bytes.length - this.max;
      bytes = bytes.subarray(bytes.length - this.max);
    }
    if (cut === 0) return bytes.toString("utf8");
    // Start on a character boundary: skip UTF-8 continuation bytes left by the cut.
    let start = 0;
    while (start < bytes.length && start < 4 && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++;
    return `[… ${cut + start} bytes cut]\n${bytes.subarray(start).toString("utf8")}`;
  }
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

/**
 * Runs `command` with `sh -c` in `cwd` and resolves when it ends, never rejecting: a command that cannot
 * start resolves with exitCode null and the reason as output. The command leads its own process group, so
 * a timeout or an abort kills everything it started (SIGTERM, then SIGKILL after a grace period); processes
 * it left running in the background when it exited get SIGTERM too, so a check cannot leak a server.
 */
export function runCommand(command: string, options: RunCommandOptions): Promise<CommandResult> {
  const clock = options.clock ?? (() => performance.now());
  const started = clock();
  const output = new TailBuffer(options.maxOutput ?? MAX_COMMAND_OUTPUT);
  if (options.signal?.aborted === true) {
    return Promise.resolve({ exitCode: null, output: "", durationMs: 0, timedOut: false, aborted: true });
  }

  return new Promise((resolve) => {
    // `exec 2>&1` points stderr at stdout's pipe, so the two interleave exactly as written.
    const child = spawn("sh", ["-c", `exec 2>&1\n${command}`], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      detached: true,
      stdio: ["ignore", "pipe", "ignore"],
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
      stop();
    };
    // setTimeout fires at once past 2^31-1 ms; such a timeout means "no timeout" in practice.
    const timeout = setTimeout(
      () => {
        timedOut = true;
        stop();
      },
      Math.min(Math.max(options.timeoutMs, 0), 2 ** 31 - 1),
    );
    options.signal?.addEventListener("abort", onAbort, { once: true });

    const finish = (failure?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timeout);
      clearTimeout(drainTimer);
      clearTimeout(killTimer);
      options.signal?.removeEventListener("abort", onAbort);
      // A member that outlived SIGTERM (the shell exited at once, a grandchild ignores it) is abandoned now.
      if (timedOut || aborted) killGroup(child.pid, "SIGKILL");
      child.stdout.destroy();
      if (failure !== undefined) output.push(Buffer.from(failure));
      resolve({
        exitCode,
        output: output.text(),
        durationMs: Math.max(0, clock() - started),
        timedOut,
        aborted,
      });
    };

    child.stdout.on("data", (chunk: Buffer) => output.push(chunk));
    child.on("error", (error) => finish(`cannot run the command: ${error.message}\n`));
    child.on("exit", (code) => {
      exitCode = code;
      // Leftovers of the group (background jobs) would hold the pipe open and keep running.
      killGroup(child.pid, "SIGTERM");
      drainTimer = setTimeout(() => finish(), DRAIN_MS);
    });
    child.on("close", () => finish());
  });
}
