/** Remote hooks' resource: batch ingest and decisions, both idempotent per event id. */
import * as z from "zod";
import { ReinsError } from "../../base/core/errors.js";
import { eventSchema } from "../../base/core/event-schema.js";
import type { ReinsEvent } from "../../base/core/reins-event.js";
import type { State } from "../../base/core/state.js";
import { createGovernor } from "../../guard/governor.js";
import type { ApiApp, ApiContext } from "./api-context.js";
import { id } from "./request-schemas.js";

/** Most events one ingest or decide call may carry. */
export const MAX_BATCH = 1_000;

/**
 * An event an agent or a remote hook may post: anything but a human action. Human actions come only
 * through their own endpoints (extend, reset, acknowledge, confirm), which are limited and record who.
 */
const agentEvent = eventSchema.refine((e) => !e.kind.startsWith("human."), {
  message: "human actions go through their own endpoints (extend, reset, acknowledge), not ingest or decide",
  path: ["kind"],
});
const ingestEvent = agentEvent.and(z.object({ id: z.string().min(1).max(256) }));

const ingestBody = z.object({ events: z.array(ingestEvent).min(1).max(MAX_BATCH) });
const decideBody = z.object({
  scope: id,
  events: z.array(agentEvent).min(1).max(MAX_BATCH),
  include_state: z.boolean().default(false),
});

/** POST /events (a batch over many scopes) and POST /decide (one scope's events and their decisions). */
export function registerIngest(app: ApiApp, ctx: ApiContext): void {
  const { store, policy } = ctx;
  const governor = createGovernor({ store, policy, spool: ctx.spool, onWarning: () => undefined });
  const record = async (scope: string, events: ReinsEvent[]) => {
    const done = await governor.record(scope, events);
    if (done.degraded !== null) throw new ReinsError("store_unavailable", done.degraded);
    return done;
  };
  app.post("/events", { schema: { body: ingestBody } }, async (request) => {
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
  app.post("/decide", { schema: { body: decideBody } }, async (request) => {
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
}
