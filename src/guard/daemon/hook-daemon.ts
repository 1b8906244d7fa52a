/**
 * The user's hook daemon: one long-lived process per user and reins install that answers the hooks of
 * every project on the machine over a Unix socket in the user's private runtime folder. Each call names its
 * project (root) and is signed with that project's hook secret; the project's own store and policy answer
 * it, and the answer is signed with the user's daemon key, so a client trusts no other program on the
 * socket (docs/daemon-proof.md). It exits when no hook has called for its idle time, and the next hook
 * starts it again; one that retires because reins was updated starts the new code itself and hands it its
 * http hooks' port (handoff.ts); a program that takes its socket is named in its log and the tamper record,
 * and the socket is taken back.
 */
import type { ChildProcess } from "node:child_process";
import { readdirSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync } from "node:fs";
import type { Server } from "node:net";
import { basename, dirname, join } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import {
  answerHook,
  hookFailure,
  MAX_HOOK_INPUT,
  readHookInput,
  withWarning,
  type HookResult,
} from "../hooks/hook-call.js";
import { userHookAnswer, userTurnUpkeep } from "../hooks/user-hook.js";
import { appendTamper } from "../hooks/tamper-record.js";
import { checkpointInBackground } from "../../base/store/sqlite-checkpoint.js";
import { boundStoreMemory } from "../../base/store/state-cache.js";
import { handOver, type HandedState, type Handover, type Inheritance } from "./handoff.js";
import { followPort, listenHttpHooks, type HttpHooks } from "./http-hooks.js";
import { ensureDaemonKey, mac, readDaemonKey } from "./key.js";
import { Nonces } from "./nonces.js";
import { OpenTurns } from "./open-turns.js";
import { socketHolder } from "./peer.js";
import { SessionVariables } from "./session-variables.js";
import { ProjectPool, isUsableRoot, type ProjectPoolOptions } from "./projects.js";
import { DAEMON_STATES } from "./settings.js";
import { callParts, decodeHeaderValue, decodeProjectEnv, HEADERS, PROTOCOL } from "./protocol.js";
import { DAEMON_KIND, probeSocket, type DaemonStatus, type SocketAnswer } from "./probe.js";

/** Options of a hook daemon; `socket`, `bin` and `version` are required. */
export interface HookDaemonOptions {
  socket: string;
  bin: string;
  version: string;
  /**
   * The daemon exits once no hook has called for this long.
   * @default 1_800_000 (30 minutes)
   */
  idleMs?: number;
  /**
   * A stamp of the installed code (see `installStamp`): when it changes (reins was updated or rebuilt), the
   * daemon retires so that the new code answers: it hands over to its `successor`, else the next hook
   * starts it.
   * @default never changes
   */
  stamp?: () => string;
  /**
   * How often the daemon checks its idle time, its socket and its install.
   * @default 5_000, or a quarter of `idleMs` when that is shorter
   */
  checkMs?: number;
  /** One line per failure and per start and stop. @default nothing */
  log?: (line: string) => void;
  /**
   * At most this many scope states kept in memory across all the projects' stores (base/store/state-cache.ts);
   * one let go is rebuilt from its store (snapshot and log tail) at its next call.
   * @default 1_024 (DAEMON_STATES)
   */
  states?: number;
  /** KiB of SQLite page cache per project store. @default 64 */
  pageCacheKib?: number;
  /** How the daemon keeps the projects it answers for (their idle time, how many at most). */
  projects?: ProjectPoolOptions;
  /**
   * Whether the daemon also answers Claude Code's http hooks on its loopback port (http-hooks.ts).
   * @default true
   */
  http?: boolean;
  /**
   * Starts this daemon's successor (the new code) with an IPC channel when it retires for an install change
   * while its http hooks listen, to hand it their port (handoff.ts). May throw when it cannot start one.
   * @default none: the daemon retires, and the next hook starts one
   */
  successor?: () => ChildProcess;
  /** The port and the state a retiring daemon handed this one (handoff.ts). @default none */
  inherited?: Inheritance;
}

/** A daemon that listens, or the finding that another already does. */
export type DaemonStart =
  { kind: "listening"; daemon: HookDaemon } | { kind: "running"; status: DaemonStatus };

