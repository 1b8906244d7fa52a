/** A program run in its own process group: bounded in time, killable as a group, nothing left behind. */
import { spawn } from "node:child_process";

/**
 * A program run in its own process group, for the loop's checks and agents: bounded in time, killable, and
 * leaving nothing behind. A timeout or an abort stops the whole group (SIGTERM, then SIGKILL after a grace
 * period); when the program exits, whatever it left running in its group gets SIGTERM.
 */

/** How long the group gets between SIGTERM and SIGKILL on a timeout or an abort. */
const KILL_GRACE_MS = 2_000;

/** Why reins stopped a group: its time was up, it printed nothing for too long, or it was aborted. */
export type StopReason = "timeout" | "idle" | "abort";

export interface ProcessGroupOptions {
  command: string;
  args: readonly string[];
  cwd: string;
  /** The whole environment of the program. */
  env: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed. @default stdin is /dev/null */
  stdin?: string;
  /** Each chunk of stdout. */
  onStdout: (chunk: Buffer) => void;
  /** Each chunk of stderr. @default stderr is /dev/null */
  onStderr?: (chunk: Buffer) => void;
  /** Called when reins stops the group, once per reason, as it happens. @default none */
  onStop?: (reason: StopReason) => void;
  /** After this, the whole group is stopped and `timedOut` is set; past setTimeout's range it never fires. */
  timeoutMs: number;
  /**
   * After this long with nothing on stdout or stderr, the whole group is stopped as hung and `timedOut` is
   * set. @default no limit
   */
  idleMs?: number;
  /** Aborting stops the whole group and sets `aborted`. */
  signal?: AbortSignal | undefined;
  /** How long the pipes may stay open after the program exited (a background child may hold them). */
  drainMs: number;
  /**
   * Whom to SIGKILL when it ends: the whole group `always`, or only `when-stopped` by a timeout or an abort
   * (a background job left by a program that exited on its own then has only had SIGTERM).
   */
  killAtEnd: "always" | "when-stopped";
}

export interface ProcessGroupExit {
  /** The exit code; null when killed by a signal or when it could not start. */
  exitCode: number | null;
  timedOut: boolean;
  aborted: boolean;
  /** Why the program could not start, when it could not. */
  startError?: Error;
}

/**
 * Spawns `command` (no shell) in its own process group and resolves when it and its pipes are done; it
 * never rejects. The caller checks `signal` before: this always starts the program.
 */
export function runProcessGroup(options: ProcessGroupOptions): Promise<ProcessGroupExit> {
  return new Promise((resolve) => {
    const child = spawn(options.command, options.args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: [
        options.stdin === undefined ? "ignore" : "pipe",
        "pipe",
        options.onStderr === undefined ? "ignore" : "pipe",
      ],
    });
    let timedOut = false;
    let aborted = false;
    let exitCode: number | null = null;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;

    const stop = (reason: StopReason) => {
      options.onStop?.(reason);
      killGroup(child.pid, "SIGTERM");
      killTimer ??= setTimeout(() => killGroup(child.pid, "SIGKILL"), KILL_GRACE_MS);
    };
    const onAbort = () => {
      aborted = true;
      stop("abort");
    };
    // setTimeout fires at once past 2^31-1 ms; such a timeout means "no timeout" in practice.
    const timeout = setTimeout(
      () => {
        timedOut = true;
        stop("timeout");
      },
      Math.min(Math.max(options.timeoutMs, 0), 2 ** 31 - 1),
    );
    options.signal?.addEventListener("abort", onAbort, { once: true });
    // Hung: a program that prints nothing for idleMs is stopped long before its whole time is up.
    let idle: NodeJS.Timeout | undefined;
    const quiet = () => {
      if (options.idleMs === undefined || settled) return;
      clearTimeout(idle);
      idle = setTimeout(
        () => {
          timedOut = true;
          stop("idle");
        },
        Math.min(Math.max(options.idleMs, 0), 2 ** 31 - 1),
      );
    };
    quiet();

    const finish = (startError?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timeout);
      clearTimeout(idle);
      clearTimeout(drainTimer);
      clearTimeout(killTimer);
      options.signal?.removeEventListener("abort", onAbort);
      // A member that outlived SIGTERM (the program exited at once, a grandchild ignores it) is abandoned now.
      if (options.killAtEnd === "always" || timedOut || aborted) killGroup(child.pid, "SIGKILL");
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve({ exitCode, timedOut, aborted, ...(startError === undefined ? {} : { startError }) });
    };

    child.stdout?.on("data", (chunk: Buffer) => {
      quiet();
      options.onStdout(chunk);
    });
    if (options.onStderr !== undefined) {
      const onStderr = options.onStderr;
      child.stderr?.on("data", (chunk: Buffer) => {
        quiet();
        onStderr(chunk);
      });
    }
    if (options.stdin !== undefined) {
      // A program that exits without reading its stdin makes the write fail with EPIPE: not our concern.
      child.stdin?.on("error", () => undefined);
      child.stdin?.end(options.stdin);
    }
    child.on("error", (error) => finish(error));
    child.on("exit", (code) => {
      exitCode = code;
      clearTimeout(idle);
      // Leftovers of the group (a server it started, a background job) would hold the pipes open and keep running.
      killGroup(child.pid, "SIGTERM");
      drainTimer = setTimeout(() => finish(), options.drainMs);
    });
    child.on("close", () => finish());
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
