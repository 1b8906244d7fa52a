/**
 * `reins serve --all`: one loopback server for every project of the user's. `GET /api/all` answers the
 * all-projects view (what `reins status --all --json` prints), `/` is its page, and each project's own
 * dashboard and API are served under `/p/<id>/`, by that project's own server (createServer) built on
 * first visit and handed the request as it came, so its rules (the people's token for actions, the Host
 * check) hold there unchanged. It answers no hooks.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import fastifyStatic from "@fastify/static";
import Fastify, { type FastifyInstance } from "fastify";
import { ReinsError } from "../base/core/errors.js";
import { openServices, type HookServices } from "../guard/hooks/hook-call.js";
import { apiToken } from "../base/config/hook-secret.js";
import { createServer, isLoopback } from "./server.js";
import { CSP, WEB_ROOT } from "./web.js";

/** Options of the all-projects server; `host`, `status` and `rootOf` are required. */
export interface AllServerOptions {
  /** Must be a loopback address: the view reads every project's data and needs no token to read. */
  host: string;
  /** The all-projects view, read anew on each call. */
  status: () => Promise<unknown>;
  /** The root of the project with this id (its state folder's name), or null for none known. */
  rootOf: (id: string) => string | null;
  /** The user's variables, with which each project is opened. */
  env: NodeJS.ProcessEnv;
  /** Where the built dashboard is. @default WEB_ROOT */
  webRoot?: string;
  log?: (line: string) => void;
}

const ID = /^[0-9a-f]{16}$/;

/** One project's own server, built once, kept until the all-projects server closes. */
interface Mounted {
  app: FastifyInstance;
  services: HookServices;
}

/** The all-projects server (not yet listening). */
export async function createAllServer(options: AllServerOptions): Promise<FastifyInstance> {
  if (!isLoopback(options.host))
    throw new ReinsError(
      "usage",
      `reins serve --all listens on loopback only (it shows every project's data without a token), not ${options.host}`,
    );
  const app = Fastify({ logger: false, return503OnClosing: true });
  const mounted = new Map<string, Promise<Mounted>>();
  const mount = (id: string, root: string): Promise<Mounted> => {
    let found = mounted.get(id);
    if (found === undefined) {
      found = (async () => {
        const services = await openServices(root, options.env, { requireConnection: false });
        const sub = await createServer({
          services,
          // Hooks are never forwarded (see below); a random secret keeps that door shut in any case.
          secret: randomBytes(32).toString("hex"),
          token: apiToken(root).value,
          host: options.host,
          ...(options.log !== undefined ? { log: options.log } : {}),
        });
        await sub.ready();
        return { app: sub, services };
      })();
      found.catch(() => mounted.delete(id));
      mounted.set(id, found);
    }
    return found;
  };
  // Before the server waits for its connections: a project's open event stream ends only when its own
  // server closes.
  app.addHook("preClose", async () => {
    for (const pending of mounted.values()) {
      const m = await pending.catch(() => null);
      if (m === null) continue;
      await m.app.close();
      await m.services.store.close();
    }
  });
  app.addHook("onRequest", (request, reply, done) => {
    // Reads are open on loopback: a page elsewhere must not reach them through a name resolving to 127.0.0.1.
    const host = (request.headers.host ?? "").replace(/:\d+$/, "");
    if (isLoopback(host)) return done();
    void reply
      .code(403)
      .send({ error: "forbidden", message: "this server answers 127.0.0.1, ::1 or localhost" });
  });

  app.get("/api/all", async () => options.status());
  await app.register((projects, _options, registered) => {
    // The body stays unread: the project's own server reads it.
    projects.removeAllContentTypeParsers();
    projects.addContentTypeParser("*", (_request, _payload, done) => done(null));
    projects.get<{ Params: { id: string } }>("/p/:id", (request, reply) =>
      reply.redirect(`/p/${encodeURIComponent(request.params.id)}/`),
    );
    projects.all<{ Params: { id: string; "*": string } }>("/p/:id/*", async (request, reply) => {
      const { id } = request.params;
      const root = ID.test(id) ? options.rootOf(id) : null;
      if (root === null)
        return reply.code(404).send({ error: "not_found", message: `no project "${id}" in reins' records` });
      const rest = request.params["*"];
      if (rest === "hooks" || rest.startsWith("hooks/"))
        return reply
          .code(404)
          .send({ error: "not_found", message: "the all-projects server answers no hooks" });
      const { app: sub } = await mount(id, root);
      const raw = request.raw;
      raw.url = `/${rest}${raw.url?.includes("?") === true ? raw.url.slice(raw.url.indexOf("?")) : ""}`;
      reply.hijack();
      sub.routing(raw, reply.raw);
    });
    registered();
  });

  const root = options.webRoot ?? WEB_ROOT;
  if (!existsSync(join(root, "all.html"))) {
    app.get("/", (_request, reply) =>
      reply
        .type("text/plain; charset=utf-8")
        .send("The reins dashboard is not built: run `npm run build`.\n"),
    );
    return app;
  }
  await app.register(fastifyStatic, {
    root,
    // Its own cache-control off: setHeaders sets it (@fastify/static 9 would write max-age=0 over it).
    cacheControl: false,
    prefix: "/",
    index: ["all.html"],
    preCompressed: true,
    allowedPath: (path) => path === "/" || path === "/all.html" || path.startsWith("/assets/"),
    setHeaders(reply, path) {
      reply.setHeader("x-content-type-options", "nosniff");
      reply.setHeader(
        "cache-control",
        path.includes("/assets/") ? "public, max-age=31536000, immutable" : "no-cache",
      );
      if (/\.html(\.gz|\.br)?$/.test(path)) {
        reply.setHeader("content-security-policy", CSP);
        reply.setHeader("referrer-policy", "no-referrer");
      }
    },
  });
  return app;
}
