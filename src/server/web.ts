/** The dashboard: its page and assets, and the overview, spend and run views it reads. */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type {} from "@fastify/swagger"; // its `schema.hide`, which keeps these routes out of the OpenAPI document
import type { FastifyInstance, FastifyReply } from "fastify";
import * as z from "zod";
import type { Policy } from "../base/core/policy.js";
import type { ReinsEvent } from "../base/core/reins-event.js";
import type { Store } from "../base/core/store.js";
import { runIdSchema } from "../base/core/stored-run.js";
import { spendSince, tallyTokens } from "../base/core/spend.js";
import { scopeSummary } from "../base/core/summary.js";
import { currentSummary } from "../guard/people/scope-view.js";
import { runView } from "./run-view.js";
import type { StateScan } from "./scan.js";

/** Where `vite build` puts the dashboard: `dist/web`, the same path from `src/server` and `dist/server`. */
export const WEB_ROOT = fileURLToPath(new URL("../../dist/web/", import.meta.url));

/** Most sessions one spend request may ask for, and most points per series it answers. */
export const SPEND_SCOPES = 20;
export const SPEND_POINTS = 200;
/** Most log records read per scope per spend request; a longer log is caught up over later requests. */
const SPEND_READ = 5_000;
/** Most scopes whose spend series are cached. */
const SPEND_CACHE = 2_000;

/** The page's rules: only its own scripts run, whatever text an agent wrote into the data it shows. */
export const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

/** The figures of the dashboard's summary cards. */
export interface Overview {
  /** Sessions in the store, and those not ended that had an event since `since`. */
  sessions: { total: number; active: number };
  budgets: Record<"active" | "warning" | "paused" | "exhausted", number>;
  breakers: Record<"closed" | "half_open" | "open", number>;
  /** Budget-counted tokens and USD spent since `since` (whole sessions when they started since then). */
  spend: { since: number; tokens: number; usd: number };
  alerts: { open: number };
}

/** One session's cumulative spend: `[at, tokens, usd]`, oldest first. */
export interface SpendSeries {
  scope: string;
  points: [number, number, number][];
}

const overviewQuery = z.object({ since: z.coerce.number().int().min(0).optional() });
const spendQuery = z.object({
  scope: z.union([
    z.string().min(1).max(1024),
    z.array(z.string().min(1).max(1024)).min(1).max(SPEND_SCOPES),
  ]),
});
const runParams = z.object({ id: runIdSchema });

function badRequest(reply: FastifyReply, error: z.ZodError, part = "querystring") {
  const issue = error.issues[0];
  const where = [part, ...(issue?.path ?? []).map(String)].join(".");
  return reply.code(400).send({ error: "bad_request", message: `${where}: ${issue?.message ?? "invalid"}` });
}

/** Keeps the first and last point and evenly spaced ones between, at most `max` in all. */
function thin<T>(points: T[], max: number): T[] {
  if (points.length <= max) return points;
  const out: T[] = [];
  const step = (points.length - 1) / (max - 1);
  for (let i = 0; i < max; i++) out.push(points[Math.round(i * step)]!);
  return out;
}

/** Tokens of one usage event as the budget counts them. */
function usageTokens(e: Extract<ReinsEvent, { kind: "usage.recorded" }>, policy: Policy): number {
  return (
    (e.inputTokens ?? 0) +
    (e.outputTokens ?? 0) +
    (e.cacheWriteTokens ?? 0) +
    (policy.budget.countCacheReads ? (e.cacheReadTokens ?? 0) : 0)
  );
}

/** A scope's spend series as far as it has been read: the next seq to read and the totals there. */
interface SpendEntry {
  next: number;
  tokens: number;
  usd: number;
  points: [number, number, number][];
}

/** Cumulative spend per scope, read from the log once and then only from where it left off. */
class SpendCache {
  readonly #series = new Map<string, SpendEntry>();

  constructor(
    private readonly store: Store,
    private readonly policy: Policy,
  ) {}

  /**
   * Where a scope's series starts: at zero, or, when `reins gc` removed the start of its log, at the spend
   * before its first kept record (the state's tally less what the kept records add), so the points of the
   * kept period are the ones they were.
   */
  async #start(scope: string): Promise<SpendEntry> {
    const entry: SpendEntry = { next: 0, tokens: 0, usd: 0, points: [] };
    const first = (await this.store.events(scope, { limit: 1 }))[0]?.seq ?? 0;
    const state = first === 0 ? null : await this.store.state(scope);
    if (state === null) return entry;
    let tokens = tallyTokens(state, this.policy);
    let usd = state.tally?.usd ?? 0;
    for (let from = first; from < state.seq;) {
      const page = await this.store.events(scope, { from, limit: Math.min(SPEND_READ, state.seq - from) });
      if (page.length === 0) break;
      for (const r of page)
        if (r.event.kind === "usage.recorded") {
          tokens -= usageTokens(r.event, this.policy);
          usd -= r.event.costUsd ?? 0;
        }
      from = page[page.length - 1]!.seq + 1;
    }
    return {
      ...entry,
      next: first,
      tokens: Math.max(0, tokens),
      usd: Math.max(0, Math.round(usd * 1e9) / 1e9),
    };
  }

  async series(scope: string): Promise<SpendSeries> {
    const entry = this.#series.get(scope) ?? (await this.#start(scope));
    this.#series.delete(scope); // re-inserted below: the map's order is least recently used first
    const records = await this.store.events(scope, { from: entry.next, limit: SPEND_READ });
    for (const r of records) {
      entry.next = r.seq + 1;
      const e = r.event;
      if (e.kind !== "usage.recorded") continue;
      entry.tokens += usageTokens(e, this.policy);
      entry.usd = Math.round((entry.usd + (e.costUsd ?? 0)) * 1e9) / 1e9;
      entry.points.push([e.at, entry.tokens, entry.usd]);
    }
    // Kept at twice the answer's size, so thinning never loses the shape by much.
    if (entry.points.length > SPEND_POINTS * 4) entry.points = thin(entry.points, SPEND_POINTS * 2);
    this.#series.set(scope, entry);
    if (this.#series.size > SPEND_CACHE) this.#series.delete(this.#series.keys().next().value!);
    return { scope, points: thin(entry.points, SPEND_POINTS) };
  }
}

