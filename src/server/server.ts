import cors from "@fastify/cors";
import swagger from "@fastify/swagger";
import Fastify, { type FastifyInstance } from "fastify";
import { jsonSchemaTransform } from "fastify-type-provider-zod";
import { answerHook, hookFailure, readHookInput, type HookServices } from "../hooks/run-hook.js";
import { registerApi } from "./api.js";
import { createMetrics } from "./metrics.js";
import { authorized } from "./secret.js";
import { EventHub, observedStore } from "./stream.js";
import { registerWeb } from "./web.js";

export interface ServerOptions {
  services: HookServices;
  /** The bearer token hook calls must present (the API token is accepted too). */
  secret: string;
  /** The bearer token for the API: every change, ingest and decide, and everything off loopback. */
  token: string;
  /** The address the server listens on: reads are open without the token only on loopback. */
  host: string;
  /** Origins allowed to call the API from a browser on another origin. @default none (no CORS) */
  corsOrigins?: string[];
  /** Extends and resets allowed per token per minute. @default 10 */
  actionsPerMinute?: number;
  /** Logs a line per failure (never the hook input). @default nothing */
  log?: (line: string) => void;
}

/** Whether an address only this machine can reach. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host.startsWith("127.");
}

const VERSION = "0.1.0";

/**
 * The long-lived reins process (`reins serve`): answers agent hooks over loopback HTTP with the store
 * already open (Claude Code posts its `"type": "http"` hooks here directly; command-hook agents come
 * through the native client), and serves the control plane: the API under /api, /metrics, /healthz.
 */
export async function createServer(options: ServerOptions): Promise<FastifyInstance> {
  const hub = new EventHub();
  const metrics = createMetrics(options.services.store, options.services.policy);
  const store = observedStore(options.services.store, (records, seconds) => {
    metrics.observe(seconds);
    hub.publish(records);
  });
  const services: HookServices = { ...options.services, store };
  const { secret, token } = options;
  const openReads = isLoopback(options.host);
  const app = Fastify({ logger: false, bodyLimit: 16 * 1024 * 1024, return503OnClosing: true });

  // Off loopback everything but health, hooks and the dashboard's files needs the token; on loopback,
  // only changes do. The dashboard is told apart by the route matched, so no spelling of a path reaches
  // /api or /metrics without the token.
  const withCors = options.corsOrigins !== undefined && options.corsOrigins.length > 0;
  app.addHook("onRequest", (request, reply, done) => {
    const path = request.url;
    const method = request.method;
    const read = method === "GET" || method === "HEAD";
    const route = request.routeOptions.url;
    const open =
      path === "/healthz" ||
      path.startsWith("/hooks/") ||
      (withCors && method === "OPTIONS") ||
      (openReads && read) ||
      (read && route !== undefined && !route.startsWith("/api") && route !== "/metrics");
    if (open || authorized(request.headers.authorization, token)) return done();
    void reply.code(401).send({
      error: "unauthorized",
      message: "a valid bearer token is required (Authorization: Bearer <token>; see .reins/api-token)",
    });
  });
  // While closing, answers close their connection, so a keep-alive client does not hold the exit up.
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

  app.get("/healthz", { schema: { hide: true } }, () => ({
    ok: true,
    store: services.store.kind,
    ...(openReads ? { root: services.root } : {}),
  }));
  app.get("/metrics", { schema: { hide: true } }, async (_request, reply) => {
    const text = await metrics.text(Date.now());
    return reply.header("content-type", metrics.registry.contentType).send(text);
  });
  app.get("/api/openapi.json", { schema: { hide: true } }, () => app.swagger());

  await app.register((hooks, _options, registered) => {
    // Hook bodies are answered from their raw text, so a malformed body still gets an allow, not a 400.
    hooks.removeAllContentTypeParsers();
    hooks.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));
    hooks.post<{ Params: { agent: string } }>(
      "/hooks/:agent",
      { schema: { hide: true } },
      async (request, reply) => {
        if (!authorized(request.headers.authorization, secret, token)) {
          return reply.code(401).send({ error: "a valid bearer token is required (see .reins/hook-secret)" });
        }
        const agent = request.params.agent;
        const checked = readHookInput(agent, (request.body as Buffer | undefined) ?? Buffer.alloc(0));
        let result;
        if (!("adapter" in checked)) result = checked;
        else {
          try {
            result = await answerHook(checked.adapter, checked.input, services, Date.now());
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

  await registerApi(app, {
    root: services.root,
    store,
    policy: services.policy,
    spool: services.spool,
    hub,
    ...(options.actionsPerMinute !== undefined ? { actionsPerMinute: options.actionsPerMinute } : {}),
  });
  await registerWeb(app, { store, policy: services.policy });

  return app;
}
