/** The Store port every store implements (memory, SQLite, Redis, remote), and the run record it keeps. */
import type { BatchResult, StoredAlert } from "./batch.js";
import type { LogRecord } from "./batch.js";
import type { ReinsEvent } from "./reins-event.js";
import type { Pipeline } from "./pipeline.js";
import type { Policy } from "./policy.js";
import type { State } from "./state.js";

/** A run of `reins run` as the store keeps it: a small summary for lists, and the checkpoint to resume from. */
export interface StoredRun {
  id: string; // one-line text, ≤ 128 chars, [A-Za-z0-9_.:-]
  /** `running`, `proven`, `ended`, `paused`... free text the driver sets. */
  status: string;
  updatedAt: number; // epoch ms, set by the caller
  /** Plain JSON shown in lists (plan name, task counts, tokens); small. */
  summary: Record<string, unknown>;
  /** Plain JSON the driver resumes from (the run's state); may be up to a few MB. */
  checkpoint: unknown;
}

/** How much a store holds: scopes, log records (events with their decisions) and bytes (null: not known cheaply). */
export interface StoreUsage {
  scopes: number;
  records: number;
  bytes: number | null;
}

/**
 * The port every store implements (memory, SQLite, Redis) and one contract suite checks. The core
 * declares it; the shell's adapters in `src/base/store/` carry it out.
 */
export interface Store {
  /** `memory`, `sqlite` or `redis`. */
  readonly kind: string;
  /** Where the store lives, for messages: a file path or a URL without its password. */
  readonly location: string;
  /**
   * Atomically loads the snapshots of `scope` and the pools it charges, runs the engine on `events`
   * (skipping ids already applied), and writes the events, decisions, alerts and new snapshots together.
   * `guards` decide the scope's events (@default the built-in ones: `defaultGuards`).
   */
  append(
    scope: string,
    events: readonly ReinsEvent[],
    policy: Policy,
    guards?: Pipeline,
  ): Promise<BatchResult>;
  /** A scope's current state, or null when it has none. */
  state(scope: string): Promise<State | null>;
  /** A scope's log from sequence number `from` (inclusive), at most `limit` records. */
  events(scope: string, options?: { from?: number; limit?: number }): Promise<LogRecord[]>;
  /** Every scope with a state, most recently active first. */
  scopes(): Promise<string[]>;
  /** Alerts, newest first, optionally of one scope and by acknowledgement. */
  alerts(filter?: { scope?: string; acknowledged?: boolean }): Promise<StoredAlert[]>;
  /** Marks an alert acknowledged; returns it, or null when there is no such alert. */
  acknowledgeAlert(id: string, by: string): Promise<StoredAlert | null>;
  /** Saves a run's checkpoint, replacing the previous one atomically (a reader sees the old or the new, whole). */
  saveRun(run: StoredRun): Promise<void>;
  /** A run's last checkpoint, or null when there is none. */
  run(id: string): Promise<StoredRun | null>;
  /** Every run, most recently updated first, without checkpoints. */
  runs(): Promise<Omit<StoredRun, "checkpoint">[]>;
  /**
   * How long, ms, the store remembers an event id (absent: as long as it keeps the scope). A redelivery
   * older than this could be counted twice, so the spool does not make one.
   */
  readonly exactlyOnceMs?: number;
  /**
   * Who the store's data is: an id drawn when its file was made, so a store replaced (a new file, another
   * file put in its place) is told from the one reins wrote. Asked at a turn's start, never on a tool call;
   * absent (or null) where the store keeps none.
   */
  identity?(): Promise<string | null>;
  /** How much the store holds, counted when asked (never on the hot path); absent where it cannot say. */
  usage?(): Promise<StoreUsage>;
  /** Releases connections and file handles. */
  close(): Promise<void>;
}
