/** The sessions resource: sessions to list and read, with their state and their event log. */
import * as z from "zod";
import type { LogRecord } from "../../base/core/batch.js";
import { noScope } from "../../guard/people/scope-view.js";
import type { ApiApp, ApiContext } from "./api-context.js";
import { idParams, listQuery } from "./request-schemas.js";
import type { ScopeViews } from "./scope-views.js";

const eventsQuery = z.object({
  from: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(1_000).default(200),
});

/** GET /sessions, GET /sessions/:id and GET /sessions/:id/events. */
export function registerSessions(app: ApiApp, ctx: ApiContext, views: ScopeViews): void {
  const { store } = ctx;
  app.get("/sessions", { schema: { querystring: listQuery } }, (request) =>
    views.listed("session:", request.query),
  );
  app.get("/sessions/:id", { schema: { params: idParams } }, async (request) => {
    const state = await store.state(request.params.id);
    if (state === null) throw noScope(request.params.id);
    return { summary: await views.view(request.params.id), state };
  });
  app.get(
    "/sessions/:id/events",
    { schema: { params: idParams, querystring: eventsQuery } },
    async (request) => {
      const { id: scope } = request.params;
      if ((await store.state(scope)) === null) throw noScope(scope);
      const { from, limit } = request.query;
      const items: LogRecord[] = await store.events(scope, { from, limit });
      const last = items.at(-1);
      return { items, next: items.length === limit && last !== undefined ? last.seq + 1 : null };
    },
  );
}
