/** How the scope resources (budgets, circuits, sessions) read one scope, list many, and act on one. */
import type * as z from "zod";
import type { ScopeSummary } from "../../base/core/summary.js";
import { recordAction, type HumanAction } from "../../guard/people/actions.js";
import { currentSummary, noScope } from "../../guard/people/scope-view.js";
import type { ApiContext } from "./api-context.js";
import type { listQuery } from "./request-schemas.js";

/** A budget's or session's public form: its summary and how many alerts are open. */
export type ScopeView = ScopeSummary & { openAlerts: number };

/** A page of scope views, as the list endpoints answer. */
export interface ScopePage {
  total: number;
  offset: number;
  limit: number;
  items: ScopeView[];
}

/** The readers and the one writer the scope resources share. */
export interface ScopeViews {
  /** One scope's view; not_found if the store has no state for it. */
  view(scope: string): Promise<ScopeView>;
  /** The scopes starting with `prefix` (all for null), filtered, sorted and paged by `q`. */
  listed(prefix: string | null, q: z.infer<typeof listQuery>): Promise<ScopePage>;
  /** Records a person's action on `scope` and answers its view after it. */
  act(scope: string, action: HumanAction): Promise<ScopeView>;
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

/** The scope views over the context's store and policy, at the clock's time of each call. */
export function scopeViews(ctx: ApiContext): ScopeViews {
  const { store, policy } = ctx;
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
  const listed = async (prefix: string | null, q: z.infer<typeof listQuery>) => {
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
  return { view, listed, act };
}
