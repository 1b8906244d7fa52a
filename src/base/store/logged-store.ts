/** What the SQLite and Redis stores share: the states they keep, when a snapshot is due, rebuilding, counts. */
import type { BatchResult, LogRecord } from "../core/batch.js";
import type { Pipeline } from "../core/pipeline.js";
import type { Policy } from "../core/policy.js";
import type { ReinsEvent } from "../core/reins-event.js";
import { rebuild, snapshotDue } from "../core/snapshot.js";
import type { State } from "../core/state.js";
import { storedPolicy, tailPolicy } from "./snapshots.js";
import { StateCache } from "./state-cache.js";

/** States kept in memory by one store, most recently written last. */
export const STATE_CACHE = 1_024;

/** A scope's state as a store last wrote or read it, with the snapshot the store holds for it. */
export interface Cached {
  state: State;
  /** Seq of the scope's stored snapshot (-1: none, Redis's old layout), and the fingerprint of its policy. */
  snapshotSeq: number;
  policyId: string | null;
}

/** What a store has written since it opened: log records, snapshots, and the bytes of both, as stored. */
export interface WriteCounts {
  records: number;
  snapshots: number;
  bytes: number;
}

/** One append, as `Store.append` was called with it. */
export interface Batch {
  scope: string;
  events: readonly ReinsEvent[];
  policy: Policy;
  guards: Pipeline | undefined;
}

/** A snapshot to write: the state's JSON, the policy kept beside it (JSON null: the one stored already). */
export interface Snapshot {
  json: string;
  policyId: string;
  policyJson: string | null;
  /** The bytes of both JSONs, as a store counts what it wrote. */
  bytes: number;
}

/** The stored form of a snapshot's policy: its fingerprint and its JSON, either absent. */
export interface KeptPolicy {
  id: string | null;
  json: string | null;
}

/**
 * What a scope's write stores beside its log records: a snapshot when one is due (the scope is new, its tail
 * has grown to SNAPSHOT_EVERY records, or `policy` is not the one stored with its snapshot), and the state
 * with the snapshot the store holds once the write is in.
 */
export function nextSnapshot(
  scope: string,
  state: State,
  before: Cached | null,
  policy: Policy,
): { snapshot: Snapshot | null; cached: Cached } {
  const stored = storedPolicy(scope, policy);
  const samePolicy = before?.policyId === stored.id;
  if (before !== null && !snapshotDue(state.seq, before.snapshotSeq, samePolicy))
    return { snapshot: null, cached: { ...before, state } };
  const json = JSON.stringify(state);
  const policyJson = samePolicy ? null : stored.json;
  const bytes = json.length + (policyJson?.length ?? 0);
  return {
    snapshot: { json, policyId: stored.id, policyJson, bytes },
    cached: { state, snapshotSeq: state.seq, policyId: stored.id },
  };
}

/**
 * The state after a stored snapshot and the log records that follow it, replayed under the policy kept with
 * the snapshot: `policy`'s own when the fingerprints match, else the kept one (`policy` null, a read: the
 * kept one always). Mutates and returns `snapshot`.
 */
export function rebuilt(
  scope: string,
  snapshot: State,
  records: readonly Pick<LogRecord, "event" | "decision">[],
  policy: Policy | null,
  kept: KeptPolicy,
): State {
  if (records.length === 0) return snapshot;
  const under =
    policy === null
      ? (JSON.parse(kept.json ?? "null") as Policy)
      : tailPolicy(scope, policy, kept.id, kept.json);
  return rebuild(scope, snapshot, records, under);
}

/**
 * The base of the stores that keep a log with snapshots (SQLite, Redis): the port's append handed on as a
 * Batch, the states the store last wrote or read (so an append whose scope is still at that version decides
 * on them instead of reading and parsing the snapshot again), and what it has written. A backend keeps
 * only its own: how it reads and writes, atomically, what this decides.
 */
export abstract class LoggedStore<C extends Cached> {
  /**
   * The states this store last wrote or read, by scope, bounded (state-cache.ts). A backend uses one only
   * while what it holds is still at its seq: another process's write moves the seq on.
   */
  protected readonly cache = new StateCache<C>(STATE_CACHE);
  readonly #writes: WriteCounts = { records: 0, snapshots: 0, bytes: 0 };

  append(
    scope: string,
    events: readonly ReinsEvent[],
    policy: Policy,
    guards?: Pipeline,
  ): Promise<BatchResult> {
    return this.appendBatch({ scope, events, policy, guards });
  }

  /** The backend's append: the batch decided and written atomically, or rejected with a store error. */
  protected abstract appendBatch(batch: Batch): Promise<BatchResult>;

  /** What this store has written since it opened (log records, snapshots and their bytes as stored or sent). */
  get writes(): Readonly<WriteCounts> {
    return { ...this.#writes };
  }

  /** Counts what one write stored, once the backend holds it. */
  protected counted(records: number, snapshots: number, bytes: number): void {
    this.#writes.records += records;
    this.#writes.snapshots += snapshots;
    this.#writes.bytes += bytes;
  }

  /**
   * A scope's state taken out of the cache for an append: the engine changes it in place, so it goes back
   * (`cache.set`) only once the backend holds what it became.
   */
  protected taken(scope: string): C | undefined {
    const cached = this.cache.get(scope);
    this.cache.delete(scope);
    return cached;
  }
}
