/** A real `reins serve` server for the API tests, and scripted sessions to post to it. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import type { ReinsEvent } from "../../src/base/core/reins-event.js";
import { timeline, type Timeline } from "../../src/base/core/timeline.js";
import { openServices, type HookServices } from "../../src/guard/hooks/hook-call.js";
import { agentToken, apiToken, hookSecret } from "../../src/base/config/hook-secret.js";
import { createServer } from "../../src/server/server.js";

export interface ApiServer {
  project: string;
  url: string;
  token: string;
  services: HookServices;
  app: FastifyInstance;
  /** A fetch against the server: JSON in, status and JSON out; the token unless `token: null`. */
  call(
    method: string,
    path: string,
    body?: unknown,
    options?: { token?: string | null; raw?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; json: any; text: string }>;
  close(): Promise<void>;
}

/** A real `reins serve` server (SQLite store in a fresh project) listening on a free port. */
export async function startApi(
  options: {
    config?: object;
    host?: string;
    project?: string;
    actionsPerMinute?: number;
    port?: number;
  } = {},
): Promise<ApiServer> {
  const project = options.project ?? mkdtempSync(join(tmpdir(), "reins-api-"));
  if (options.project === undefined)
    writeFileSync(join(project, "reins.config.json"), JSON.stringify(options.config ?? {}));
  const services = await openServices(project, {});
  const token = apiToken(project).value;
  const agents = agentToken(project).value;
  const host = options.host ?? "127.0.0.1";
  const app = await createServer({
    services,
    secret: hookSecret(project),
    token,
    agentToken: agents,
    host,
    ...(options.actionsPerMinute !== undefined ? { actionsPerMinute: options.actionsPerMinute } : {}),
  });
  await app.listen({ host, port: options.port ?? 0 });
  const port = (app.server.address() as { port: number }).port;
  const url = `http://127.0.0.1:${port}`;
  return {
    project,
    url,
    token,
    services,
    app,
    async call(method, path, body, opts = {}) {
      const auth = opts.token === undefined ? token : opts.token;
      const response = await fetch(`${url}${path}`, {
        method,
        headers: {
          ...(body !== undefined || opts.raw !== undefined ? { "content-type": "application/json" } : {}),
          ...(auth !== null ? { authorization: `Bearer ${auth}` } : {}),
          ...opts.headers,
        },
        ...(opts.raw !== undefined
          ? { body: opts.raw }
          : body !== undefined
            ? { body: JSON.stringify(body) }
            : {}),
      });
      const text = await response.text();
      let json: unknown = null;
      try {
        json = JSON.parse(text);
      } catch {
        // not JSON (metrics)
      }
      return { status: response.status, json, text };
    },
    async close() {
      await app.close();
      await services.store.close();
    },
  };
}

/** A scripted session's events with idempotency keys, ready for POST /api/events. */
export function scripted(
  scope: string,
  script: (t: Timeline) => unknown,
  start = 1_790_000_000_000,
): ReinsEvent[] {
  const t = timeline({ scope, start });
  script(t);
  return t.events.map((e, i) => ({ ...e, id: `${scope}#${i}` }));
}
