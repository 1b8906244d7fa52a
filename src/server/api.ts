/** The HTTP API under /api: budgets, circuits, alerts, sessions, runs, ingest, decide and the stream. */
import { createHash } from "node:crypto";
import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance } from "fastify";
import {
  hasZodFastifySchemaValidationErrors,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from "fastify-type-provider-zod";
import * as z from "zod";
import type { LogRecord } from "../core/batch.js";
import { ReinsError } from "../core/errors.js";
import { eventSchema, scopeText } from "../core/event-schema.js";
import type { ReinsEvent } from "../core/reins-event.js";
import type { Policy } from "../core/policy.js";
import type { State } from "../core/state.js";
import type { Store } from "../core/store.js";
import { MAX_RUN_STATUS, runIdSchema } from "../core/stored-run.js";
import { oneLineText } from "../core/one-line.js";
import type { ScopeSummary } from "../core/summary.js";
import { createGovernor } from "../governor.js";
import { acknowledgeAlert, recordAction, type HumanAction } from "../people/actions.js";
import { currentSummary, noScope } from "../people/scope-view.js";
import type { Spool } from "../store/spool.js";
import { bearerToken } from "./secret.js";
import type { StateScan } from "./scan.js";
import type { EventHub } from "./stream.js";

/** What the API routes work with. */
export interface ApiContext {
  root: string;
  store: Store;
  policy: Policy;
  spool: Spool;
  hub: EventHub;
  /** Every scope's state, read once for many readers (the list endpoints). */
  scan: StateScan;
  /** Extends and resets allowed per token per minute. @default 10 */
  actionsPerMinute?: number;
}

/** Most events one ingest or decide call may carry. */
export const MAX_BATCH = 1_000;

/**
 * Largest body of `PUT /api/runs/:id`, bytes: a checkpoint of the most a store keeps (8 Mi characters
 * of JSON), even when most of them take 3 bytes of UTF-8.
 */
export const RUN_BODY_LIMIT = 32 * 1024 * 1024;

const id = scopeText;
const idParams = z.object({ id });
const by = z.string().trim().min(1).max(256).optional();
const reason = z.string().trim().min(1, "a reason is required").max(2_000);
const page = {
  limit: z.coerce.number().int().min(1).max(1_000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
};
const budgetStatus = z.enum(["active", "warning", "paused", "exhausted"]);
const breakerStatus = z.enum(["closed", "open", "half_open"]);
const bool = z.enum(["true", "false"]).transform((v) => v === "true");
/** A JSON body that may be left out (Fastify gives null then). */
const optionalBody = <T extends z.ZodType>(schema: T) => z.preprocess((v) => v ?? {}, schema);
/**
 * An event an agent or a remote hook may post: anything but a human action. Human actions come only
 * through their own endpoints (extend, reset, acknowledge, confirm), which are limited and record who.
 */
const agentEvent = eventSchema.refine((e) => !e.kind.startsWith("human."), {
  message: "human actions go through their own endpoints (extend, reset, acknowledge), not ingest or decide",
  path: ["kind"],
});
const ingestEvent = agentEvent.and(z.object({ id: z.string().min(1).max(256) }));

const schemas = {
  list: z.object({
    ...page,
    status: budgetStatus.optional(),
    breaker: breakerStatus.optional(),
    q: z.string().max(1024).optional(),
    sort: z.enum(["lastAt", "scope", "tokens", "usd", "utilization", "events"]).default("lastAt"),
    order: z.enum(["asc", "desc"]).default("desc"),
  }),
  extend: z
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
    }),
  reset: z.object({ reason, by }),
  action: optionalBody(z.object({ reason: reason.optional(), by })),
  alerts: z.object({ budget_id: id.optional(), acknowledged: bool.optional(), ...page }),
  events: z.object({
    from: z.coerce.number().int().min(0).default(0),
    limit: z.coerce.number().int().min(1).max(1_000).default(200),
  }),
  ingest: z.object({ events: z.array(ingestEvent).min(1).max(MAX_BATCH) }),
  decide: z.object({
    scope: id,
    events: z.array(agentEvent).min(1).max(MAX_BATCH),
    include_state: z.boolean().default(false),
  }),
  runParams: z.object({ id: runIdSchema }),
  runs: z.object(page),
  // Summary and checkpoint are checked, never copied: a copy would turn a "__proto__" key into a prototype.
  saveRun: z.object({
    status: oneLineText(MAX_RUN_STATUS),
    updatedAt: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    summary: z
      .unknown()
      .refine((v) => typeof v === "object" && v !== null && !Array.isArray(v), "must be a JSON object"),
    checkpoint: z.unknown().refine((v) => v !== undefined, "is required"),
  }),
};