/**
 * The dashboard: the web app built into `dist/web`, served at `/` (its files are public; its data comes
 * from the API, which keeps its own rules), plus three bounded read-only endpoints it needs that the API
 * does not have: `GET /api/overview` (the summary cards, one pass over the scopes' states),
 * `GET /api/spend?scope=…` (cumulative token spend over time of up to 20 sessions) and
 * `GET /api/runs/:id/view` (a run's tree, checks, pause and done proof, see run-view.ts).
 */
export async function registerWeb(
  app: FastifyInstance,
  ctx: { store: Store; scan: StateScan; policy: Policy; root?: string },
): Promise<void> {
  const { store, scan, policy } = ctx;
  const root = ctx.root ?? WEB_ROOT;
  const spend = new SpendCache(store, policy);

  app.get("/api/overview", { schema: { hide: true } }, async (request, reply) => {
    const query = overviewQuery.safeParse(request.query);
    if (!query.success) return badRequest(reply, query.error);
    const now = Date.now();
    const since = query.data.since ?? now - 24 * 3_600_000;
    const out: Overview = {
      sessions: { total: 0, active: 0 },
      budgets: { active: 0, warning: 0, paused: 0, exhausted: 0 },
      breakers: { closed: 0, half_open: 0, open: 0 },
      spend: { since, tokens: 0, usd: 0 },
      alerts: { open: (await store.alerts({ acknowledged: false })).length },
    };
    for (const state of await scan.states()) {
      const summary = scopeSummary(state, policy, now);
      out.budgets[summary.status] += 1;
      if (!state.scope.startsWith("session:")) continue;
      out.sessions.total += 1;
      if (!state.ended && state.lastAt !== null && state.lastAt >= since) out.sessions.active += 1;
      out.breakers[summary.breaker.status] += 1;
      const spent = spendSince(state, policy, since);
      out.spend.tokens += spent.tokens;
      out.spend.usd = Math.round((out.spend.usd + spent.usd) * 1e9) / 1e9;
    }
    return out;
  });

  app.get("/api/spend", { schema: { hide: true } }, async (request, reply) => {
    const query = spendQuery.safeParse(request.query);
    if (!query.success) return badRequest(reply, query.error);
    const scopes = [...new Set(typeof query.data.scope === "string" ? [query.data.scope] : query.data.scope)];
    const series: SpendSeries[] = [];
    for (const scope of scopes) series.push(await spend.series(scope));
    return { series };
  });

  app.get("/api/runs/:id/view", { schema: { hide: true } }, async (request, reply) => {
    const params = runParams.safeParse(request.params);
    if (!params.success) return badRequest(reply, params.error, "params");
    const { id } = params.data;
    const run = await store.run(id);
    if (run === null)
      return reply.code(404).send({ error: "not_found", message: `no run "${id}" in the store` });
    // The run's guard scope says what holds it now (a paused budget, an open breaker): what a person acts on.
    const guard = await store.state(`run:${id}`);
    return runView(run, guard === null ? null : currentSummary(guard, policy, Date.now()));
  });

  if (!existsSync(root)) {
    app.get("/", { schema: { hide: true } }, (_request, reply) =>
      reply
        .type("text/plain; charset=utf-8")
        .send("The reins dashboard is not built: run `npm run build` (it writes dist/web).\n"),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root,
    // Its own cache-control off: setHeaders sets it (@fastify/static 9 would write max-age=0 over it).
    cacheControl: false,
    prefix: "/",
    index: ["index.html"],
    preCompressed: true,
    schemaHide: true,
    setHeaders(reply, path) {
      // Hashed file names never change content; the page itself is always checked again.
      const hashed = path.includes("/assets/");
      reply.setHeader("cache-control", hashed ? "public, max-age=31536000, immutable" : "no-cache");
      reply.setHeader("x-content-type-options", "nosniff");
      if (/\.html(\.gz|\.br)?$/.test(path)) {
        reply.setHeader("content-security-policy", CSP);
        reply.setHeader("referrer-policy", "no-referrer");
      }
    },
  });
}
