/** The store in this process's memory (reins/memory). */
import { applyBatch, policyFor, type BatchResult, type LogRecord, type StoredAlert } from "../core/batch.js";
import type { Pipeline } from "../core/pipeline.js";
import type { ReinsEvent } from "../core/reins-event.js";
import type { Policy } from "../core/policy.js";
import { rebuild, snapshotDue } from "../core/snapshot.js";
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
  /** The state now: changed in place by each append, never cloned on the way. */
  state: State;
  /** A JSON snapshot every SNAPSHOT_EVERY events, with the policy the records after it were decided under. */
  snapshot: string;
  snapshotSeq: number;
  snapshotPolicy: Policy;
  log: LogRecord[];
  ids: Set<string>;
}

/**
 * A store in this process's memory: for tests and the library's default. A scope's state is changed in
 * place by each append (the states in an append's result are the store's own: read them, do not change
 * them). An append that fails part way puts the states it changed back, from their last snapshot and the
 * log after it. Records are kept as copies, so a caller can never alias the log.
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
    // In an executor, so a batch refused is a rejection, as from every store.
    return new Promise((resolve) => resolve(this.#append(scope, events, policy, guards)));
  }

  #append(
    scope: string,
    events: readonly ReinsEvent[],
    policy: Policy,
    guards: Pipeline | undefined,
  ): BatchResult {
    const changed: Scope[] = [];
    let result: BatchResult;
    let records: LogRecord[];
    try {
      result = applyBatch(
        scope,
        events,
        policy,
        (s) => {
          const stored = this.#scopes.get(s);
          if (stored !== undefined) changed.push(stored);
          return stored?.state ?? null;
        },
        (s, id) => this.#scopes.get(s)?.ids.has(id) ?? false,
        guards,
      );
      records = result.records.map((record) => JSON.parse(JSON.stringify(record)) as LogRecord);
    } catch (error) {
      for (const stored of changed) stored.state = this.#rebuilt(stored);
      throw error;
    }
    for (const [s, state] of result.states) {
      const own = policyFor(s, policy);
      const stored = this.#scopes.get(s);
      if (stored === undefined) {
        const snapshot = JSON.stringify(state);
        this.#scopes.set(s, {
          state,
          snapshot,
          snapshotSeq: state.seq,
          snapshotPolicy: own,
          log: [],
          ids: new Set<string>(),
        });
      } else if (snapshotDue(state.seq, stored.snapshotSeq, stored.snapshotPolicy === own)) {
        stored.snapshot = JSON.stringify(state);
        stored.snapshotSeq = state.seq;
        stored.snapshotPolicy = own;
      }
    }
    for (const record of records) {
      const stored = this.#scopes.get(record.scope);
      stored?.log.push(record);
      if (record.event.id !== undefined) stored?.ids.add(record.event.id);
    }
    for (const alert of result.alerts) this.#alerts.set(alert.id, alert);
    for (const ack of acknowledgementsOf(result.records)) {
      const alert = this.#alerts.get(ack.alertId);
      if (alert?.scope === ack.scope) this.#alerts.set(alert.id, acknowledged(alert, ack.by));
    }
    return result;
  }

  /** A scope's state from its snapshot and the records after it: what it was before a failed append. */
  #rebuilt(stored: Scope): State {
    const snapshot = JSON.parse(stored.snapshot) as State;
    return rebuild(snapshot.scope, snapshot, stored.log.slice(stored.snapshotSeq), stored.snapshotPolicy);
  }

  state(scope: string): Promise<State | null> {
    const stored = this.#scopes.get(scope);
    return Promise.resolve(stored === undefined ? null : structuredClone(stored.state));
  }

  events(scope: string, options: { from?: number; limit?: number } = {}): Promise<LogRecord[]> {
    const log = this.#scopes.get(scope)?.log ?? [];
    const from = Math.max(0, options.from ?? 0);
    return Promise.resolve(log.slice(from, from + (options.limit ?? log.length)));
  }

  scopes(): Promise<string[]> {
    const lastAt = (stored: Scope) => stored.state.lastAt ?? 0;
    return Promise.resolve([...this.#scopes].sort((a, b) => lastAt(b[1]) - lastAt(a[1])).map(([s]) => s));
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
