/** The runs resource: the checkpoints of `reins run`, saved by the driver after every step. */
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import * as z from "zod";
import { ReinsError } from "../../base/core/errors.js";
import { MAX_RUN_STATUS, runIdSchema } from "../../base/core/stored-run.js";
import { oneLineText } from "../../base/core/one-line.js";
import type { ApiApp, ApiContext } from "./api-context.js";
import { page } from "./request-schemas.js";

/**
 * Largest body of `PUT /api/runs/:id`, bytes: a checkpoint of the most a store keeps (8 Mi characters
 * of JSON), even when most of them take 3 bytes of UTF-8.
 */
export const RUN_BODY_LIMIT = 32 * 1024 * 1024;

const runParams = z.object({ id: runIdSchema });
const runsQuery = z.object(page);
// Summary and checkpoint are checked, never copied: a copy would turn a "__proto__" key into a prototype.
const saveRunBody = z.object({
  status: oneLineText(MAX_RUN_STATUS),
  updatedAt: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  summary: z
    .unknown()
    .refine((v) => typeof v === "object" && v !== null && !Array.isArray(v), "must be a JSON object"),
  checkpoint: z.unknown().refine((v) => v !== undefined, "is required"),
});

/** GET /runs, GET /runs/:id and PUT /runs/:id, in a plugin of their own that parses JSON as data. */
export async function registerRuns(app: ApiApp, ctx: ApiContext): Promise<void> {
  const { store } = ctx;
  await app.register((plugin: FastifyInstance, _options, registered) => {
    const runs = plugin.withTypeProvider<ZodTypeProvider>();
    // A checkpoint is data: JSON.parse keeps a "__proto__" key as an own key, where Fastify's parser
    // refuses the whole body. Only these routes parse this way.
    runs.removeContentTypeParser("application/json");
    runs.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
      try {
        done(null, JSON.parse(body as string));
      } catch (error) {
        done(Object.assign(new Error(`body: not JSON (${(error as Error).message})`), { statusCode: 400 }));
      }
    });
    runs.get("/runs", { schema: { querystring: runsQuery } }, async (request) => {
      const { limit, offset } = request.query;
      const all = await store.runs();
      return { total: all.length, offset, limit, items: all.slice(offset, offset + limit) };
    });
    runs.get("/runs/:id", { schema: { params: runParams } }, async (request) => {
      const run = await store.run(request.params.id);
      if (run === null) throw new ReinsError("not_found", `no run "${request.params.id}" in the store`);
      return run;
    });
    // The people's token only (server.ts): whoever rewrites a checkpoint steers what the run does next.
    runs.put(
      "/runs/:id",
      { schema: { params: runParams, body: saveRunBody }, bodyLimit: RUN_BODY_LIMIT },
      async (request) => {
        const { status, updatedAt, summary, checkpoint } = request.body;
        const id = request.params.id;
        await store.saveRun({
          id,
          status,
          updatedAt,
          summary: summary as Record<string, unknown>,
          checkpoint,
        });
        return { id, status, updatedAt };
      },
    );
    registered();
  });
}
