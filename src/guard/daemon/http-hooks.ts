/**
 * The user's hook daemon's loopback listener for Claude Code's native http hooks: no process starts on a
 * tool call. Each call names its project (`X-Reins-Root`) and carries that project's http hook token; the
 * project's own store and policy answer it, with the `REINS_*` variables its session's command hooks
 * brought. The port is the recorded one (http-port.ts); one held by another program is given up for a new
 * one, recorded, and each project's settings follow at its next session start; a daemon that retires for an
 * install change hands its listening socket to its successor (handoff.ts; docs/performance.md).
 */
import { timingSafeEqual } from "node:crypto";
import { readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { Server as NetServer, type Server } from "node:net";
import { join } from "node:path";
import Fastify, {
  type FastifyInstance,
  type FastifyListenOptions,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import type { OpenTurns } from "./open-turns.js";
import { answerHook, hookFailure, MAX_HOOK_INPUT, readHookInput, withWarning } from "../hooks/hook-call.js";
import { existingHookSecret } from "../../base/config/hook-secret.js";
import { hookPort, httpHookToken, recordPort } from "./http-port.js";
import { isUsableRoot, type ProjectPool } from "./projects.js";
import { decodeHeaderValue, HEADERS } from "./protocol.js";

/** What the http listener needs of its daemon. */
export interface HttpHooksOptions {
  pool: ProjectPool;
  /** The daemon's environment (where its runtime folder and port record are). */
  env: NodeJS.ProcessEnv;
  /** The daemon's name (`d-<hash>`). */
  name: string;
  log(line: string): void;
  onCall(): void;
  onAnswered(): void;
  /** The project variables a session's command hooks came with, by root and session id. */
  sessionEnv(root: string, session: string): Record<string, string>;
  /** The Claude Code turns open (a Stop closes one). */
  turns: OpenTurns;
  /**
   * The listening socket a retiring daemon handed over (handoff.ts): listened on as it is, so its port stays.
   * @default none: the recorded port is taken
   */
  inherited?: Server;
}

/** A listening http hook endpoint. */
export interface HttpHooks {
  port: number;
  /** The listening socket, to hand to a successor. */
  server: Server;
  /**
   * Stops taking connections and drains the kept-alive ones: a call still coming on one is answered and its
   * connection closed, so the client's next call opens a new one (which a successor holding the same socket
   * takes); the connections left are closed once no call came for a moment (see drain).
   */
  close(): Promise<void>;
}

/** The per-project http hook tokens, computed once per secret. */
class Tokens {
  private readonly byRoot = new Map<string, { secret: string; token: Buffer }>();

  matches(root: string, given: unknown): boolean {
    if (typeof given !== "string" || !given.startsWith("Bearer ")) return false;
    const bytes = Buffer.from(given.slice(7));
    const known = this.byRoot.get(root);
    if (known !== undefined && bytes.length === known.token.length && timingSafeEqual(bytes, known.token))
      return true;
    // Not the token of the secret known: read the secret again (a secret made anew), once.
    const secret = existingHookSecret(root);
    if (secret === "") {
      this.byRoot.delete(root);
      return false;
    }
    const token = Buffer.from(httpHookToken(secret, root));
    this.byRoot.set(root, { secret, token });
    return bytes.length === token.length && timingSafeEqual(bytes, token);
  }
}

/** The calls of an http listener under way and its last one's end, and whether it is draining (see drain). */
interface Traffic {
  draining: boolean;
  active: number;
  lastAt: number;
}

function build(options: HttpHooksOptions, port: () => number, traffic: Traffic): FastifyInstance {
  // Claude Code keeps its connections alive: a daemon that retires closes those left after its drain.
  const app = Fastify({
    logger: false,
    bodyLimit: MAX_HOOK_INPUT + 1024 * 1024,
    return503OnClosing: true,
    forceCloseConnections: true,
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));
  const tokens = new Tokens();
  app.post<{ Params: { agent: string } }>("/hooks/:agent", async (request, rawReply) => {
    // Counted for the drain, and, once it began, answered with `Connection: close`: a daemon that retires
    // answers each call still coming on a kept-alive connection and closes it then, so the client's next
    // call opens a new one, which its successor, if any, takes (see drain).
    traffic.active += 1;
    const reply = {
      code: (status: number) =>
        (traffic.draining ? rawReply.header("connection", "close") : rawReply).code(status),
    };
    try {
      return await answerCall(options, tokens, port(), request, reply);
    } finally {
      traffic.active -= 1;
      traffic.lastAt = Date.now();
    }
  });
  return app;
}

/** One http hook call: checked (host, project, token), answered by the project's store and policy. */
async function answerCall(
  options: HttpHooksOptions,
  tokens: Tokens,
  port: number,
  request: FastifyRequest<{ Params: { agent: string } }>,
  reply: { code(status: number): FastifyReply },
): Promise<FastifyReply> {
  // A page in a browser that rebinds a name to 127.0.0.1 reaches the port by another Host.
  if (request.headers.host !== `127.0.0.1:${port}`)
    return reply.code(421).send({ error: "the hook endpoint answers 127.0.0.1 only" });
  const rootHeader = request.headers[HEADERS.root];
  const root = typeof rootHeader === "string" ? decodeHeaderValue(rootHeader) : null;
  if (root === null || !isUsableRoot(root))
    return reply.code(400).send({ error: "the project's root is missing or not an absolute path" });
  if (!tokens.matches(root, request.headers.authorization))
    return reply
      .code(401)
      .send({ error: `not the http hook token of ${root}: run \`reins init claude\` again` });
  const agent = request.params.agent;
  const body = (request.body as Buffer | undefined) ?? Buffer.alloc(0);
  options.onCall();
  try {
    const checked = readHookInput(agent, body);
    let result;
    if (!("adapter" in checked)) result = checked;
    else {
      try {
        const session = checked.adapter.session(checked.input);
        if (agent === "claude") options.turns.note(root, session, checked.input, Date.now());
        const env = options.sessionEnv(root, session);
        const services = await options.pool.services(root, env, agent, Date.now());
        result = withWarning(
          await answerHook(checked.adapter, checked.input, services, Date.now()),
          checked.warning,
        );
      } catch (error) {
        result = hookFailure(agent, error);
      }
    }
    if (result.warning !== "") options.log(`${root}: ${result.warning}`);
    return reply
      .code(200)
      .header("content-type", "application/json")
      .send(JSON.stringify(result.reply ?? {}));
  } finally {
    options.onAnswered();
  }
}

const inUse = (error: unknown) => (error as NodeJS.ErrnoException).code === "EADDRINUSE";

/**
 * Listens on 127.0.0.1 at the daemon's recorded (else derived) port. While another program holds it (a
 * daemon that is retiring lets go within a second), it waits; then it takes a port the system gives and
 * records that one. Null when it cannot listen at all: the command hooks still answer.
 */
export async function listenHttpHooks(options: HttpHooksOptions): Promise<HttpHooks | null> {
  let port = hookPort(options.env, options.name);
  const traffic: Traffic = { draining: false, active: 0, lastAt: 0 };
  const app = build(options, () => port, traffic);
  if (options.inherited !== undefined) {
    // Node listens on a server's handle, not on the server object the IPC channel delivers.
    const handle = (options.inherited as unknown as { _handle: unknown })._handle;
    await app.listen({ handle, host: "127.0.0.1" } as FastifyListenOptions);
  } else if (!(await listenOnPort(app, port, (line) => options.log(line)))) return null;
  const address = app.server.address();
  const bound = typeof address === "object" && address !== null ? address.port : port;
  if (bound !== port) options.log(`port ${port} is held by another program; http hooks moved to ${bound}`);
  port = bound;
  recordPort(options.env, options.name, port);
  return { port, server: app.server, close: () => drain(app, traffic) };
}

/** Listens at `port`, waiting while another program holds it, else at one the system gives. */
async function listenOnPort(
  app: FastifyInstance,
  port: number,
  log: (line: string) => void,
): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    try {
      await app.listen({ host: "127.0.0.1", port: attempt < 10 ? port : 0 });
      return true;
    } catch (error) {
      if (!inUse(error) || attempt >= 10) {
        log(`cannot listen for http hooks on 127.0.0.1: ${(error as Error).message}`);
        await app.close();
        return false;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** How long a retiring daemon lets its kept-alive connections carry their last calls, ms, at most. */
const DRAIN_MS = 3_000;

/** How long without a call a draining listener waits before it closes the connections left, ms. */
const QUIET_MS = 250;

/**
 * Stops taking connections, then answers each call that still comes on a kept-alive one with `Connection:
 * close`, until no call came for QUIET_MS (DRAIN_MS at most); only then are the connections left closed.
 * Closing idle connections at once (Node's own close) resets a call a busy client is sending at that moment,
 * and Fastify's close answers one with a 503: Claude Code takes either as a hook error and lets the tool
 * call go unjudged.
 */
async function drain(app: FastifyInstance, traffic: Traffic): Promise<void> {
  const server = app.server;
  if (server.listening) {
    traffic.draining = true;
    // net.Server's close: it stops listening and leaves the connections open (http.Server's closes idle ones).
    let open = true;
    NetServer.prototype.close.call(server, () => (open = false));
    for (const end = Date.now() + DRAIN_MS; open && Date.now() < end;) {
      if (traffic.active === 0 && Date.now() - traffic.lastAt >= QUIET_MS) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  await app.close();
}

/** The settings files of a project that may carry reins' http hooks to the daemon. */
const SETTINGS = [join(".claude", "settings.local.json"), join(".claude", "settings.json")];

const DAEMON_URL = /^http:\/\/127\.0\.0\.1:(\d+)(\/hooks\/[a-z]+)$/;

/**
 * Points the project's http hooks to the daemon at `port` when they name another (the port moved since they
 * were written): Claude Code reads its hooks when a session starts, so the next session reaches the daemon.
 * Returns the line to tell the current session, or null when nothing had to change. Never throws.
 */
export function followPort(root: string, port: number): string | null {
  let moved: number | null = null;
  for (const name of SETTINGS) {
    const file = join(root, name);
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    try {
      const settings = JSON.parse(text) as {
        hooks?: Record<string, { hooks?: Record<string, unknown>[] }[]>;
      };
      let changed = false;
      for (const groups of Object.values(settings.hooks ?? {}))
        for (const group of Array.isArray(groups) ? groups : [])
          for (const entry of Array.isArray(group.hooks) ? group.hooks : []) {
            const match = typeof entry.url === "string" ? DAEMON_URL.exec(entry.url) : null;
            const headers = entry.headers as Record<string, unknown> | undefined;
            if (entry.type !== "http" || match === null || typeof headers?.["X-Reins-Root"] !== "string")
              continue;
            if (Number(match[1]) === port) continue;
            moved = Number(match[1]);
            entry.url = `http://127.0.0.1:${port}${match[2]}`;
            changed = true;
          }
      if (!changed) continue;
      const mode = statSync(file).mode & 0o777;
      writeFileSync(`${file}.reins-tmp`, `${JSON.stringify(settings, null, 2)}\n`, { mode });
      renameSync(`${file}.reins-tmp`, file);
    } catch {
      continue;
    }
  }
  return moved === null
    ? null
    : `reins: port ${moved} of reins' http hooks was taken by another program; they now post to ${port}. This session still posts to ${moved}, so its tool calls are not guarded: start it again.`;
}
