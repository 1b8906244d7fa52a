/** The HTTP API under /api: budgets, circuits, alerts, sessions, runs, ingest, decide and the stream. */
import type { FastifyInstance } from "fastify";
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import type { ApiContext } from "./api/api-context.js";
import { registerAlerts } from "./api/alert-routes.js";
import { registerBudgets } from "./api/budget-routes.js";
import { registerCircuits } from "./api/circuit-routes.js";
import { setErrorAnswers } from "./api/error-answers.js";
import { registerIngest } from "./api/ingest-routes.js";
import { registerActionLimit } from "./api/rate-limit.js";
import { registerRuns } from "./api/run-routes.js";
import { scopeViews } from "./api/scope-views.js";
import { registerSessions } from "./api/session-routes.js";
import { registerStream } from "./api/stream-routes.js";

export type { ApiContext } from "./api/api-context.js";
export { MAX_BATCH } from "./api/ingest-routes.js";
export { RUN_BODY_LIMIT } from "./api/run-routes.js";

/**
 * The control-plane API under /api: budgets, breakers, alerts and sessions to look at and act on,
 * batch ingest and decisions for remote hooks, and the live event stream. Authentication is the
 * server's (see server.ts); this adds validation, the rate limit on extend and reset, and error answers.
 */
export async function registerApi(parent: FastifyInstance, ctx: ApiContext): Promise<void> {
  await parent.register(
    async (scoped) => {
      const app = scoped.withTypeProvider<ZodTypeProvider>();
      app.setValidatorCompiler(validatorCompiler);
      app.setSerializerCompiler(serializerCompiler);
      setErrorAnswers(app);
      const limited = await registerActionLimit(app, ctx.actionsPerMinute ?? 10);
      const views = scopeViews(ctx);

      registerBudgets(app, views, limited);
      registerCircuits(app, views, limited);
      registerAlerts(app, ctx);
      registerSessions(app, ctx, views);
      registerIngest(app, ctx);
      await registerRuns(app, ctx);
      registerStream(app, ctx.hub);
    },
    { prefix: "/api" },
  );
}
