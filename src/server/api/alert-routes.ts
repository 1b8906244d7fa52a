/** The alerts resource: alerts to list, filtered by budget and acknowledgement, and to acknowledge. */
import * as z from "zod";
import { ReinsError } from "../../base/core/errors.js";
import { acknowledgeAlert } from "../../guard/people/actions.js";
import type { ApiApp, ApiContext } from "./api-context.js";
import { bool, by, id, idParams, optionalBody, page } from "./request-schemas.js";

const alertsQuery = z.object({ budget_id: id.optional(), acknowledged: bool.optional(), ...page });

/** GET /alerts and POST /alerts/:id/acknowledge. */
export function registerAlerts(app: ApiApp, ctx: ApiContext): void {
  const { store, policy } = ctx;
  app.get("/alerts", { schema: { querystring: alertsQuery } }, async (request) => {
    const q = request.query;
    const alerts = await store.alerts({
      ...(q.budget_id !== undefined ? { scope: q.budget_id } : {}),
      ...(q.acknowledged !== undefined ? { acknowledged: q.acknowledged } : {}),
    });
    return {
      total: alerts.length,
      offset: q.offset,
      limit: q.limit,
      items: alerts.slice(q.offset, q.offset + q.limit),
    };
  });
  app.post(
    "/alerts/:id/acknowledge",
    { schema: { params: idParams, body: optionalBody(z.object({ by })) } },
    async (request) => {
      const who = request.body.by ?? "api";
      const alert = await acknowledgeAlert(store, policy, ctx.root, request.params.id, who, Date.now());
      if (alert === null) throw new ReinsError("not_found", `no alert "${request.params.id}"`);
      return alert;
    },
  );
}
