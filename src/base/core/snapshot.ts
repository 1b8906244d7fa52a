/**
 * Snapshots and log tails: a store writes a scope's whole state only every SNAPSHOT_EVERY events and
 * rebuilds the state after it from the log records that follow, so a decision writes its record and not
 * the state.
 */
import type { LogRecord } from "./batch.js";
import { reapply } from "./engine.js";
import type { Policy } from "./policy.js";
import { initialState, type State } from "./state.js";

/**
 * A scope's state is written whole at most once every this many of its events. The bound on what one
 * decision writes, averaged over any SNAPSHOT_EVERY events of a scope: its log record, plus a
 * SNAPSHOT_EVERY-th of one snapshot (itself under STATE_BOUND_BYTES) and of the policy stored with it.
 */
export const SNAPSHOT_EVERY = 32;

/**
 * Whether a scope left at `seq` needs a new snapshot: its tail since the snapshot at `snapshotSeq` has
 * grown to SNAPSHOT_EVERY records, or it was decided under another policy than the snapshot's (the tail
 * must be replayable under the one policy stored with the snapshot).
 */
export function snapshotDue(seq: number, snapshotSeq: number, samePolicy: boolean): boolean {
  return !samePolicy || seq - snapshotSeq >= SNAPSHOT_EVERY;
}

/**
 * The state of `scope` after `records`, which continue `snapshot` (null: from the scope's start) in
 * order. `policy` is the one the records were decided under. Mutates and returns `snapshot`.
 */
export function rebuild(
  scope: string,
  snapshot: State | null,
  records: Iterable<Pick<LogRecord, "event" | "decision">>,
  policy: Policy,
): State {
  const state = snapshot ?? initialState(scope);
  for (const record of records) reapply(state, record.event, record.decision, policy);
  return state;
}

/**
 * Scopes whose records before their snapshot may be let go (by `reins gc` on SQLite, by trimming on
 * Redis): sessions, tasks and pools are read from their snapshot. Others (`run:`, `spec:`, ...) are read
 * from their first record (approvals, the MCP ledger) and stay whole.
 */
const TRIMMED = ["session:", "task:", "pool:"];

/** Whether `scope`'s log may lose the records before its snapshot (see TRIMMED). */
export function trimmable(scope: string): boolean {
  return TRIMMED.some((prefix) => scope.startsWith(prefix));
}
