/** `reins serve`: the long-lived server that answers hooks and serves the API, dashboard and metrics. */
import cors from "@fastify/cors";
import swagger from "@fastify/swagger";
import { isIP } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import { jsonSchemaTransform } from "fastify-type-provider-zod";
import { ReinsError } from "../base/core/errors.js";
import {
  answerHook,
  hookFailure,
  readHookInput,
  withWarning,
  type HookServices,
} from "../guard/hooks/hook-call.js";
import { proofOf } from "./server-process.js";
import { registerApi } from "./api.js";
import { createMetrics } from "./metrics.js";
import { bearerCheck } from "../base/config/hook-secret.js";
import { EventHub, observedStore } from "./stream.js";
import { StateScan } from "./scan.js";
import { registerWeb } from "./web.js";

export interface ServerOptions {
  services: HookServices;
  /** The bearer token hook calls must present (the API token is accepted too). */
  secret: string;
  /** The people's bearer token for the API: every change (extend, reset, acknowledge), and everything off loopback. */
  token: string;
  /**
   * The agents' token: ingest, decide and hooks, and reads off loopback, never a person's actions. What a
   * machine running agents holds (`REINS_TOKEN` of remote hooks). @default none (only the people's token)
   */
  agentToken?: string;
  /** The address the server listens on: reads are open without the token only on loopback. */
  host: string;
  /** Origins allowed to call the API from a browser on another origin. @default none (no CORS) */
  corsOrigins?: string[];
  /** Extends and resets allowed per token per minute. @default 10 */
  actionsPerMinute?: number;
  /** Logs a line per failure (never the hook input). @default nothing */
  log?: (line: string) => void;
}

/**
 * Whether an address only this machine can reach, judged by the address: an IPv4 address in 127.0.0.0/8,
 * `::1`, an IPv4-mapped loopback, or the name `localhost`. Any other name (`127.evil.example`) is not.
 */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "");
  if (bare === "localhost") return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)?.[1];
  const address = mapped ?? bare;
  if (isIP(address) === 4) return address.split(".")[0] === "127";
  return isIP(address) === 6 && /^(0{0,4}:){7}0{0,3}1$|^::1$/.test(address);
}

/** The Host header's name, without its port. */
function hostName(header: string | undefined): string {
  if (header === undefined) return "";
  return header.startsWith("[") ? header.slice(0, header.indexOf("]") + 1) : (header.split(":")[0] ?? "");
}

const VERSION = "0.1.0";

/**
 * The long-lived reins process (`reins serve`): answers agent hooks over loopback HTTP with the store
 * already open (Claude Code posts its `"type": "http"` hooks here directly; command-hook agents come
 * through the native client), and serves the control plane: the API under /api, /metrics, /healthz.
 */
