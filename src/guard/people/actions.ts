/**
 * What people do to stored state, shared by the CLI and the HTTP API: a human action (extend, reset,
 * acknowledge, confirm, approve) recorded as one event with who and why, through the governor and its spool.
 */
import { join } from "node:path";
import type { StoredAlert } from "../../base/core/batch.js";
import { ReinsError } from "../../base/core/errors.js";
import type { EventInput } from "../../base/core/reins-event.js";
import type { Policy } from "../../base/core/policy.js";
import type { State } from "../../base/core/state.js";
import type { Store } from "../../base/core/store.js";
import { createGovernor } from "../governor.js";
import { acknowledged, alertScope } from "../../base/store/alerts.js";
import { Spool } from "../../base/store/spool.js";
import { noScope } from "./scope-view.js";

/** A human action, without the time and scope it gets when recorded. */
export type HumanAction = EventInput & { kind: `human.${string}` };

/**
 * Records a human action on an existing scope through the governor (the spool keeps it if the store
 * drops mid-way) and returns the scope's state after it. Throws not_found for an unknown scope (unless
 * `options.create`: an approval is the first event of its spec's scope) and store_unavailable when the
 * action could only be spooled.
 */
export async function recordAction(
  store: Store,
  policy: Policy,
  root: string,
  scope: string,
  action: HumanAction,
  now: number,
  options: { create?: boolean } = {},
): Promise<State> {
  if (options.create !== true && (await store.state(scope)) === null) throw noScope(scope);
  const governor = createGovernor({
    store,
    policy,
    spool: new Spool(join(root, ".reins", "spool")),
    onWarning: () => undefined,
  });
  const { degraded, state } = await governor.record(scope, [{ ...action, at: now, scope }]);
  if (degraded !== null || state === null)
    throw new ReinsError(
      "store_unavailable",
      "the action was spooled and will be applied when the store is back",
    );
  return state;
}

/**
 * Acknowledges an alert as one human action, `human.alert_acknowledged` in the alert's scope, recorded like
 * every other (the store marks the alert acknowledged in the same append; the spool keeps the event if the
 * store drops mid-way, and the alert is marked when it is delivered). Returns the alert as acknowledged, or
 * null when the store has no such alert; throws store_unavailable when the action could only be spooled.
 */
export async function acknowledgeAlert(
  store: Store,
  policy: Policy,
  root: string,
  id: string,
  by: string,
  now: number,
): Promise<StoredAlert | null> {
  const scope = alertScope(id);
  const alert = scope === null ? undefined : (await store.alerts({ scope })).find((a) => a.id === id);
  if (alert === undefined) return null;
  await recordAction(
    store,
    policy,
    root,
    alert.scope,
    { kind: "human.alert_acknowledged", alertId: id, by },
    now,
  );
  return acknowledged(alert, by);
}