/** A listening daemon. */
export interface HookDaemon {
  /** Resolves with why the daemon stopped, once its socket is released and its stores closed. */
  closed: Promise<string>;
  /** Stops it: calls in flight are answered first. */
  close(reason: string): Promise<string>;
  status(): DaemonStatus;
}

/** A stamp of the files of an install (their sizes and change times): different once it is replaced. */
export function installStamp(files: readonly string[]): () => string {
  return () =>
    files
      .map((file) => {
        try {
          const { size, mtimeMs, ino } = statSync(file);
          return `${ino}:${size}:${mtimeMs}`;
        } catch {
          return "-";
        }
      })
      .join("|");
}

/**
 * Starts a hook daemon on `options.socket`. When another daemon already answers there (it proves the user's
 * daemon key), returns it instead. A socket left by a daemon that died is taken over; one held by any other
 * program is taken over too, and said in the log and the tamper record.
 */
export async function startHookDaemon(options: HookDaemonOptions): Promise<DaemonStart> {
  const log = options.log ?? (() => {});
  const idleMs = options.idleMs ?? 1_800_000;
  const runtime = dirname(options.socket);
  const key = ensureDaemonKey(runtime);
  // A long-lived process: its stores' checkpoints run in a worker, never inline on a hook's answer.
  checkpointInBackground();
  // Its memory bounded by a cap, not by how many sessions it has served (docs/performance.md).
  boundStoreMemory({ states: options.states ?? DAEMON_STATES, pageCacheKib: options.pageCacheKib ?? 64 });
  const pool = new ProjectPool({ runtime, ...options.projects });
  const nonces = new Nonces();
  const sessions = new SessionVariables();
  const turns = new OpenTurns();
  const inherited = options.inherited;
  if (inherited !== undefined) take(inherited.state, sessions, turns, nonces);
  let http: HttpHooks | null = null;
  const counts = callCounts(Date.now());
  const build = () =>
    buildApp(pool, {
      key,
      nonces,
      onCall: counts.onCall,
      onAnswered: counts.onAnswered,
      log,
      status: () => status(),
      stop: () => void close("asked to stop"),
      sessions,
      turns,
      httpPort: () => http?.port ?? null,
    });
  const status = (): DaemonStatus => ({
    kind: DAEMON_KIND,
    pid: process.pid,
    version: options.version,
    bin: options.bin,
    socket: options.socket,
    ...counts.now(),
    idleMs,
    rssBytes: process.memoryUsage.rss(),
    projects: pool.list(),
    ...(http !== null ? { httpPort: http.port } : {}),
  });

  // A successor takes the socket over from the daemon that handed it the port, which still answers there.
  const bound = await bind(build, options.socket, log, inherited !== undefined);
  if (bound.kind === "running") return bound;
  const { app, own, inode } = bound;
  if (options.http !== false || inherited !== undefined)
    http = await listenHttpHooks({
      pool,
      env: { REINS_RUNTIME_DIR: runtime },
      name: basename(options.socket, ".sock"),
      log,
      onCall: counts.onCall,
      onAnswered: counts.onAnswered,
      sessionEnv: (root, session) => sessions.of(root, session),
      turns,
      ...(inherited !== undefined ? { inherited: inherited.server } : {}),
    });
  const stampAtStart = options.stamp?.();
  log(`reins hook daemon ${process.pid} listening on ${options.socket} (reins ${options.version})`);
  void inherited?.listening().then((last) => last !== null && settle(last, sessions, turns, nonces));

  let resolveClosed: (reason: string) => void = () => {};
  const closed = new Promise<string>((resolve) => (resolveClosed = resolve));
  let stopping: Promise<void> | null = null;
  const stopAnswering = () =>
    (stopping ??= (async () => {
      await Promise.all([app.close(), http?.close()]);
      // Closing removed its own socket; the link goes only while it names that socket: one that took over keeps it.
      if (linkTarget(options.socket) === basename(own)) rmSync(options.socket, { force: true });
    })());
  let closing: Promise<string> | null = null;
  const close = (reason: string): Promise<string> => {
    closing ??= (async () => {
      clearInterval(timer);
      await stopAnswering();
      await pool.closeAll();
      log(`reins hook daemon ${process.pid} stopped: ${reason}`);
      resolveClosed(reason);
      return reason;
    })();
    return closing;
  };
  const updated = async () => {
    clearInterval(timer);
    const handed =
      http !== null && options.successor !== undefined
        ? await handOffTo(options.successor, http.server, handedState(sessions, turns, nonces), log)
        : null;
    if (handed === null) return close("reins was updated or rebuilt; the next hook starts the new version");
    await stopAnswering();
    await handed.settle(handedState(sessions, turns, nonces));
    return close(`reins was updated or rebuilt; daemon ${handed.pid} took over its socket and port`);
  };

  const checkMs = options.checkMs ?? Math.max(50, Math.min(5_000, Math.floor(idleMs / 4)));
  let checking = false;
  const check = async () => {
    const now = Date.now();
    nonces.sweep(now);
    if (socketInode(options.socket) !== inode) {
      const kept = await keepSocket(options.socket, own, key, log);
      if (kept !== null) void close(kept);
    } else if (stampAtStart !== undefined && options.stamp?.() !== stampAtStart) await updated();
    else if (counts.idle(now, idleMs) && !(http !== null && turns.holding(now)))
      // With Claude Code's http hooks, an open turn holds the daemon (guard/daemon/open-turns.ts).
      void close(`no hook called for ${Math.round(idleMs / 1000)} s`);
    else await pool.sweep(now);
  };
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    void check().finally(() => (checking = false));
  }, checkMs);
  timer.unref();

  return { kind: "listening", daemon: { closed, close, status } };
}

