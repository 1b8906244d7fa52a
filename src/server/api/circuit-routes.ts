/** The circuits resource: one breaker per session, to list, read, acknowledge and reset. */
import { ReinsError } from "../../base/core/errors.js";
import type { ScopeSummary } from "../../base/core/summary.js";
import type { ActionLimit, ApiApp } from "./api-context.js";
import { actionBody, idParams, listQuery } from "./request-schemas.js";
import type { ScopeViews } from "./scope-views.js";

/** A breaker as the API shows it. */
function circuitOf(s: ScopeSummary) {
  return { id: s.scope, agent: s.agent, lastAt: s.lastAt, ...s.breaker };
}

/** GET /circuits, GET /circuits/:id, POST /circuits/:id/acknowledge and the limited /reset. */
export function registerCircuits(app: ApiApp, views: ScopeViews, limited: ActionLimit): void {
  app.get("/circuits", { schema: { querystring: listQuery } }, async (request) => {
    const page = await views.listed("session:", request.query);
    return { ...page, items: page.items.map(circuitOf) };
  });
  app.get("/circuits/:id", { schema: { params: idParams } }, async (request) =>
    circuitOf(await views.view(request.params.id)),
  );
  const breakerAction = async (
    id: string,
    kind: "human.circuit_acknowledged" | "human.circuit_reset",
    body: { reason?: string | undefined; by?: string | undefined },
  ) =>
    circuitOf(
      await views.act(id, {
        kind,
        by: body.by ?? "api",
        ...(body.reason !== undefined ? { reason: body.reason } : {}),
      }),
    );
  app.post(
    "/circuits/:id/acknowledge",
    { schema: { params: idParams, body: actionBody } },
    async (request) => {
      const current = await views.view(request.params.id);
      if (current.breaker.status !== "open")
        throw new ReinsError(
          "conflict",
          `the breaker of ${current.scope} is ${current.breaker.status}, not open: nothing to acknowledge`,
        );
      return breakerAction(request.params.id, "human.circuit_acknowledged", request.body);
    },
  );
  app.post(
    "/circuits/:id/reset",
    { schema: { params: idParams, body: actionBody }, onRequest: limited },
    (request) => breakerAction(request.params.id, "human.circuit_reset", request.body),
  );
}
