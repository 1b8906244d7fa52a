/**
 * The scope states a store keeps in memory, bounded per store and, in a long-lived process (the hook
 * daemon), across all its stores together: past the process's limit the state written longest ago, in
 * whichever store, is let go. A state let go is only a cache miss: the store rebuilds it from its snapshot
 * and the log after it, as it does for a scope another process wrote, so no decision changes.
 */

/** The process's limits, set once by a long-lived process before it opens stores. */
const limits = { states: Number.POSITIVE_INFINITY, pageCacheKib: null as number | null };

/** The entries of every cache of this process, least recently written first: key → its cache. */
const everyEntry = new Map<string, StateCache<unknown>>();
let caches = 0;

/**
 * Bounds the memory of the stores this process opens from now on: at most `states` scope states kept in
 * memory across all of them (Infinity: each store's own bound only), and SQLite's page cache of each
 * connection to `pageCacheKib` KiB (null: SQLite's default, about 2 MB).
 */
export function boundStoreMemory(options: { states?: number; pageCacheKib?: number | null }): void {
  if (options.states !== undefined) limits.states = Math.max(1, Math.floor(options.states));
  if (options.pageCacheKib !== undefined) limits.pageCacheKib = options.pageCacheKib;
  trimAll();
}

/** The page cache a SQLite store of this process sets (`PRAGMA cache_size = -<KiB>`), or null for SQLite's. */
export function pageCacheKib(): number | null {
  return limits.pageCacheKib;
}

/** How many states every cache of this process keeps now. */
export function cachedStates(): number {
  return everyEntry.size;
}

function trimAll(): void {
  while (everyEntry.size > limits.states) {
    const [key, cache] = everyEntry.entries().next().value!;
    cache.forget(key);
  }
}

/** One store's states by scope, most recently written last, at most `limit` of them. */
export class StateCache<V> {
  readonly #limit: number;
  readonly #byScope = new Map<string, V>();
  readonly #prefix = `${(caches += 1)}\n`;

  constructor(limit: number) {
    this.#limit = limit;
  }

  get size(): number {
    return this.#byScope.size;
  }

  get(scope: string): V | undefined {
    return this.#byScope.get(scope);
  }

  has(scope: string): boolean {
    return this.#byScope.has(scope);
  }

  /** Keeps `value` as the most recently written; the oldest go past this cache's or the process's limit. */
  set(scope: string, value: V): void {
    const key = this.#prefix + scope;
    this.#byScope.delete(scope);
    this.#byScope.set(scope, value);
    while (this.#byScope.size > this.#limit) this.delete(this.#byScope.keys().next().value!);
    // Unbounded (a hook process, the server): no order across stores to keep.
    if (limits.states === Number.POSITIVE_INFINITY) return;
    everyEntry.delete(key);
    everyEntry.set(key, this);
    trimAll();
  }

  delete(scope: string): void {
    if (this.#byScope.delete(scope)) everyEntry.delete(this.#prefix + scope);
  }

  /** Lets every state go (a store that closes, or whose file gc changed). */
  clear(): void {
    for (const scope of this.#byScope.keys()) everyEntry.delete(this.#prefix + scope);
    this.#byScope.clear();
  }

  /** Lets go of the entry `key` of the process's order (the process's limit was passed). */
  forget(key: string): void {
    this.delete(key.slice(this.#prefix.length));
  }
}
