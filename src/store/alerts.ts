import type { StoredAlert } from "../core/batch.js";

/** Alerts matching a filter, newest first (by time, then scope and sequence for a stable order). */
export function filterAlerts(
  alerts: StoredAlert[],
  filter: { scope?: string; acknowledged?: boolean },
): StoredAlert[] {
  return alerts
    .filter(
      (a) =>
        (filter.scope === undefined || a.scope === filter.scope) &&
        (filter.acknowledged === undefined || a.acknowledged === filter.acknowledged),
    )
    .sort((a, b) => b.at - a.at || a.scope.localeCompare(b.scope) || b.seq - a.seq)
    .map((a) => ({ ...a }));
}
