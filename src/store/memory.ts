/** The store in this process's memory (reins/memory). */
import { applyBatch, type BatchResult, type LogRecord, type StoredAlert } from "../core/batch.js";
import type { Pipeline } from "../core/pipeline.js";
import type { ReinsEvent } from "../core/events.js";
import type { Policy } from "../core/policy.js";
import type { State } from "../core/state.js";
import type { Store, StoredRun } from "../core/store.js";
import {
  byRecency,
  checkRunId,
  decodeListedRun,
  decodeRun,
  encodeRun,
  type EncodedRun,
} from "../core/stored-run.js";
import { acknowledged, acknowledgementsOf, filterAlerts } from "./alerts.js";

interface Scope {
  snapshot: string;
  log: LogRecord[];
  ids: Set<string>;
  lastAt: number;
}

/**
 * A store in this process's memory: for tests and the library's default. Snapshots are kept as JSON so a
 * caller can never alias the stored state.
 */
export class MemoryStore implements Store {
  readonly kind = "memory";
  readonly location = "memory";
  #scopes = new Map<string, Scope>();
  #alerts = new Map<string, StoredAlert>();
  #runs = new Map<string, EncodedRun>();

  append(
    scope: string,
    events: readonly ReinsEvent[],
    policy: Policy,
    guards?: Pipeline,
  ): Promise<BatchResult> {
    const result = applyBatch(
      scope,
      events,
      policy,
      (s) => {
        const stored = this.#scopes.get(s);
        return stored === undefined ? null : (JSON.parse(stored.snapshot) as State);
      },
      (s, id) => this.#scopes.get(s)?.ids.has(id) ?? false,
      guards,
    );
    for (const [s, state] of result.states) {
      const stored = this.#scopes.get(s) ?? { snapshot: "", log: [], ids: new Set<string>(), lastAt: 0 };
      stored.snapshot = JSON.stringify(state);
      stored.lastAt = state.lastAt ?? 0;
      this.#scopes.set(s, stored);
    }
    for (const record of result.records) {
      const stored = this.#scopes.get(record.scope);
      stored?.log.push(JSON.parse(JSON.stringify(record)) as LogRecord);
      if (record.event.id !== undefined) stored?.ids.add(record.event.id);
    }
    for (const alert of result.alerts) this.#alerts.set(alert.id, alert);
    for (const ack of acknowledgementsOf(result.records)) {
      const alert = this.#alerts.get(ack.alertId);
      if (alert?.scope === ack.scope) this.#alerts.set(alert.id, acknowledged(alert, ack.by));
    }
    return Promise.resolve(result);
  }

  state(scope: string): Promise<State | null> {
    const stored = this.#scopes.get(scope);
    return Promise.resolve(stored === undefined ? null : (JSON.parse(stored.snapshot) as State));
  }

  events(scope: string, options: { from?: number; limit?: number } = {}): Promise<LogRecord[]> {
    const log = this.#scopes.get(scope)?.log ?? [];
    const from = Math.max(0, options.from ?? 0);
    return Promise.resolve(log.slice(from, from + (options.limit ?? log.length)));
  }

  scopes(): Promise<string[]> {
    return Promise.resolve([...this.#scopes].sort((a, b) => b[1].lastAt - a[1].lastAt).map(([s]) => s));
  }

  alerts(filter: { scope?: string; acknowledged?: boolean } = {}): Promise<StoredAlert[]> {
    return Promise.resolve(filterAlerts([...this.#alerts.values()], filter));
  }

  acknowledgeAlert(id: string, by: string): Promise<StoredAlert | null> {
    const alert = this.#alerts.get(id);
    if (alert === undefined) return Promise.resolve(null);
    this.#alerts.set(id, acknowledged(alert, by));
    return Promise.resolve(acknowledged(alert, by));
  }

  saveRun(run: StoredRun): Promise<void> {
    // In an executor, so a run refused is a rejection, as from every store.
    return new Promise((resolve) => {
      const encoded = encodeRun(run);
      this.#runs.set(encoded.id, encoded);
      resolve();
    });
  }

  run(id: string): Promise<StoredRun | null> {
    return new Promise((resolve) => {
      const stored = this.#runs.get(checkRunId(id));
      resolve(stored === undefined ? null : decodeRun(stored));
    });
  }

  runs(): Promise<Omit<StoredRun, "checkpoint">[]> {
    return Promise.resolve([...this.#runs.values()].sort(byRecency).map(decodeListedRun));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
