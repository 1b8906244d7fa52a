/** The budgets resource: every scope with a budget (sessions and pools), to list, read, extend and reset. */
import * as z from "zod";
import type { ActionLimit, ApiApp } from "./api-context.js";
import { by, idParams, listQuery, reason } from "./request-schemas.js";
import type { ScopeViews } from "./scope-views.js";

const extendBody = z
  .object({
    additional_tokens: z.number().int().min(1).max(1_000_000).optional(),
    additional_usd: z.number().positive().max(1_000_000).optional(),
    reason,
    by,
    meter: z.enum(["session", "task"]).default("session"),
  })
  .superRefine((body, ctx) => {
    if ((body.additional_tokens === undefined) === (body.additional_usd === undefined))
      ctx.addIssue({
        code: "custom",
        path: ["additional_tokens"],
        message: "give exactly one of additional_tokens or additional_usd",
      });
  });
const resetBody = z.object({ reason, by });

/** GET /budgets, GET /budgets/:id, and the limited POST /budgets/:id/extend and /reset. */
export function registerBudgets(app: ApiApp, views: ScopeViews, limited: ActionLimit): void {
  app.get("/budgets", { schema: { querystring: listQuery } }, (request) => views.listed(null, request.query));
  app.get("/budgets/:id", { schema: { params: idParams } }, (request) => views.view(request.params.id));
  app.post(
    "/budgets/:id/extend",
    { schema: { params: idParams, body: extendBody }, onRequest: limited },
    (request) => {
      const body = request.body;
      const tokens = body.additional_tokens;
      return views.act(request.params.id, {
        kind: "human.budget_extended",
        resource: tokens !== undefined ? "tokens" : "usd",
        amount: tokens ?? body.additional_usd ?? 0,
        meter: body.meter,
        by: body.by ?? "api",
        reason: body.reason,
      });
    },
  );
  app.post(
    "/budgets/:id/reset",
    { schema: { params: idParams, body: resetBody }, onRequest: limited },
    (request) =>
      views.act(request.params.id, {
        kind: "human.budget_reset",
        by: request.body.by ?? "api",
        reason: request.body.reason,
      }),
  );
}