export async function createServer(options: ServerOptions): Promise<FastifyInstance> {
  const hub = new EventHub();
  const scan = new StateScan(options.services.store);
  const metrics = createMetrics(scan, options.services.policy, options.services.store);
  const store = observedStore(options.services.store, (records, seconds) => {
    metrics.observe(seconds);
    scan.invalidate();
    hub.publish(records);
  });
  const services: HookServices = { ...options.services, store };
  const { secret } = options;
  const openReads = isLoopback(options.host);
  // A scope id can be up to 1,024 characters, three times that URL-encoded: Fastify's default cap on a path
  // parameter (100) made long ids listable but not readable.
  const app = Fastify({
    logger: false,
    bodyLimit: 16 * 1024 * 1024,
    return503OnClosing: true,
    routerOptions: { maxParamLength: 4_096 },
  });

  const withCors = options.corsOrigins !== undefined && options.corsOrigins.length > 0;
  guardAccess(app, options);
  closeConnectionsOnClose(app, hub);

  if (withCors)
    await app.register(cors, {
      origin: options.corsOrigins ?? [],
      allowedHeaders: ["authorization", "content-type"],
    });

  await app.register(swagger, {
    openapi: {
      info: { title: "reins control plane", version: VERSION },
      components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
  });

  registerHealth(app, services, secret, openReads, metrics);
  await registerHookRoute(app, services, options);

  await registerApi(app, {
    root: services.root,
    store,
    policy: services.policy,
    spool: services.spool,
    hub,
    scan,
    ...(options.actionsPerMinute !== undefined ? { actionsPerMinute: options.actionsPerMinute } : {}),
  });
  await registerWeb(app, { store, scan, policy: services.policy });

  return app;
}

/**
 * Who may call what, checked on every request: off loopback everything but health, hooks and the dashboard's
 * files needs the token; on loopback, only changes do, and the Host must name this machine.
 */
function guardAccess(app: FastifyInstance, options: ServerOptions): void {
  const { token } = options;
  const agentTokens = options.agentToken !== undefined ? [options.agentToken] : [];
  const openReads = isLoopback(options.host);
  // Off loopback everything but health, hooks and the dashboard's files needs the token; on loopback,
  // only changes do. The dashboard is told apart by the route matched, so no spelling of a path reaches
  // /api or /metrics without the token.
  const withCors = options.corsOrigins !== undefined && options.corsOrigins.length > 0;
  /** Who may call a route: anyone, the agents' token or the people's, or the people's token only. */
  const accessOf = (method: string, route: string | undefined): "open" | "agents" | "people" => {
    const read = method === "GET" || method === "HEAD";
    if (
      route === "/healthz" ||
      route === "/hooks/:agent" ||
      (withCors && method === "OPTIONS") ||
      (openReads && read) ||
      (read && route !== undefined && !route.startsWith("/api") && route !== "/metrics")
    )
      return "open";
    // A person's actions (extend, reset, acknowledge) and saving a run's checkpoint (what the run does next)
    // take the people's token; the agents' token does the rest.
    const human =
      route !== undefined &&
      ((method === "POST" && /^\/api\/(?:budgets|circuits|alerts)\//.test(route)) ||
        (method === "PUT" && route === "/api/runs/:id"));
    return human ? "people" : "agents";
  };
  // Worked out once per route and method (both finite sets), and the tokens once: not on every request.
  const accessByRoute = new Map<string, "open" | "agents" | "people">();
  const people = bearerCheck(token);
  const anyone = bearerCheck(token, ...agentTokens);
  const agents = bearerCheck(...agentTokens);
  /** The last Host header found to name this machine: a client sends the same one on every request. */
  let loopbackHost: string | undefined;
  app.addHook("onRequest", (request, reply, done) => {
    // On loopback, reads are open: a page elsewhere must not reach them through a name that resolves to
    // 127.0.0.1 (DNS rebinding), so the Host must name this machine.
    const host = request.headers.host;
    if (openReads && (host === undefined || host !== loopbackHost)) {
      if (!isLoopback(hostName(host))) {
        void reply.code(403).send({
          error: "forbidden",
          message: `this server answers requests for 127.0.0.1, ::1 or localhost, not ${JSON.stringify(host ?? "")}`,
        });
        return;
      }
      loopbackHost = host;
    }
    // Decided by the route the router matched, never by the raw URL: the router decodes `%62udgets` to
    // `budgets`, and a query string follows `/healthz`.
    const method = request.method;
    const route = request.routeOptions.url;
    const key = `${method} ${route}`;
    let access = accessByRoute.get(key);
    if (access === undefined) accessByRoute.set(key, (access = accessOf(method, route)));
    const header = request.headers.authorization;
    if (access === "open" || (access === "people" ? people(header) : anyone(header))) return done();
    const asAgents = access === "agents" || !agents(header);
    void reply.code(asAgents ? 401 : 403).send(
      asAgents
        ? {
            error: "unauthorized",
            message: "a valid bearer token is required (Authorization: Bearer <token>; see .reins/api-token)",
          }
        : {
            error: "forbidden",
            message:
              "the agents' token cannot act as a person: extend, reset, acknowledge and saving a run take the people's token (.reins/api-token)",
          },
    );
  });
}

/** While closing, answers close their connection and the event streams end. */
function closeConnectionsOnClose(app: FastifyInstance, hub: EventHub): void {
  // A keep-alive client must not hold the exit up.
  let closing = false;
  app.addHook("preClose", (done) => {
    closing = true;
    hub.close();
    done();
  });
  app.addHook("onSend", (_request, reply, payload, done) => {
    if (closing) void reply.header("connection", "close");
    done(null, payload);
  });
}

/** GET /healthz (with the server's proof to a hook's challenge), GET /metrics and GET /api/openapi.json. */
function registerHealth(
  app: FastifyInstance,
  services: HookServices,
  secret: string,
  openReads: boolean,
  metrics: ReturnType<typeof createMetrics>,
): void {
  // Healthy means the store answers: a read of its scopes and of the latest one's state, so a store that
  // is down or damaged is reported rather than hidden behind "ok".
  app.get<{ Querystring: { challenge?: string } }>(
    "/healthz",
    { schema: { hide: true } },
    async (request, reply) => {
      // A hook asking whether this is its project's server sends a challenge; only the secret's holder answers it.
      const challenge = request.query.challenge;
      const proof =
        typeof challenge === "string" && /^[0-9a-f]{8,128}$/.test(challenge)
          ? { proof: proofOf(secret, challenge) }
          : {};
      const base = { store: services.store.kind, ...(openReads ? { root: services.root } : {}), ...proof };
      // Who answers is one question, how the store is another: a hook finding its server must not wait for
      // a store that is slow or down (and then start a second server beside it).
      if ("proof" in proof) return base;
      try {
        const [latest] = await services.store.scopes();
        if (latest !== undefined) await services.store.state(latest);
        return { ok: true, ...base };
      } catch (error) {
        const message = ReinsError.is(error) || error instanceof Error ? error.message : String(error);
        return reply.code(503).send({ ok: false, ...base, error: message.split("\n")[0] });
      }
    },
  );
  app.get("/metrics", { schema: { hide: true } }, async (_request, reply) => {
    const text = await metrics.text(Date.now());
    return reply.header("content-type", metrics.registry.contentType).send(text);
  });
  app.get("/api/openapi.json", { schema: { hide: true } }, () => app.swagger());
}

/** POST /hooks/:agent: a hook call answered from its raw body, with the hook secret or either token. */
async function registerHookRoute(
  app: FastifyInstance,
  services: HookServices,
  options: ServerOptions,
): Promise<void> {
  const agentTokens = options.agentToken !== undefined ? [options.agentToken] : [];
  const hookCaller = bearerCheck(options.secret, options.token, ...agentTokens);
  await app.register((hooks, _options, registered) => {
    // Hook bodies are answered from their raw text, so a malformed body still gets an allow, not a 400.
    hooks.removeAllContentTypeParsers();
    hooks.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));
    hooks.post<{ Params: { agent: string } }>(
      "/hooks/:agent",
      { schema: { hide: true } },
      async (request, reply) => {
        if (!hookCaller(request.headers.authorization)) {
          return reply.code(401).send({ error: "a valid bearer token is required (see .reins/hook-secret)" });
        }
        const agent = request.params.agent;
        const checked = readHookInput(agent, (request.body as Buffer | undefined) ?? Buffer.alloc(0));
        let result;
        if (!("adapter" in checked)) result = checked;
        else {
          try {
            result = withWarning(
              await answerHook(checked.adapter, checked.input, services, Date.now()),
              checked.warning,
            );
          } catch (error) {
            result = hookFailure(agent, error);
          }
        }
        if (result.warning !== "") options.log?.(result.warning);
        // An allow is an empty object: Claude Code reads a 2xx JSON body exactly like a command hook's stdout.
        return reply
          .code(200)
          .header("content-type", "application/json")
          .send(JSON.stringify(result.reply ?? {}));
      },
    );
    registered();
  });
}
