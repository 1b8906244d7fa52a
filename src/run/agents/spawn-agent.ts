/** Runs one agent program for one iteration, its output kept within bounds. */
import { HeadTailBuffer, TailBuffer } from "../../base/process/capture.js";
import { runProcessGroup } from "../../base/process/process-group.js";

/** Spawning an agent program for one iteration: bounded, killable, and leaving nothing behind. */

/** The exit code a run gets when its program cannot start (as a shell's "command not found"). */
export const CANNOT_START = 127;

/** stdout kept per agent run: the first 6 MB and the last 2 MB, where the final result line is. */
export const STDOUT_HEAD_BYTES = 6 * 1024 * 1024;
export const STDOUT_TAIL_BYTES = 2 * 1024 * 1024;
/** stderr kept per agent run: the last 64 KB, where the error that ended the run is. */
export const STDERR_TAIL_BYTES = 64 * 1024;

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
  /** Stopped as hung after this long with no output. @default no limit */
  idleMs?: number | undefined;
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
export async function spawnAgent(options: SpawnAgentOptions): Promise<SpawnedAgent> {
  const stdout = new HeadTailBuffer(STDOUT_HEAD_BYTES, STDOUT_TAIL_BYTES);
  const stderr = new TailBuffer(STDERR_TAIL_BYTES);
  if (options.signal?.aborted === true) {
    return {
      stdout: "",
      stderr: "[reins] aborted before start\n",
      exitCode: null,
      timedOut: false,
      aborted: true,
    };
  }

  const notes: string[] = [];
  const { idleMs, ...rest } = options;
  const ran = await runProcessGroup({
    ...rest,
    ...(idleMs !== undefined ? { idleMs } : {}),
    onStdout: (chunk) => stdout.push(chunk),
    onStderr: (chunk) => stderr.push(chunk),
    onStop: (reason) =>
      notes.push(
        reason === "abort"
          ? "[reins] aborted: process group killed"
          : reason === "idle"
            ? `[reins] timed out: no output for ${idleMs} ms (hung): process group killed`
            : `[reins] timed out after ${options.timeoutMs} ms: process group killed`,
      ),
    drainMs: DRAIN_MS,
    killAtEnd: "always",
  });
  if (ran.startError !== undefined) {
    notes.push(`[reins] cannot start ${options.command}: ${ran.startError.message}`);
  }
  const tail = stderr.text();
  const note =
    notes.length === 0 ? "" : `${tail === "" || tail.endsWith("\n") ? "" : "\n"}${notes.join("\n")}\n`;
  return {
    stdout: stdout.text(),
    stderr: tail + note,
    exitCode: ran.startError === undefined ? ran.exitCode : CANNOT_START,
    timedOut: ran.timedOut,
    aborted: ran.aborted,
  };
}