/** A budget's or session's public form: its summary and how many alerts are open. */
type ScopeView = ScopeSummary & { openAlerts: number };

/** A breaker as the API shows it. */
function circuitOf(s: ScopeSummary) {
  return { id: s.scope, agent: s.agent, lastAt: s.lastAt, ...s.breaker };
}

const utilizationOf = (s: ScopeSummary) => Math.max(0, ...s.budget.map((b) => b.ratio));
const usedOf = (s: ScopeSummary, resource: string) =>
  s.budget.find((b) => b.resource === resource)?.used ?? 0;

const SORTS: Record<string, (s: ScopeSummary) => number | string> = {
  lastAt: (s) => s.lastAt ?? 0,
  scope: (s) => s.scope,
  tokens: (s) => usedOf(s, "tokens"),
  usd: (s) => usedOf(s, "usd"),
  utilization: utilizationOf,
  events: (s) => s.events,
};

/** The first issue of a failed validation, as "where.field: message". */
function validationMessage(error: {
  validation: { instancePath: string; message?: string }[];
  validationContext?: string;
}): string {
  const issue = error.validation[0];
  const path = issue?.instancePath.split("/").filter(Boolean).join(".") ?? "";
  const where = [error.validationContext ?? "request", path].filter(Boolean).join(".");
  return `${where}: ${issue?.message ?? "invalid"}`;
}

/** One line, never a stack: what every error answer carries. */
function oneLine(message: string): string {
  return (message.split("\n")[0] ?? "").slice(0, 500);
}

const STATUS_OF: Record<string, number> = {
  not_found: 404,
  conflict: 409,
  store_unavailable: 503,
  invalid_event: 400,
  invalid_policy: 400,
  invalid_trace: 400,
  invalid_log: 400,
  scope_mismatch: 400,
  usage: 400,
  invalid_plan: 400,
};

/**
 * The control-plane API under /api: budgets, breakers, alerts and sessions to look at and act on,
 * batch ingest and decisions for remote hooks, and the live event stream. Authentication is the
 * server's (see server.ts); this adds validation, the rate limit on extend and reset, and error answers.
 */
