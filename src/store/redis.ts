/** The store in Redis (reins/redis), shared by many agents on many machines. */
import type { ChainableCommander, Redis } from "ioredis";
import { applyBatch, scopesFor, type BatchResult, type LogRecord, type StoredAlert } from "../core/batch.js";
import { ReinsError } from "../core/errors.js";
import type { ReinsEvent } from "../core/events.js";
import type { Pipeline } from "../core/pipeline.js";
import type { Policy } from "../core/policy.js";
import type { State } from "../core/state.js";
import type { Store, StoredRun } from "../core/store.js";
import { byRecency, checkRunId, decodeListedRun, decodeRun, encodeRun } from "../core/stored-run.js";
import { acknowledged, acknowledgementsOf, alertScope, filterAlerts } from "./alerts.js";
import { redact } from "./redact.js";

export interface RedisOptions {
  /** Prepended to every key; must not contain `{` or `}` (they would break the hash tags). @default "reins:" */
  keyPrefix?: string;
  /** Lifetime of every key, refreshed on each write to its scope. @default 86400 (24 h) */
  ttlSeconds?: number;
  /** How long `connect` waits for a ready connection before it gives up, ms. @default 500 */
  connectTimeoutMs?: number;
  /**
   * Whether `connect` fails when Redis does not answer within `connectTimeoutMs`. With `false` it returns
   * the store all the same: every call fails with `store_unavailable` until Redis answers, and the client
   * keeps reconnecting in the background. For a long-lived process (the daemon) that must come up while
   * Redis is down, to answer hooks fail-open or fail-closed and spool, rather than not answer at all.
   * @default true
   */
  requireConnection?: boolean;
}

/** How long one command may wait for its answer, ms. */
const COMMAND_TIMEOUT_MS = 2_000;
/** While Redis is unreachable, how often the client tries again in the background, ms. */
const RECONNECT_EVERY_MS = 200;
/** How often an append is retried when concurrent writers keep changing its scopes. */
const MAX_ATTEMPTS = 200;

/**
 * Removes entries of an index (KEYS[1]) whose key (KEYS[i + 1]) has expired; rechecks atomically so an
 * entry written meanwhile stays.
 */
const PRUNE_INDEX = `for i = 1, #ARGV do
  if redis.call('EXISTS', KEYS[i + 1]) == 0 then redis.call('ZREM', KEYS[1], ARGV[i]) end
end
return 0`;

/** ioredis's messages for a command that failed because there is no connection. */
const NOT_CONNECTED =
  /isn't writeable|Connection is closed|max retries per request|aborted due to connection close/i;

type KeyKind = "state" | "log" | "ids" | "alerts";

/** A URL fit for messages: `redact` for redis URLs, and any user info hidden in anything else. */
function safeUrl(url: string): string {
  const redacted = redact(url);
  return redacted !== url ? redacted : url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, "$1***@");
}

/** One line of an error's message. */
function reasonOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ").trim();
}

const USAGE = "use redis://[user:password@]host[:port][/db] or rediss://... (TLS)";

