/** Every scope's state, read once for the many readers that need them all. */
import type { State } from "../base/core/state.js";
import type { Store } from "../base/core/store.js";

/**
 * Every scope's state, read once for many readers. The list endpoints, the dashboard's overview and
 * /metrics each need a pass over all states, which the store serves on the same event loop as the hooks:
 * a reader on loopback asking again and again must not slow them down. So one pass runs at a time (the
 * readers that ask meanwhile share it), and its result is reused for at least `minIntervalMs`; after that,
 * a write by this server makes the next read pass again, and writes by other processes sharing the store
 * (in-process hooks, the CLI, other machines) show within `maxAgeMs`.
 */
export class StateScan {
  #last: { at: number; states: State[] } | null = null;
  #running: Promise<State[]> | null = null;
  #dirty = true;

  constructor(
    private readonly store: Store,
    private readonly minIntervalMs = 100,
    private readonly maxAgeMs = 1_000,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Marks the states changed (this server wrote); the next read after `minIntervalMs` scans again. */
  invalidate(): void {
    this.#dirty = true;
  }

  /** Every scope's state, most recently active first. The states are shared: read them, never change them. */
  states(): Promise<State[]> {
    if (this.#running !== null) return this.#running;
    const last = this.#last;
    const age = last === null ? Number.POSITIVE_INFINITY : this.clock() - last.at;
    if (last !== null && (age < this.minIntervalMs || (!this.#dirty && age < this.maxAgeMs)))
      return Promise.resolve(last.states);
    this.#dirty = false;
    this.#running = this.#scan().finally(() => (this.#running = null));
    return this.#running;
  }

  async #scan(): Promise<State[]> {
    const states: State[] = [];
    for (const scope of await this.store.scopes()) {
      const state = await this.store.state(scope);
      if (state !== null) states.push(state);
    }
    this.#last = { at: this.clock(), states };
    return states;
  }
}
