/**
 * The user's hook daemon: one long-lived process per user and reins install that answers the hooks of
 * every project on the machine over a Unix socket in the user's private runtime folder. Each call names its
 * project (root) and proves it with that project's hook secret; the project's own store and policy answer
 * it. It exits when no hook has called for its idle time, and the next hook starts it again.
 */
import { readdirSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { answerHook, hookFailure, MAX_HOOK_INPUT, readHookInput, withWarning } from "../hooks/run-hook.js";
import { bearerToken } from "../server/secret.js";
import { ProjectPool, isUsableRoot, type ProjectPoolOptions } from "./projects.js";
import { decodeHeaderValue, decodeProjectEnv, HEADERS, PROTOCOL } from "./protocol.js";
import { DAEMON_KIND, probeDaemon, type DaemonStatus } from "./probe.js";

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
   * daemon retires so that the next hook starts the new code.
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
  /** How the daemon keeps the projects it answers for (their idle time, how many at most). */
  projects?: ProjectPoolOptions;
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
 * Starts a hook daemon on `options.socket`. When another daemon already answers there, returns it instead. A
 * socket left by a daemon that died, or held by any other program, is taken over: the conflict is resolved,
 * not reported.
 */
export async function startHookDaemon(options: HookDaemonOptions): Promise<DaemonStart> {
  const log = options.log ?? (() => {});
  const idleMs = options.idleMs ?? 1_800_000;
  const pool = new ProjectPool(options.projects);
  const startedAt = Date.now();
  let lastCallAt = startedAt;
  let calls = 0;
  let inFlight = 0;
  const build = () =>
    buildApp(pool, {
      onCall: () => {
        calls += 1;
        inFlight += 1;
        lastCallAt = Date.now();
      },
      onAnswered: () => {
        inFlight -= 1;
        lastCallAt = Date.now();
      },
      log,
      status: () => status(),
      stop: () => void close("asked to stop"),
    });
  const status = (): DaemonStatus => ({
    kind: DAEMON_KIND,
    pid: process.pid,
    version: options.version,
    bin: options.bin,
    socket: options.socket,
    startedAt,
    lastCallAt,
    calls,
    idleMs,
    rssBytes: process.memoryUsage.rss(),
    projects: pool.list(),
  });

  const bound = await bind(build, options.socket);
  if (bound.kind === "running") return bound;
  const { app, own, inode } = bound;
  const stampAtStart = options.stamp?.();
  log(`reins hook daemon ${process.pid} listening on ${options.socket} (reins ${options.version})`);

  let resolveClosed: (reason: string) => void = () => {};
  const closed = new Promise<string>((resolve) => (resolveClosed = resolve));
  let closing: Promise<string> | null = null;
  const close = (reason: string): Promise<string> => {
    closing ??= (async () => {
      clearInterval(timer);
      await app.close();
      // Closing removed its own socket; the shared link goes only while it still names that socket: a daemon
      // that took the path over since keeps it.
      if (linkTarget(options.socket) === basename(own)) rmSync(options.socket, { force: true });
      await pool.closeAll();
      log(`reins hook daemon ${process.pid} stopped: ${reason}`);
      resolveClosed(reason);
      return reason;
    })();
    return closing;
  };

  const checkMs = options.checkMs ?? Math.max(50, Math.min(5_000, Math.floor(idleMs / 4)));
  const timer = setInterval(() => {
    const now = Date.now();
    if (socketInode(options.socket) !== inode) void close("its socket was taken over by another daemon");
    else if (stampAtStart !== undefined && options.stamp?.() !== stampAtStart)
      void close("reins was updated or rebuilt; the next hook starts the new version");
    else if (inFlight === 0 && now - lastCallAt >= idleMs)
      void close(`no hook called for ${Math.round(idleMs / 1000)} s`);
    else void pool.sweep(now);
  }, checkMs);
  timer.unref();

  return { kind: "listening", daemon: { closed, close, status } };
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
 * that is not a reins daemon, is replaced.
 */
async function bind(
  build: () => FastifyInstance,
  socket: string,
): Promise<
  | { kind: "listening"; app: FastifyInstance; own: string; inode: number | null }
  | { kind: "running"; status: DaemonStatus }
> {
  const status = await probeDaemon(socket, 2_000);
  if (status !== null) return { kind: "running", status };
  const own = `${socket}.${process.pid}-${++daemonsStarted}`;
  rmSync(own, { force: true });
  const app = build();
  try {
    await app.listen({ path: own });
  } catch (error) {
    await app.close();
    throw error;
  }
  const link = `${own}.link`;
  rmSync(link, { force: true });
  symlinkSync(basename(own), link);
  renameSync(link, socket);
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
  onCall(): void;
  onAnswered(): void;
  log(line: string): void;
  status(): DaemonStatus;
  stop(): void;
}

function buildApp(pool: ProjectPool, hooks: AppHooks): FastifyInstance {
  // A hook input may be up to MAX_HOOK_INPUT; a larger one still reaches readHookInput, which judges it
  // without its content rather than letting a 413 drop the call to the slow path.
  const app = Fastify({ logger: false, bodyLimit: MAX_HOOK_INPUT + 1024 * 1024, return503OnClosing: true });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));

  app.get("/status", () => hooks.status());
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
    const token = bearerToken(headers.authorization);
    if (token === null || !pool.authenticates(root, token))
      return reply.code(401).send({ error: `not the hook secret of ${root} (.reins/hook-secret)` });
    const envHeader = headers[HEADERS.env];
    const env = decodeProjectEnv(typeof envHeader === "string" ? envHeader : undefined);
    if (env === null) return reply.code(400).send({ error: "the project variables are malformed" });
    const agent = request.params.agent;
    hooks.onCall();
    try {
      const checked = readHookInput(agent, (request.body as Buffer | undefined) ?? Buffer.alloc(0));
      let result;
      if (!("adapter" in checked)) result = checked;
      else {
        try {
          const services = await pool.services(root, env, agent, Date.now());
          result = withWarning(
            await answerHook(checked.adapter, checked.input, services, Date.now()),
            checked.warning,
          );
        } catch (error) {
          result = hookFailure(agent, error);
        }
      }
      if (result.warning !== "") hooks.log(`${root}: ${result.warning}`);
      // The client prints the body as the hook's stdout (an allow is an empty object), once the protocol
      // header shows that a reins daemon, not whatever else holds the socket, answered.
      return reply
        .code(200)
        .header("content-type", "application/json")
        .header(HEADERS.protocol, PROTOCOL)
        .send(JSON.stringify(result.reply ?? {}));
    } finally {
      hooks.onAnswered();
    }
  });
  return app;
}
