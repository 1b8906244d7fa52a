/** What every store does the same way with alerts: filter and order them, and mark those people acknowledge. */
import type { LogRecord, StoredAlert } from "../core/batch.js";

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

/** The scope of an alert id `<scope>#<seq>#<index>`, or null when it is not one. */
export function alertScope(id: string): string | null {
  return /^(.+)#\d+#\d+$/.exec(id)?.[1] ?? null;
}

/** A person's acknowledgement of one alert of a scope, as a `human.alert_acknowledged` record carries it. */
export interface Acknowledgement {
  scope: string;
  alertId: string;
  by: string;
}

/**
 * The acknowledgements an append recorded, in order. A store marks each of these alerts (when it is one of
 * the record's own scope) in the same transaction as the records, so the alert and the event that
 * acknowledges it are written together; a redelivered event is no record, and marks nothing twice.
 */
export function acknowledgementsOf(records: readonly LogRecord[]): Acknowledgement[] {
  const acks: Acknowledgement[] = [];
  for (const { scope, event } of records)
    if (event.kind === "human.alert_acknowledged") acks.push({ scope, alertId: event.alertId, by: event.by });
  return acks;
}

/** `alert` acknowledged by `by`. */
export function acknowledged(alert: StoredAlert, by: string): StoredAlert {
  return { ...alert, acknowledged: true, acknowledgedBy: by };
}
