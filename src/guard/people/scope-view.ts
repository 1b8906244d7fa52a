/** What people are shown of a stored scope: its summary now, under its own policy (a pool's or the project's). */
import { policyFor } from "../../base/core/batch.js";
import { ReinsError } from "../../base/core/errors.js";
import type { Policy } from "../../base/core/policy.js";
import type { State } from "../../base/core/state.js";
import type { Store } from "../../base/core/store.js";
import { scopeSummary, type ScopeSummary } from "../../base/core/summary.js";

export { policyFor };

/** The error for a scope the store does not have. */
export function noScope(scope: string): ReinsError {
  return new ReinsError("not_found", `no scope "${scope}" in the store (see \`reins sessions\`)`);
}

/** A scope's summary now (wall-time budgets measured at `now`). */
export function currentSummary(state: State, policy: Policy, now: number): ScopeSummary {
  return scopeSummary(state, policyFor(state.scope, policy), Math.max(state.lastAt ?? 0, now));
}

/** A stored scope's summary; throws not_found when the store has no such scope. */
export async function storedSummary(
  store: Store,
  scope: string,
  policy: Policy,
  now: number,
): Promise<ScopeSummary> {
  const state = await store.state(scope);
  if (state === null) throw noScope(scope);
  return currentSummary(state, policy, now);
}
