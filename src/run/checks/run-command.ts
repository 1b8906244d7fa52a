/** Runs one shell command for the loop (a check, a setup step) in its own process group. */
import { performance } from "node:perf_hooks";
import { TailBuffer } from "../../base/process/capture.js";
import { runProcessGroup } from "../../base/process/process-group.js";

/**
 * Runs one shell command for the loop (a check, a setup step): `sh -c` in its own process group, stdout
 * and stderr interleaved into one bounded output, killed as a group on timeout or abort.
 */

/** Output kept of a command: the last 64 KB. */
export const MAX_COMMAND_OUTPUT = 64 * 1024;

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

/**
 * Runs `command` with `sh -c` in `cwd` and resolves when it ends, never rejecting: a command that cannot
 * start resolves with exitCode null and the reason as output. The command leads its own process group, so
 * a timeout or an abort kills everything it started (SIGTERM, then SIGKILL after a grace period); processes
 * it left running in the background when it exited get SIGTERM too, so a check cannot leak a server.
 */
export async function runCommand(command: string, options: RunCommandOptions): Promise<CommandResult> {
  const clock = options.clock ?? (() => performance.now());
  const started = clock();
  const output = new TailBuffer(options.maxOutput ?? MAX_COMMAND_OUTPUT);
  if (options.signal?.aborted === true) {
    return { exitCode: null, output: "", durationMs: 0, timedOut: false, aborted: true };
  }

  const ran = await runProcessGroup({
    // `exec 2>&1` points stderr at stdout's pipe, so the two interleave exactly as written.
    command: "sh",
    args: ["-c", `exec 2>&1\n${command}`],
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    onStdout: (chunk) => output.push(chunk),
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    drainMs: DRAIN_MS,
    killAtEnd: "when-stopped",
  });
  if (ran.startError !== undefined) {
    output.push(Buffer.from(`cannot run the command: ${ran.startError.message}\n`));
  }
  return {
    exitCode: ran.exitCode,
    output: output.text(),
    durationMs: Math.max(0, clock() - started),
    timedOut: ran.timedOut,
    aborted: ran.aborted,
  };
}
