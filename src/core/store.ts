import type { BatchResult, StoredAlert } from "./batch.js";
import type { LogRecord } from "./batch.js";
import type { ReinsEvent } from "./events.js";
import type { Policy } from "./policy.js";
import type { State } from "./state.js";

/**
 * The port every store implements (memory, SQLite, Redis) and one contract suite checks. The core
 * declares it; the shell's adapters in `src/store/` carry it out.
 */
export interface Store {
  /** `memory`, `sqlite` or `redis`. */
  readonly kind: string;
  /** Where the store lives, for messages: a file path or a URL without its password. */
  readonly location: string;
  /**
   * Atomically loads the snapshots of `scope` and the pools it charges, runs the engine on `events`
   * (skipping ids already applied), and writes the events, decisions, alerts and new snapshots together.
   */
  append(scope: string, events: readonly ReinsEvent[], policy: Policy): Promise<BatchResult>;
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
  /** Releases connections and file handles. */
  close(): Promise<void>;
}