export async function registerApi(parent: FastifyInstance, ctx: ApiContext): Promise<void> {
  const { store, policy, hub } = ctx;
  await parent.register(
    async (scoped) => {
      const app = scoped.withTypeProvider<ZodTypeProvider>();
      app.setValidatorCompiler(validatorCompiler);
      app.setSerializerCompiler(serializerCompiler);

      app.setErrorHandler((error: unknown, _request, reply) => {
        if (hasZodFastifySchemaValidationErrors(error))
          return reply.code(400).send({ error: "bad_request", message: validationMessage(error) });
        if (ReinsError.is(error))
          return reply
            .code(STATUS_OF[error.code] ?? 500)
            .send({ error: error.code, message: oneLine(error.message) });
        const status = (error as { statusCode?: number }).statusCode;
        const text = (error as { message?: unknown }).message;
        const message = oneLine(typeof text === "string" ? text : String(error));
        if (status !== undefined && status >= 400 && status < 500)
          return reply.code(status).send({ error: status === 429 ? "rate_limited" : "bad_request", message });
        return reply.code(500).send({ error: "internal", message });
      });

      await app.register(rateLimit, {
        global: false,
        max: ctx.actionsPerMinute ?? 10,
        timeWindow: 60_000,
        // Keyed on the token itself, however the header is spelled (the scheme's case, spaces around it).
        keyGenerator: (request) =>
          createHash("sha256")
            .update(bearerToken(request.headers.authorization) ?? `ip:${request.ip}`)
            .digest("hex"),
        errorResponseBuilder: (_request, context) => ({
          statusCode: 429,
          error: "rate_limited",
          message: `at most ${context.max} budget and breaker changes per minute; try again in ${context.after}`,
        }),
      });
      // One shared count for extend and reset (of budgets and breakers), per token.
      const limited = app.rateLimit();

      const now = () => Date.now();
      const openAlerts = async () => {
        const counts = new Map<string, number>();
        for (const a of await store.alerts({ acknowledged: false }))
          counts.set(a.scope, (counts.get(a.scope) ?? 0) + 1);
        return counts;
      };
      const view = async (scope: string): Promise<ScopeView> => {
        const state = await store.state(scope);
        if (state === null) throw noScope(scope);
        const alerts = await store.alerts({ scope, acknowledged: false });
        return { ...currentSummary(state, policy, now()), openAlerts: alerts.length };
      };
      const summaries = async (prefix: string | null): Promise<ScopeSummary[]> => {
        const at = now();
        return (await ctx.scan.states())
          .filter((state) => prefix === null || state.scope.startsWith(prefix))
          .map((state) => currentSummary(state, policy, at));
      };
      const listed = async (prefix: string | null, q: z.infer<typeof schemas.list>) => {
        let items = await summaries(prefix);
        if (q.status !== undefined) items = items.filter((s) => s.status === q.status);
        if (q.breaker !== undefined) items = items.filter((s) => s.breaker.status === q.breaker);
        if (q.q !== undefined && q.q !== "") {
          const needle = q.q.toLowerCase();
          items = items.filter((s) => s.scope.toLowerCase().includes(needle) || s.agent.includes(needle));
        }
        const key = SORTS[q.sort] ?? SORTS.lastAt!;
        const sign = q.order === "asc" ? 1 : -1;
        items.sort((a, b) => {
          const x = key(a);
          const y = key(b);
          return (x < y ? -1 : x > y ? 1 : 0) * sign || a.scope.localeCompare(b.scope);
        });
        const counts = await openAlerts();
        return {
          total: items.length,
          offset: q.offset,
          limit: q.limit,
          items: items
            .slice(q.offset, q.offset + q.limit)
            .map((s) => ({ ...s, openAlerts: counts.get(s.scope) ?? 0 })),
        };
      };
      const act = async (scope: string, action: HumanAction) => {
        await recordAction(store, policy, ctx.root, scope, action, now());
        return view(scope);
      };

      // Budgets: every scope with a budget (sessions and pools).
      app.get("/budgets", { schema: { querystring: schemas.list } }, (request) =>
        listed(null, request.query),
      );
      app.get("/budgets/:id", { schema: { params: idParams } }, (request) => view(request.params.id));
      app.post(
        "/budgets/:id/extend",
        { schema: { params: idParams, body: schemas.extend }, onRequest: limited },
        (request) => {
          const body = request.body;
          const tokens = body.additional_tokens;
          return act(request.params.id, {
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
        { schema: { params: idParams, body: schemas.reset }, onRequest: limited },
        (request) =>
          act(request.params.id, {
            kind: "human.budget_reset",
            by: request.body.by ?? "api",
            reason: request.body.reason,
          }),
      );

      // Circuit breakers: one per session.
      app.get("/circuits", { schema: { querystring: schemas.list } }, async (request) => {
        const page = await listed("session:", request.query);
        return { ...page, items: page.items.map(circuitOf) };
      });
      app.get("/circuits/:id", { schema: { params: idParams } }, async (request) =>
        circuitOf(await view(request.params.id)),
      );
      const breakerAction = async (
        id: string,
        kind: "human.circuit_acknowledged" | "human.circuit_reset",
        body: { reason?: string | undefined; by?: string | undefined },
      ) =>
        circuitOf(
          await act(id, {
            kind,
            by: body.by ?? "api",
            ...(body.reason !== undefined ? { reason: body.reason } : {}),
          }),
        );
      app.post(
        "/circuits/:id/acknowledge",
        { schema: { params: idParams, body: schemas.action } },
        async (request) => {
          const current = await view(request.params.id);
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
        { schema: { params: idParams, body: schemas.action }, onRequest: limited },
        (request) => breakerAction(request.params.id, "human.circuit_reset", request.body),
      );

      // Alerts.
      app.get("/alerts", { schema: { querystring: schemas.alerts } }, async (request) => {
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
          const alert = await acknowledgeAlert(store, policy, ctx.root, request.params.id, who, now());
          if (alert === null) throw new ReinsError("not_found", `no alert "${request.params.id}"`);
          return alert;
        },
      );

      // Sessions and their logs.
      app.get("/sessions", { schema: { querystring: schemas.list } }, (request) =>
        listed("session:", request.query),
      );
      app.get("/sessions/:id", { schema: { params: idParams } }, async (request) => {
        const state = await store.state(request.params.id);
        if (state === null) throw noScope(request.params.id);
        return { summary: await view(request.params.id), state };
      });
      app.get(
        "/sessions/:id/events",
        { schema: { params: idParams, querystring: schemas.events } },
        async (request) => {
          const { id: scope } = request.params;
          if ((await store.state(scope)) === null) throw noScope(scope);
          const { from, limit } = request.query;
          const items: LogRecord[] = await store.events(scope, { from, limit });
          const last = items.at(-1);
          return { items, next: items.length === limit && last !== undefined ? last.seq + 1 : null };
        },
      );

      // Remote hooks: batch ingest and decisions, both idempotent per event id.
      const governor = createGovernor({ store, policy, spool: ctx.spool, onWarning: () => undefined });
      const record = async (scope: string, events: ReinsEvent[]) => {
        const done = await governor.record(scope, events);
        if (done.degraded !== null) throw new ReinsError("store_unavailable", done.degraded);
        return done;
      };
      app.post("/events", { schema: { body: schemas.ingest } }, async (request) => {
        const byScope = new Map<string, ReinsEvent[]>();
        for (const event of request.body.events as ReinsEvent[]) {
          const list = byScope.get(event.scope);
          if (list === undefined) byScope.set(event.scope, [event]);
          else list.push(event);
        }
        let accepted = 0;
        for (const [scope, events] of byScope) {
          const done = await record(scope, events);
          accepted += done.answers.filter((a) => a !== null).length;
        }
        const total = request.body.events.length;
        return { accepted, duplicates: total - accepted, scopes: byScope.size };
      });
      app.post("/decide", { schema: { body: schemas.decide } }, async (request) => {
        const { scope, include_state: withState } = request.body;
        const events = request.body.events as ReinsEvent[];
        const stray = events.find((e) => e.scope !== scope);
        if (stray !== undefined)
          throw new ReinsError(
            "scope_mismatch",
            `body.events: an event for ${stray.scope} in a decision for ${scope}`,
          );
        const done = await record(scope, events);
        const state: State | null = withState ? (done.state ?? (await store.state(scope))) : null;
        return { decisions: done.answers, ...(withState ? { state } : {}) };
      });

      // Runs of `reins run`: their checkpoints, saved by the driver after every step.
      await app.register((plugin, _options, registered) => {
        const runs = plugin.withTypeProvider<ZodTypeProvider>();
        // A checkpoint is data: JSON.parse keeps a "__proto__" key as an own key, where Fastify's parser
        // refuses the whole body. Only these routes parse this way.
        runs.removeContentTypeParser("application/json");
        runs.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
          try {
            done(null, JSON.parse(body as string));
          } catch (error) {
            done(
              Object.assign(new Error(`body: not JSON (${(error as Error).message})`), { statusCode: 400 }),
            );
          }
        });
        runs.get("/runs", { schema: { querystring: schemas.runs } }, async (request) => {
          const { limit, offset } = request.query;
          const all = await store.runs();
          return { total: all.length, offset, limit, items: all.slice(offset, offset + limit) };
        });
        runs.get("/runs/:id", { schema: { params: schemas.runParams } }, async (request) => {
          const run = await store.run(request.params.id);
          if (run === null) throw new ReinsError("not_found", `no run "${request.params.id}" in the store`);
          return run;
        });
        // The people's token only (server.ts): whoever rewrites a checkpoint steers what the run does next.
        runs.put(
          "/runs/:id",
          { schema: { params: schemas.runParams, body: schemas.saveRun }, bodyLimit: RUN_BODY_LIMIT },
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

      // Live: every record this server writes, as server-sent events.
      app.get("/stream", (request, reply) => {
        reply.hijack();
        hub.attach(reply.raw);
        request.raw.on("close", () => reply.raw.end());
      });
    },
    { prefix: "/api" },
  );
}