/** Checks a Redis URL before ioredis sees it (ioredis would quietly accept nonsense). */
function parseUrl(url: string): { tls: boolean; password: string } {
  const shown = safeUrl(url);
  const authority = /^([a-z][a-z0-9+.-]*):\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)(?::([^/?#]*))?/i.exec(url);
  if (authority === null) throw new ReinsError("usage", `invalid Redis URL "${shown}": ${USAGE}`);
  const scheme = (authority[1] ?? "").toLowerCase();
  if (scheme !== "redis" && scheme !== "rediss") {
    throw new ReinsError("usage", `unsupported scheme "${scheme}:" in Redis URL "${shown}": ${USAGE}`);
  }
  if ((authority[2] ?? "") === "")
    throw new ReinsError("usage", `Redis URL "${shown}" has no host: ${USAGE}`);
  const port = authority[3];
  if (port !== undefined && (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65_535)) {
    throw new ReinsError(
      "usage",
      `bad port "${port}" in Redis URL "${shown}": a port is a number from 1 to 65535`,
    );
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ReinsError("usage", `invalid Redis URL "${shown}": ${USAGE}`);
  }
  if (parsed.pathname !== "" && parsed.pathname !== "/" && !/^\/\d+$/.test(parsed.pathname)) {
    throw new ReinsError(
      "usage",
      `bad database "${parsed.pathname.slice(1)}" in Redis URL "${shown}": the path is a database number`,
    );
  }
  return { tls: scheme === "rediss", password: decodeURIComponent(parsed.password) };
}

/** The answers of a pipeline, or the first error among them. */
function repliesOf(replies: [Error | null, unknown][] | null): unknown[] {
  if (replies === null) throw new Error("the pipeline was aborted");
  return replies.map(([error, value]) => {
    if (error !== null) throw error;
    return value;
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A store in Redis, for teams and fleets: many agents on many machines share budgets and breakers.
 *
 * Keys, all under the prefix (default `reins:`), with the scope as hash tag so one scope's keys share a
 * Redis Cluster slot:
 * - `<prefix>{<scope>}:state`  the snapshot (JSON string);
 * - `<prefix>{<scope>}:log`    the log, a list of JSON LogRecords; a record's seq is its index;
 * - `<prefix>{<scope>}:ids`    a hash event id → seq, so a redelivered event is applied once;
 * - `<prefix>{<scope>}:alerts` a hash alert id → JSON StoredAlert;
 * - `<prefix>scopes`           a sorted set scope → lastAt, to list scopes. This one key is not in its
 *   scopes' slot: it is only an index, written with ZADD, and pruned of expired scopes when listed.
 * - `<prefix>{run:<id>}:run`   a run of `reins run`: a hash of status, updatedAt, summary and checkpoint
 *   (JSON), rewritten whole by each save;
 * - `<prefix>runs`             a sorted set run id → updatedAt, to list runs; pruned like `scopes`.
 * Every key written gets its TTL (default 24 h) refreshed, and a scope's keys are always refreshed
 * together, so they expire together; a scope that is written again after expiring starts afresh. A run's
 * key too is refreshed only when the run is saved: a run left alone longer than the TTL is gone, and
 * cannot be resumed from Redis.
 *
 * An append is an optimistic transaction: WATCH the state keys of every scope the batch touches (the
 * session and its pools), read them, run `applyBatch`, then MULTI/EXEC all writes; when EXEC answers
 * null (another writer changed a watched key) it starts over, up to MAX_ATTEMPTS times with jittered
 * backoff. WATCH belongs to the connection, so this store's own writes run one at a time. A batch that
 * records a person's acknowledgement of an alert also watches the scope's alerts, and rewrites that alert
 * acknowledged in the same MULTI.
 *
 * Multi-scope transactions work on a single Redis node (and with Sentinel). With Redis Cluster they need
 * every key in one slot: sessions that share a pool would have to carry a hash tag shared with the pool,
 * and the ZADD to the index would have to leave the transaction. Cluster is not supported yet.
 *
 * While Redis is unreachable every call fails at once with `store_unavailable` (no offline queue) and
 * the client keeps reconnecting in the background, so the store comes back by itself.
 */
export class RedisStore implements Store {
  readonly kind = "redis";
  readonly location: string;
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #ttl: number;
  readonly #password: string;
  /** Why the connection last failed, for messages while it is down. */
  #lastError: string | null = null;
  /** Counts closed connections: a transaction whose WATCH was on an earlier connection starts over. */
  #epoch = 0;
  /** The tail of this store's writes, which run one at a time (WATCH is per connection). */
  #tail: Promise<unknown> = Promise.resolve();

  private constructor(redis: Redis, location: string, prefix: string, ttl: number, password: string) {
    this.#redis = redis;
    this.location = location;
    this.#prefix = prefix;
    this.#ttl = ttl;
    this.#password = password;
    redis.on("error", (error: unknown) => {
      const reason = reasonOf(error);
      // Keep the cause (refused, WRONGPASS, ...), not the echo of commands failing because of it.
      if (NOT_CONNECTED.test(reason)) return;
      this.#lastError = /Protocol error/i.test(reason) ? `not a Redis server: ${reason}` : reason;
    });
    redis.on("ready", () => {
      this.#lastError = null;
    });
    redis.on("close", () => {
      this.#epoch++;
    });
  }

  /**
   * Connects to `url` (`redis://[user:password@]host[:port][/db]`, or `rediss://` for TLS). Rejects with
   * `usage` for a malformed URL, and with `store_unavailable` when Redis does not answer within
   * `connectTimeoutMs` or refuses the credentials (unless `requireConnection` is false).
   */
  static async connect(url: string, options: RedisOptions = {}): Promise<RedisStore> {
    const { tls, password } = parseUrl(url);
    const prefix = options.keyPrefix ?? "reins:";
    const ttl = options.ttlSeconds ?? 86_400;
    const connectTimeout = options.connectTimeoutMs ?? 500;
    if (/[{}]/.test(prefix))
      throw new ReinsError("usage", `Redis key prefix "${prefix}" must not contain "{" or "}"`);
    if (!Number.isInteger(ttl) || ttl < 1)
      throw new ReinsError("usage", `Redis TTL must be a whole number of seconds ≥ 1, not ${ttl}`);
    if (!Number.isFinite(connectTimeout) || connectTimeout <= 0) {
      throw new ReinsError(
        "usage",
        `Redis connect timeout must be a positive number of ms, not ${connectTimeout}`,
      );
    }
    // Loaded here, not at the top: ioredis takes tens of ms to load, and the hook command needs it only
    // for a Redis store.
    const { Redis } = await import("ioredis");
    const redis = new Redis(url, {
      lazyConnect: true,
      connectTimeout,
      commandTimeout: COMMAND_TIMEOUT_MS,
      // Fail fast while disconnected rather than queue: the caller fails open (or closed) at once.
      enableOfflineQueue: false,
      // 0, not 1: commands in flight when the connection drops fail at once instead of waiting for a
      // second failed reconnect, and nothing is resent on a new connection (a MULTI resent there would
      // run without its WATCH).
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      retryStrategy: () => RECONNECT_EVERY_MS,
      // After a disconnect, how long a half-closed socket may keep the process alive (default 2 s).
      disconnectTimeout: 200,
      ...(tls ? { tls: {} } : {}),
    });
    const store = new RedisStore(redis, safeUrl(url), prefix, ttl, password);
    const connecting = redis.connect();
    connecting.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${connectTimeout} ms`)), connectTimeout);
    });
    try {
      await Promise.race([connecting, deadline]);
    } catch (error) {
      // Not reached yet: the client goes on reconnecting every RECONNECT_EVERY_MS, and calls fail until then.
      if (options.requireConnection === false) return store;
      redis.disconnect();
      const reason = store.#lastError ?? reasonOf(error);
      throw new ReinsError(
        "store_unavailable",
        store.#scrub(`${store.location}: cannot connect to Redis (${reason})`),
      );
    } finally {
      clearTimeout(timer);
    }
    return store;
  }

  #key(scope: string, kind: KeyKind): string {
    return `${this.#prefix}{${scope}}:${kind}`;
  }

  get #index(): string {
    return `${this.#prefix}scopes`;
  }

  #runKey(id: string): string {
    return `${this.#prefix}{run:${id}}:run`;
  }

  get #runIndex(): string {
    return `${this.#prefix}runs`;
  }

  /** Never lets the password into a message, whatever a server or library echoes. */
  #scrub(message: string): string {
    return this.#password === "" ? message : message.split(this.#password).join("***");
  }

  /**
   * Turns ioredis's errors into one-line ReinsErrors that name the server. The cause is left off on
   * purpose: ioredis errors carry the failed command's arguments, which for AUTH is the password.
   */
  #error(error: unknown): ReinsError {
    if (ReinsError.is(error)) return error;
    let reason = reasonOf(error);
    const lost = this.#lastError === null ? "" : ` (${this.#lastError})`;
    if (NOT_CONNECTED.test(reason)) {
      reason = `not connected to Redis${lost}; reconnecting in the background`;
    } else if (/Command timed out/i.test(reason)) {
      reason = `Redis did not answer within ${COMMAND_TIMEOUT_MS} ms${lost}`;
    }
    return new ReinsError("store_unavailable", this.#scrub(`${this.location}: ${reason}`));
  }

  /** Runs `task` after this store's earlier writes. */
  #serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(task, task);
    this.#tail = run.catch(() => undefined);
    return run;
  }

  /** Queues EXPIRE of every key of `scope`, so they keep expiring together. */
  #expireScope(tx: ChainableCommander, scope: string): void {
    for (const kind of ["state", "log", "ids", "alerts"] as const)
      tx.expire(this.#key(scope, kind), this.#ttl);
  }

  /** Backs off before another attempt, with jitter so competing writers spread out. */
  #backoff(attempt: number): Promise<void> {
    return sleep(Math.random() * Math.min(attempt, 20));
  }

  append(
    scope: string,
    events: readonly ReinsEvent[],
    policy: Policy,
    guards?: Pipeline,
  ): Promise<BatchResult> {
    return this.#serial(async () => {
      try {
        return await this.#append(scope, events, policy, guards);
      } catch (error) {
        await this.#redis.unwatch().catch(() => undefined);
        throw this.#error(error);
      }
    });
  }

  async #append(
    scope: string,
    events: readonly ReinsEvent[],
    policy: Policy,
    guards: Pipeline | undefined,
  ): Promise<BatchResult> {
    const scopes = scopesFor(scope, events, policy);
    const stateKeys = scopes.map((s) => this.#key(s, "state"));
    const ids = [...new Set(events.flatMap((e) => (e.id === undefined ? [] : [e.id])))];
    // Alerts the batch may acknowledge: read, and watched, with the states, to be rewritten acknowledged.
    const alertsKey = this.#key(scope, "alerts");
    const acked = [
      ...new Set(events.flatMap((e) => (e.kind === "human.alert_acknowledged" ? [e.alertId] : []))),
    ];
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const epoch = this.#epoch;
      const read = this.#redis.pipeline().watch(...stateKeys, ...(acked.length > 0 ? [alertsKey] : []));
      for (const key of stateKeys) read.get(key);
      if (ids.length > 0) read.hmget(this.#key(scope, "ids"), ...ids);
      if (acked.length > 0) read.hmget(alertsKey, ...acked);
      const replies = repliesOf(await read.exec());
      const snapshots = new Map(scopes.map((s, i) => [s, replies[i + 1] as string | null]));
      const seenIds = ids.length > 0 ? (replies[scopes.length + 1] as (string | null)[]) : [];
      const seen = new Set(ids.filter((_id, i) => (seenIds[i] ?? null) !== null));
      const ackedAlerts = acked.length > 0 ? (replies.at(-1) as (string | null)[]) : [];
      const storedAlerts = new Map(acked.map((id, i) => [id, ackedAlerts[i] ?? null]));

      const result = applyBatch(
        scope,
        events,
        policy,
        (s) => {
          const snapshot = snapshots.get(s);
          if (snapshot === undefined)
            throw new Error(`scope ${s} was not read before the batch (scopesFor missed it)`);
          return snapshot === null ? null : (JSON.parse(snapshot) as State);
        },
        (s, id) => s === scope && seen.has(id),
        guards,
      );
      if (result.records.length === 0) {
        await this.#redis.unwatch();
        return result;
      }
      // A reconnect drops the WATCH; EXEC on the new connection would not notice a concurrent write.
      if (this.#epoch !== epoch) continue;

      const tx = this.#redis.multi();
      for (const [s, state] of result.states) {
        // A scope new to Redis (or expired) starts with an empty log, so a record's seq is its index.
        if (snapshots.get(s) === null)
          tx.del(this.#key(s, "log"), this.#key(s, "ids"), this.#key(s, "alerts"));
        tx.set(this.#key(s, "state"), JSON.stringify(state));
        tx.zadd(this.#index, state.lastAt ?? 0, s);
      }
      // Grouped by scope, one command each; Maps, so no id can clash with an object's own keys.
      const group = <T>(groups: Map<string, Map<string, T>>, scope: string, key: string, value: T) => {
        const entries = groups.get(scope) ?? new Map<string, T>();
        groups.set(scope, entries.set(key, value));
      };
      const logs = new Map<string, Map<string, string>>();
      const eventIds = new Map<string, Map<string, number>>();
      const alerts = new Map<string, Map<string, string>>();
      for (const r of result.records) {
        group(logs, r.scope, String(r.seq), JSON.stringify(r));
        if (r.event.id !== undefined) group(eventIds, r.scope, r.event.id, r.seq);
      }
      for (const a of result.alerts) group(alerts, a.scope, a.id, JSON.stringify(a));
      for (const ack of acknowledgementsOf(result.records)) {
        const stored = alerts.get(ack.scope)?.get(ack.alertId) ?? storedAlerts.get(ack.alertId) ?? null;
        if (ack.scope !== scope || stored === null) continue;
        const alert = acknowledged(JSON.parse(stored) as StoredAlert, ack.by);
        group(alerts, ack.scope, ack.alertId, JSON.stringify(alert));
      }
      for (const [s, records] of logs) tx.rpush(this.#key(s, "log"), ...records.values());
      for (const [s, map] of eventIds) tx.hset(this.#key(s, "ids"), map);
      for (const [s, map] of alerts) tx.hset(this.#key(s, "alerts"), map);
      for (const s of result.states.keys()) this.#expireScope(tx, s);
      tx.expire(this.#index, this.#ttl);
      const written = await tx.exec();
      if (written === null) {
        await this.#backoff(attempt);
        continue;
      }
      repliesOf(written);
      return result;
    }
    throw new ReinsError(
      "store_unavailable",
      `${this.location}: gave up on ${scope} after ${MAX_ATTEMPTS} attempts: other writers kept changing it`,
    );
  }

  async state(scope: string): Promise<State | null> {
    try {
      const snapshot = await this.#redis.get(this.#key(scope, "state"));
      return snapshot === null ? null : (JSON.parse(snapshot) as State);
    } catch (error) {
      throw this.#error(error);
    }
  }

  async events(scope: string, options: { from?: number; limit?: number } = {}): Promise<LogRecord[]> {
    const from = Math.max(0, options.from ?? 0);
    const limit = options.limit ?? -1;
    if (limit === 0) return [];
    try {
      const rows = await this.#redis.lrange(this.#key(scope, "log"), from, limit < 0 ? -1 : from + limit - 1);
      return rows.map((row) => JSON.parse(row) as LogRecord);
    } catch (error) {
      throw this.#error(error);
    }
  }

  async scopes(): Promise<string[]> {
    try {
      const flat = await this.#redis.zrevrange(this.#index, 0, -1, "WITHSCORES");
      const listed: { scope: string; lastAt: number }[] = [];
      for (let i = 0; i + 1 < flat.length; i += 2)
        listed.push({ scope: flat[i] ?? "", lastAt: Number(flat[i + 1]) });
      if (listed.length === 0) return [];
      const check = this.#redis.pipeline();
      for (const { scope } of listed) check.exists(this.#key(scope, "state"));
      const exists = repliesOf(await check.exec());
      const live = listed.filter((_s, i) => exists[i] === 1);
      const gone = listed.filter((_s, i) => exists[i] !== 1).map((s) => s.scope);
      if (gone.length > 0) {
        await this.#redis.eval(
          PRUNE_INDEX,
          gone.length + 1,
          this.#index,
          ...gone.map((s) => this.#key(s, "state")),
          ...gone,
        );
      }
      return live
        .sort((a, b) => b.lastAt - a.lastAt || (a.scope < b.scope ? -1 : a.scope > b.scope ? 1 : 0))
        .map((s) => s.scope);
    } catch (error) {
      throw this.#error(error);
    }
  }

  async alerts(filter: { scope?: string; acknowledged?: boolean } = {}): Promise<StoredAlert[]> {
    const scopes = filter.scope === undefined ? await this.scopes() : [filter.scope];
    try {
      const read = this.#redis.pipeline();
      for (const scope of scopes) read.hvals(this.#key(scope, "alerts"));
      const replies = scopes.length === 0 ? [] : repliesOf(await read.exec());
      const alerts = replies.flatMap((values) =>
        (values as string[]).map((v) => JSON.parse(v) as StoredAlert),
      );
      return filterAlerts(alerts, filter);
    } catch (error) {
      throw this.#error(error);
    }
  }

  acknowledgeAlert(id: string, by: string): Promise<StoredAlert | null> {
    const scope = alertScope(id);
    if (scope === null) return Promise.resolve(null);
    const key = this.#key(scope, "alerts");
    return this.#serial(async () => {
      try {
        for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
          const epoch = this.#epoch;
          const [, stored] = repliesOf(await this.#redis.pipeline().watch(key).hget(key, id).exec()) as [
            unknown,
            string | null,
          ];
          if (stored === null) {
            await this.#redis.unwatch();
            return null;
          }
          const alert: StoredAlert = {
            ...(JSON.parse(stored) as StoredAlert),
            acknowledged: true,
            acknowledgedBy: by,
          };
          if (this.#epoch !== epoch) continue;
          const tx = this.#redis.multi().hset(key, id, JSON.stringify(alert));
          this.#expireScope(tx, scope);
          const written = await tx.exec();
          if (written === null) {
            await this.#backoff(attempt);
            continue;
          }
          repliesOf(written);
          return alert;
        }
        throw new ReinsError(
          "store_unavailable",
          `${this.location}: gave up acknowledging ${id} after ${MAX_ATTEMPTS} attempts`,
        );
      } catch (error) {
        await this.#redis.unwatch().catch(() => undefined);
        throw this.#error(error);
      }
    });
  }

  async saveRun(run: StoredRun): Promise<void> {
    const { id, status, updatedAt, summary, checkpoint } = encodeRun(run);
    const key = this.#runKey(id);
    // Serial like every write: a MULTI/EXEC between another write's WATCH and its EXEC would clear the WATCH.
    await this.#serial(async () => {
      try {
        const tx = this.#redis
          .multi()
          .hset(key, { status, updatedAt: String(updatedAt), summary, checkpoint })
          .expire(key, this.#ttl)
          .zadd(this.#runIndex, updatedAt, id)
          .expire(this.#runIndex, this.#ttl);
        repliesOf(await tx.exec());
      } catch (error) {
        throw this.#error(error);
      }
    });
  }

  async run(id: string): Promise<StoredRun | null> {
    const key = this.#runKey(checkRunId(id));
    try {
      const [status, updatedAt, summary, checkpoint] = await this.#redis.hmget(
        key,
        "status",
        "updatedAt",
        "summary",
        "checkpoint",
      );
      if (status == null || updatedAt == null || summary == null || checkpoint == null) return null;
      return decodeRun({ id, status, updatedAt: Number(updatedAt), summary, checkpoint });
    } catch (error) {
      throw this.#error(error);
    }
  }

  async runs(): Promise<Omit<StoredRun, "checkpoint">[]> {
    try {
      const ids = await this.#redis.zrange(this.#runIndex, 0, -1);
      if (ids.length === 0) return [];
      const read = this.#redis.pipeline();
      for (const id of ids) read.hmget(this.#runKey(id), "status", "updatedAt", "summary");
      const rows = repliesOf(await read.exec()) as (string | null)[][];
      const live: Omit<StoredRun, "checkpoint">[] = [];
      const gone: string[] = [];
      ids.forEach((id, i) => {
        const [status, updatedAt, summary] = rows[i] ?? [];
        if (status == null || updatedAt == null || summary == null) gone.push(id);
        else live.push(decodeListedRun({ id, status, updatedAt: Number(updatedAt), summary }));
      });
      if (gone.length > 0) {
        await this.#redis.eval(
          PRUNE_INDEX,
          gone.length + 1,
          this.#runIndex,
          ...gone.map((id) => this.#runKey(id)),
          ...gone,
        );
      }
      return live.sort(byRecency);
    } catch (error) {
      throw this.#error(error);
    }
  }

  async close(): Promise<void> {
    if (this.#redis.status === "end") return;
    if (this.#redis.status === "ready") {
      try {
        await this.#redis.quit();
        return;
      } catch {
        // Fall through: drop the connection instead.
      }
    }
    this.#redis.disconnect();
  }
}