/** How many calls a daemon took, how many are in flight, and when the last came or was answered. */
function callCounts(startedAt: number) {
  let calls = 0;
  let inFlight = 0;
  let lastCallAt = startedAt;
  return {
    onCall: () => {
      calls += 1;
      inFlight += 1;
      lastCallAt = Date.now();
    },
    onAnswered: () => {
      inFlight -= 1;
      lastCallAt = Date.now();
    },
    now: () => ({ startedAt, lastCallAt, calls }),
    /** Whether no call is in flight and none came for `idleMs`. */
    idle: (now: number, idleMs: number) => inFlight === 0 && now - lastCallAt >= idleMs,
  };
}

/** The state a daemon hands its successor. */
function handedState(sessions: SessionVariables, turns: OpenTurns, nonces: Nonces): HandedState {
  return { sessions: sessions.entries(), turns: turns.entries(), nonces: nonces.entries() };
}

/** Takes the state a predecessor handed over, before this daemon answers a call. */
function take(state: HandedState, sessions: SessionVariables, turns: OpenTurns, nonces: Nonces): void {
  sessions.take(state.sessions);
  turns.take(state.turns);
  nonces.adopt(state.nonces);
}

/** Takes the state a predecessor handed over as it ended, once it stopped answering. */
function settle(last: HandedState, sessions: SessionVariables, turns: OpenTurns, nonces: Nonces): void {
  sessions.settle(last.sessions);
  turns.settle(last.turns);
  nonces.adopt(last.nonces);
}

/**
 * Starts a retiring daemon's successor and hands it the http hooks' port and `state` (handoff.ts); null,
 * said in one line of the log, when that failed: the daemon then retires as it would without one.
 */
async function handOffTo(
  successor: () => ChildProcess,
  server: Server,
  state: HandedState,
  log: (line: string) => void,
): Promise<Handover | null> {
  let handed: Handover | { failed: string };
  try {
    handed = await handOver(successor(), server, state);
  } catch (error) {
    handed = { failed: `the new daemon did not start: ${(error as Error).message}` };
  }
  if ("failed" in handed) {
    log(`could not hand the http hooks' port to a new daemon (${handed.failed}); the next hook starts one`);
    return null;
  }
  return handed;
}

/**
 * What a daemon does when its socket path no longer names its own socket: retires (the reason returned)
 * when the path is gone, when a daemon that proves the user's key answers there (a newer one took over), or
 * when the key itself changed; otherwise a program that is not reins' daemon holds the path (or nothing
 * answers there), and the daemon says so, records it and publishes its own socket there again (null).
 */
