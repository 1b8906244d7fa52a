/** A stand-in for a store that could not be opened: every call fails with the reason. */
import type { BatchResult, LogRecord, StoredAlert } from "../core/batch.js";
import type { ReinsError } from "../core/errors.js";
import type { State } from "../core/state.js";
import type { Store, StoredRun } from "../core/store.js";

/**
 * A store that could not be opened (Redis refusing or silent, a damaged, foreign or read-only SQLite file,
 * a full disk), standing in for it: every call fails with the error that kept it from opening. A hook
 * records through it like through any store, so the governor's one path applies: the events are spooled,
 * and the answer is allow with a warning, or block when the policy fails closed.
 */
export class UnavailableStore implements Store {
  readonly kind = "unavailable";

  constructor(
    readonly location: string,
    private readonly error: ReinsError,
  ) {}

  append(): Promise<BatchResult> {
    return Promise.reject(this.error);
  }
  state(): Promise<State | null> {
    return Promise.reject(this.error);
  }
  events(): Promise<LogRecord[]> {
    return Promise.reject(this.error);
  }
  scopes(): Promise<string[]> {
    return Promise.reject(this.error);
  }
  alerts(): Promise<StoredAlert[]> {
    return Promise.reject(this.error);
  }
  acknowledgeAlert(): Promise<StoredAlert | null> {
    return Promise.reject(this.error);
  }
  saveRun(): Promise<void> {
    return Promise.reject(this.error);
  }
  run(): Promise<StoredRun | null> {
    return Promise.reject(this.error);
  }
  runs(): Promise<Omit<StoredRun, "checkpoint">[]> {
    return Promise.reject(this.error);
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}
