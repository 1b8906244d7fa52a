/**
 * A retiring daemon's handoff to its successor (issue 39): Claude Code's tool-call hooks post to the
 * daemon's loopback port, and a call that finds nobody there goes ahead unjudged. So a daemon that retires
 * for an install change starts the new code with an IPC channel and passes it the port's listening socket
 * and the state the answers need (each session's variables, the open turns, the nonces seen). The successor
 * listens on that socket (the port never closes: new connections wait in the kernel's backlog), publishes
 * its Unix socket and says so; the old daemon then stops answering, sends its state as it ended, and exits.
 * Anything amiss, and the old daemon retires as before (docs/performance.md, "Known gaps").
 */
import type { ChildProcess } from "node:child_process";
import type { Server } from "node:net";
import type { HandedNonces } from "./nonces.js";

/** The state a daemon hands over besides its socket, as plain entries (JSON over the IPC channel). */
export interface HandedState {
  sessions: [string, Record<string, string>][];
  turns: [string, number][];
  /** The nonces of the command hooks' calls it saw, so that none is answered twice. */
  nonces: HandedNonces;
}

/** The variable that makes a daemon a successor: the pid of the daemon that started it to hand over. */
export const HANDOFF_VARIABLE = "REINS_DAEMON_HANDOFF";

/** How long each side waits for the other's next step, ms. */
export const HANDOFF_WAIT_MS = 5_000;

type Message =
  | { kind: "reins-handoff"; state: HandedState }
  | { kind: "reins-listening"; pid: number }
  | { kind: "reins-settle"; state: HandedState };

/** A handoff under way, on the old daemon's side, once its successor listens. */
export interface Handover {
  pid: number;
  /** Sends the state as it ended (the old daemon answers no more calls) and lets the successor go. */
  settle(state: HandedState): Promise<void>;
}

/**
 * Hands `server` (the http hooks' listening socket) and `state` to `child`, a successor started with an IPC
 * channel, and waits up to `waitMs` for it to say it listens. The handover, or why it failed: then the child
 * is killed, so that no second daemon is left beside the one the next hook starts.
 */
export function handOver(
  child: ChildProcess,
  server: Server,
  state: HandedState,
  waitMs = HANDOFF_WAIT_MS,
): Promise<Handover | { failed: string }> {
  return new Promise((resolve) => {
    const done = (outcome: Handover | { failed: string }) => {
      clearTimeout(timer);
      child.off("message", onMessage).off("exit", onExit).off("error", onError);
      if ("failed" in outcome) {
        child.kill("SIGKILL");
        child.unref();
      }
      resolve(outcome);
    };
    const onMessage = (message: Message) => {
      if (message.kind === "reins-listening") done(settling(child, message.pid));
    };
    const onExit = (code: number | null, signal: string | null) =>
      done({ failed: `the new daemon exited (${signal ?? `code ${code}`}) before it listened` });
    const onError = (error: Error) => done({ failed: `the new daemon did not start: ${error.message}` });
    const timer = setTimeout(
      () => done({ failed: `the new daemon did not listen within ${waitMs} ms` }),
      waitMs,
    );
    child.on("message", onMessage).on("exit", onExit).on("error", onError);
    try {
      child.send({ kind: "reins-handoff", state } satisfies Message, server, (error) => {
        if (error !== null) done({ failed: `the port could not be handed over: ${error.message}` });
      });
    } catch (error) {
      done({ failed: `the port could not be handed over: ${(error as Error).message}` });
    }
  });
}

function settling(child: ChildProcess, pid: number): Handover {
  return {
    pid,
    settle: (state) =>
      new Promise((resolve) => {
        const timer = setTimeout(finish, HANDOFF_WAIT_MS);
        function finish() {
          clearTimeout(timer);
          child.unref();
          resolve();
        }
        // The successor disconnects once it has the state; a channel already gone settles nothing more.
        child.once("disconnect", finish);
        if (!child.connected) return finish();
        try {
          child.send({ kind: "reins-settle", state } satisfies Message, (error) => {
            if (error !== null) finish();
          });
        } catch {
          finish();
        }
      }),
  };
}

/** What a successor receives from the daemon handing over. */
export interface Inheritance {
  /** The http hooks' listening socket. */
  server: Server;
  state: HandedState;
  /**
   * Tells the old daemon this one listens, and waits for its state as it ended (null when none came within
   * HANDOFF_WAIT_MS); the IPC channel is closed then, and the daemon goes on alone.
   */
  listening(): Promise<HandedState | null>;
}

/**
 * Waits up to `waitMs` for the socket and the state of the daemon that started this one to hand over. Null
 * when none came (it gave up, or died): this one must then stop, and the next hook starts a daemon.
 */
export function receiveHandover(proc: NodeJS.Process, waitMs = HANDOFF_WAIT_MS): Promise<Inheritance | null> {
  return new Promise((resolve) => {
    const done = (inheritance: Inheritance | null) => {
      clearTimeout(timer);
      proc.off("message", onMessage).off("disconnect", onGone);
      if (inheritance === null && proc.connected) proc.disconnect();
      resolve(inheritance);
    };
    const onMessage = (message: Message, server: unknown) => {
      if (message.kind === "reins-handoff" && server !== undefined)
        done({ server: server as Server, state: message.state, listening: () => listening(proc) });
    };
    const onGone = () => done(null);
    const timer = setTimeout(onGone, waitMs);
    if (proc.send === undefined) return onGone();
    proc.on("message", onMessage).on("disconnect", onGone);
  });
}

function listening(proc: NodeJS.Process): Promise<HandedState | null> {
  return new Promise((resolve) => {
    const done = (state: HandedState | null) => {
      clearTimeout(timer);
      proc.off("message", onMessage).off("disconnect", onGone);
      if (proc.connected) proc.disconnect();
      resolve(state);
    };
    const onMessage = (message: Message) => {
      if (message.kind === "reins-settle") done(message.state);
    };
    const onGone = () => done(null);
    const timer = setTimeout(onGone, HANDOFF_WAIT_MS);
    proc.on("message", onMessage).on("disconnect", onGone);
    proc.send?.({ kind: "reins-listening", pid: proc.pid } satisfies Message);
  });
}

/**
 * Settles a map taken over from a predecessor with its last entries: each key not written here since the
 * takeover (`fresh`) takes the predecessor's last value, or goes when it had none.
 */
export function settleEntries<V>(
  map: Map<string, V>,
  fresh: ReadonlySet<string>,
  last: readonly (readonly [string, V])[],
): void {
  const ended = new Map(last);
  for (const key of [...map.keys()]) if (!fresh.has(key) && !ended.has(key)) map.delete(key);
  for (const [key, value] of ended) if (!fresh.has(key)) map.set(key, value);
}