async function keepSocket(
  socket: string,
  own: string,
  key: string,
  log: (line: string) => void,
): Promise<string | null> {
  if (socketInode(socket) === null) return "its socket was removed; the next hook starts a daemon again";
  if (readDaemonKey(dirname(socket)) !== key)
    return "the daemon key changed; the next hook starts a daemon with it";
  const answer = await probeSocket(socket, 2_000);
  if (answer.kind === "proven")
    return `its socket was taken over by another daemon (pid ${answer.status.pid})`;
  if (socketInode(own) === null) return "its own socket was removed; the next hook starts a daemon again";
  if (answer.kind === "unproven") {
    recordTaken(
      socket,
      answer.detail,
      "socket taken over by a program that is not reins' daemon",
      "taking it back",
      log,
    );
  } else log("its socket path names a socket nobody answers on; taking it back");
  publish(socket, own);
  return null;
}

/** Publishes `own` at `socket` as a symbolic link, replaced atomically. */
function publish(socket: string, own: string): void {
  const link = `${own}.link`;
  rmSync(link, { force: true });
  symlinkSync(basename(own), link);
  renameSync(link, socket);
}

function socketInode(socket: string): number | null {
  try {
    return statSync(socket).ino;
  } catch {
    return null;
  }
}

/** Daemons this process started: each listens on a socket of its own, even two in one process (tests). */
let daemonsStarted = 0;

function linkTarget(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}

/**
 * Listens on a socket of its own (`<socket>.<pid>-<n>`) and publishes it at `socket` as a symbolic link, replaced
 * atomically; or finds the daemon that already answers there. Closing a Unix-socket server unlinks the path
 * it listened on, so a daemon never listens on the shared path itself: one that lost the path (another took
 * it over) then removes only its own file. A link left by a daemon that died, or a path held by a program
 * that is not a reins daemon, is replaced; with `takeOver` (a successor), so is the daemon answering there.
 */
async function bind(
  build: () => FastifyInstance,
  socket: string,
  log: (line: string) => void,
  takeOver: boolean,
): Promise<
  | { kind: "listening"; app: FastifyInstance; own: string; inode: number | null }
  | { kind: "running"; status: DaemonStatus }
> {
  const found: SocketAnswer = takeOver ? { kind: "none" } : await probeSocket(socket, 2_000);
  if (found.kind === "proven") return { kind: "running", status: found.status };
  if (found.kind === "unproven") {
    recordTaken(
      socket,
      found.detail,
      "socket held by a program that is not reins' daemon",
      "taking it over",
      log,
    );
  }
  const own = `${socket}.${process.pid}-${++daemonsStarted}`;
  rmSync(own, { force: true });
  const app = build();
  try {
    await app.listen({ path: own });
  } catch (error) {
    await app.close();
    throw error;
  }
  publish(socket, own);
  removeLeftovers(socket, own);
  return { kind: "listening", app, own, inode: socketInode(own) };
}

/** Removes the own sockets of daemons of the same name that died without closing (nothing listens on them). */
function removeLeftovers(socket: string, own: string): void {
  const dir = dirname(socket);
  const prefix = `${basename(socket)}.`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    const pid = Number(name.slice(prefix.length).split("-")[0]);
    if (!name.startsWith(prefix) || path === own || !Number.isInteger(pid) || pid <= 0) continue;
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ESRCH") rmSync(path, { force: true });
    }
  }
}

interface AppHooks {
  /** The user's daemon key, with which every answer is signed. */
  key: string;
  nonces: Nonces;
  onCall(): void;
  onAnswered(): void;
  log(line: string): void;
  status(): DaemonStatus;
  stop(): void;
  sessions: SessionVariables;
  /** The Claude Code turns open, which keep the daemon from retiring while its http hooks may call. */
  turns: OpenTurns;
  /** The loopback port of the http hooks, or null when they are off. */
  httpPort(): number | null;
}

function buildApp(pool: ProjectPool, hooks: AppHooks): FastifyInstance {
  // A hook input may be up to MAX_HOOK_INPUT; a larger one still reaches readHookInput, which judges it
  // without its content rather than letting a 413 drop the call to the slow path.
  const app = Fastify({ logger: false, bodyLimit: MAX_HOOK_INPUT + 1024 * 1024, return503OnClosing: true });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));

  // The status is signed over the asker's nonce, so a daemon that starts, or one that finds its socket taken,
  // tells reins' daemon from a program that only answers as one.
  app.get<{ Querystring: { nonce?: string } }>("/status", (request, reply) => {
    const body = JSON.stringify(hooks.status());
    const nonce = request.query.nonce;
    if (typeof nonce === "string" && /^[0-9a-f]{1,64}$/.test(nonce))
      void reply.header(HEADERS.proof, mac(hooks.key, [nonce, body]));
    return reply.header("content-type", "application/json").send(body);
  });
  app.post("/stop", (_request, reply) => {
    setImmediate(() => hooks.stop());
    return reply.send({ stopping: true });
  });
  app.post<{ Params: { agent: string } }>("/hooks/:agent", async (request, reply) => {
    const headers = request.headers;
    if (headers[HEADERS.protocol] !== PROTOCOL)
      return reply.code(400).send({ error: `this daemon speaks hook protocol ${PROTOCOL}` });
    const rootHeader = headers[HEADERS.root];
    const root = typeof rootHeader === "string" ? decodeHeaderValue(rootHeader) : null;
    if (root === null || !isUsableRoot(root))
      return reply.code(400).send({ error: "the project's root is missing or not an absolute path" });
    const envGiven = headers[HEADERS.env];
    const envHeader = typeof envGiven === "string" ? envGiven : "";
    const body = (request.body as Buffer | undefined) ?? Buffer.alloc(0);
    const nonce = headers[HEADERS.nonce];
    const agent = request.params.agent;
    const parts = callParts(String(nonce), agent, rootHeader as string, envHeader, body);
    if (!pool.verifies(root, parts, headers[HEADERS.auth]))
      return reply
        .code(401)
        .send({ error: `not signed with the hook secret of ${root} (.reins/hook-secret)` });
    if (!hooks.nonces.take(nonce, Date.now()))
      return reply.code(401).send({ error: "the call's nonce is stale or was used before" });
    const env = decodeProjectEnv(envHeader === "" ? undefined : envHeader);
    if (env === null) return reply.code(400).send({ error: "the project variables are malformed" });
    hooks.onCall();
    try {
      const checked = readHookInput(agent, body);
      let result;
      const standIn = "adapter" in checked ? userHookAnswer(agent, checked.input, root, env) : undefined;
      if (!("adapter" in checked)) result = checked;
      else if (standIn !== undefined) result = { reply: standIn.reply, warning: "" };
      else {
        try {
          const session = checked.adapter.session(checked.input);
          hooks.sessions.remember(root, session, env);
          if (agent === "claude") hooks.turns.note(root, session, checked.input, Date.now());
          const services = await pool.services(root, env, agent, Date.now());
          userTurnUpkeep(agent, checked.input, root, env);
          result = withWarning(
            await answerHook(checked.adapter, checked.input, services, Date.now()),
            checked.warning,
          );
          result = followedPort(result, agent, checked.input, root, hooks.httpPort());
        } catch (error) {
          result = hookFailure(agent, error);
        }
      }
      if (result.warning !== "") hooks.log(`${root}: ${result.warning}`);
      // The client prints the body as the hook's stdout (an allow is an empty object), once the proof shows
      // that reins' daemon, not whatever else holds the socket, answered: the key signs its nonce and the body.
      const answer = JSON.stringify(result.reply ?? {});
      return reply
        .code(200)
        .header("content-type", "application/json")
        .header(HEADERS.protocol, PROTOCOL)
        .header(HEADERS.proof, mac(hooks.key, [String(nonce), answer]))
        .send(answer);
    } finally {
      hooks.onAnswered();
    }
  });
  return app;
}

/**
 * At a Claude Code session's start, points the project's http hooks to the daemon's port if they name
 * another; the reply then tells the session it is not guarded (its hooks were read before).
 */
function followedPort(
  result: HookResult,
  agent: string,
  input: unknown,
  root: string,
  port: number | null,
): HookResult {
  if (agent !== "claude" || port === null) return result;
  if ((input as { hook_event_name?: unknown }).hook_event_name !== "SessionStart") return result;
  const line = followPort(root, port);
  if (line === null) return result;
  return { ...result, reply: { ...(result.reply ?? {}), systemMessage: line } };
}

/** Logs and records (the tamper record the next turn's start says) a socket held by a program not reins'. */
function recordTaken(
  socket: string,
  answered: string,
  what: string,
  then: string,
  log: (line: string) => void,
): void {
  const detail = `${answered}; ${socketHolder(socket)}`;
  log(`${what} (${detail}); ${then}`);
  appendTamper(dirname(socket), {
    at: Date.now(),
    kind: "socket-taken",
    socket,
    by: `daemon ${process.pid}`,
    detail,
  });
}
