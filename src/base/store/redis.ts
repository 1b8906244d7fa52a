/** The store in Redis (reins/redis), shared by many agents on many machines. */
import { createHash } from "node:crypto";
import type { Cluster, Redis } from "ioredis";
import {
  applyBatch,
  chargeKey,
  chargeSources,
  policyFor,
  scopesFor,
  type BatchResult,
  type LogRecord,
  type StoredAlert,
} from "../core/batch.js";
import type { Decision } from "../core/decision.js";
import { ReinsError } from "../core/errors.js";
import type { ReinsEvent } from "../core/reins-event.js";
import type { Policy } from "../core/policy.js";
import { rebuild, trimmable } from "../core/snapshot.js";
import { cloneState, type State } from "../core/state.js";
import type { Store, StoredRun, StoreUsage } from "../core/store.js";
import { byRecency, checkRunId, decodeListedRun, decodeRun, encodeRun } from "../core/stored-run.js";
import { acknowledged, acknowledgementsOf, alertScope, filterAlerts } from "./alerts.js";
import { decisionOf } from "../core/decision.js";
import { LoggedStore, nextSnapshot, rebuilt, STATE_CACHE, type Batch, type Cached } from "./logged-store.js";
import { ACKNOWLEDGE, APPEND, DROP, PRUNE, RANGE, READ, SCOPE_KEYS } from "./redis-scripts.js";
import { parseRedisUrl, safeUrl } from "./redis-url.js";
import { storedPolicy } from "./snapshots.js";

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
  /**
   * Whether a session's, task's or pool's log lets go of the records before its snapshot's predecessor: a
   * new snapshot trims the log to the one it replaces, so a scope holds one snapshot and the last one to
   * two SNAPSHOT_EVERY periods of records (for the dashboard, and to answer a redelivered pool charge),
   * however long it is written. `false` keeps every record while the scope lives. @default true
   */
  trim?: boolean;
  /**
   * How long, at least, an event id is remembered so a redelivery is counted once, in seconds: ids are kept
   * in two generations, each this long, so an id lives between one and two of them. A spool does not
   * deliver a batch older than this (it sets it aside). @default ttlSeconds
   */
  idsWindowSeconds?: number;
  /** The clock that ages the generations of ids, epoch ms (for tests). @default Date.now */
  now?: () => number;
  /**
   * For tests: called on Redis Cluster at each step of an append that charges pools (`read`: before one
   * scope is read, the others being read meanwhile; `pool`: after one pool is charged; `session`: after
   * the session is written, before its pools' fields are dropped). A throw stops the append there, as a
   * process dying there would; a promise holds it there.
   */
  onStep?: (step: "read" | "pool" | "session", scope: string) => void | Promise<void>;
}

/** How long one command may wait for its answer, ms. */
const COMMAND_TIMEOUT_MS = 2_000;
/** While Redis is unreachable, how often the client tries again in the background, ms. */
const RECONNECT_EVERY_MS = 200;
/**
 * The field a pool keeps a session's event under on Redis Cluster: the first 64 bits of the SHA-1 of
 * its chargeKey, in base64url (11 characters, never a newline, so never an old layout's field). Among
 * n charges kept at once, two share a field with probability about n^2 / 2^65: 1e-9 at 200,000.
 */
export function chargeField(scope: string, id: string): string {
  return createHash("sha1").update(chargeKey(scope, id)).digest().subarray(0, 8).toString("base64url");
}

/**
 * The field of a pool's ids that holds its fence for `session` on Redis Cluster (see DROP in
 * redis-scripts.ts): a newline, then the session, so never a chargeField nor an old layout's field.
 */
export function fenceField(session: string): string {
  return `\n${session}`;
}

/** How often an append is retried when concurrent writers keep changing its scopes. */
const MAX_ATTEMPTS = 200;

/** ioredis's messages for a command that failed because there is no connection. */
const NOT_CONNECTED =
  /isn't writeable|Connection is closed|max retries per request|aborted due to connection close|Cluster isn't ready|None of startup nodes/i;

type KeyKind = (typeof SCOPE_KEYS)[number];

/** The scripts, as ioredis `defineCommand` adds them (EVALSHA, loaded again on NOSCRIPT). */
interface Scripts {
  reinsAppend(keys: number, ...args: (string | number)[]): Promise<[number, number?, string?]>;
  reinsRead(keys: number, ...args: (string | number)[]): Promise<ReadReply>;
  reinsAcknowledge(keys: number, ...args: (string | number)[]): Promise<number>;
  reinsPrune(keys: number, ...args: (string | number)[]): Promise<number>;
  reinsRange(keys: number, ...args: (string | number)[]): Promise<string[]>;
  reinsDrop(keys: number, ...args: (string | number)[]): Promise<number>;
}

/** What `READ` answers; see redis-scripts.ts. */
type ReadReply =
  | [0]
  | [1, number, (string | null)[], string]
  | [2, number, (string | null)[], string, number, string, string | null, string[], string]
  | [3, number, (string | null)[], string, string]
  | [4, number, (string | null)[], number, string[], string];

/** A scope's state as this store last wrote or read it, with the snapshot Redis holds for it. */
interface RedisCached extends Cached {
  /** The scope's lifetime (its snapshot hash's `born`), "" when it has none yet. */
  born: string;
}

/** A scope as an append finds it: its state (null when absent), and what its pool ids recorded. */
interface Head {
  cached: RedisCached | null;
  /** For each id field asked about, the record it was applied as, or null. */
  found: (string | null)[];
}

/** What an append knows of its batch's event ids, over all its attempts. */
interface KnownIds {
  /** The batch's event ids, each once. */
  ids: string[];
  /** The batch's events by id. */
  byId: Map<string, ReinsEvent>;
  /** The fields its pools are read for, to find their charges of `ids` (see #chargeFields). */
  poolFields: string[];
  /** The ids the session already holds. */
  seen: Set<string>;
  /** Pool charges already recorded (by this append on Cluster, or by an earlier delivery): pool → event → decision. */
  charged: Map<string, Map<ReinsEvent, Decision>>;
}

/** One line of an error's message. */
function reasonOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ").trim();
}

/** Notes that `pool` recorded `decision` for its charge of `event` (see ChargedPool in base/core/batch.ts). */
function noteCharge(
  charged: Map<string, Map<ReinsEvent, Decision>>,
  pool: string,
  event: ReinsEvent,
  decision: Decision,
): void {
  const decisions = charged.get(pool) ?? new Map<ReinsEvent, Decision>();
  charged.set(pool, decisions.set(event, decision));
}

/** Whether a run with this status can still be resumed (see `newestUnfinished`). */
const resumable = (status: string) => status === "running" || status === "paused";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A store in Redis, for teams and fleets: many agents on many machines share budgets and breakers. One
 * server (`redis://`, `rediss://`) or a Redis Cluster (`redis+cluster://host:port,host:port`).
 *
 * Keys, all under the prefix (default `reins:`), with the scope as hash tag so one scope's keys share a
 * Redis Cluster slot (the prefix stays outside the tag, as it always was, so old keys share it too):
 * - `<prefix>{<scope>}:snap`   a hash: the state as of every SNAPSHOT_EVERY-th event (`state`, `seq`),
 *   the policy the records after it were decided under (`pid` fingerprint, `policy` JSON), how many
 *   records were trimmed from the log's head (`base`), when the current ids began (`idsAt`, ms), and
 *   the scope's lifetime (`born`: the writer's clock when it was first written with a snapshot);
 * - `<prefix>{<scope>}:log`    the log, a list of JSON LogRecords; a record's seq is `base` plus its
 *   index, so `base` plus the log's length is the scope's version. A session's, task's or pool's log
 *   keeps only the records after the snapshot before its last one (`trim`); runs and specs keep all;
 * - `<prefix>{<scope>}:ids`    a hash event id → seq, so a redelivered event is applied once. On Redis
 *   Cluster a pool's holds, for each session event it was charged with and the session does not yet
 *   hold (as far as the pool knows), the chargeField (8 bytes of the SHA-1 of `<session>\n<id>`; the old
 *   layout's `<session>\n<id>` itself is still looked up until it ages out), and per session its fence
 *   (fenceField → `<born>\n<version>`, see DROP); on one server a pool keeps none, since its charge is
 *   written in the same script as the session's id, which that script checks. Once it is
 *   `idsWindowSeconds` old it becomes `:ids0`, replacing the generation before, so an id is kept one to
 *   two windows;
 * - `<prefix>{<scope>}:alerts` a hash alert id → JSON StoredAlert;
 * - `<prefix>{<scope>}:state`  the old layout (the whole state, rewritten by every decision): still read,
 *   and replaced by a snapshot on the scope's next write;
 * - `<prefix>scopes`           a sorted set scope → lastAt, to list scopes. Not in its scopes' slot: it is
 *   only an index, pruned of expired scopes when listed.
 * - `<prefix>{run:<id>}:run`   a run of `reins run`: a hash of status, updatedAt, summary and checkpoint
 *   (JSON), rewritten whole by each save (one HSET). It has no TTL while the run is `running` or
 *   `paused` (it can be resumed), and the TTL once it has ended;
 * - `<prefix>runs`             a sorted set run id → updatedAt, to list runs; no TTL (it lists runs
 *   that have none), pruned of expired runs when listed.
 * Every other key written gets its TTL (default 24 h) refreshed, and a scope's keys are always refreshed
 * together, so they expire together; a scope that is written again after expiring starts afresh.
 *
 * An append keeps each scope's state in memory with its version (its seq: `base` plus the log's length).
 * In the common case it is one round trip: the engine decides on the cached states, and one `APPEND`
 * script checks every scope is still at that version, RPUSHes the records, writes a snapshot when
 * `snapshotDue` (trimming the log to the one before), and refreshes TTLs and the index, atomically. When another process wrote meanwhile, the script writes
 * nothing and says so; the append reads the snapshot and the tail after it (`READ`, one round trip),
 * rebuilds the state under the policy stored with the snapshot, decides again and retries. For a scope
 * that conflicted before (another process writes it too) it keeps a copy from before each decision, and
 * `READ` then answers only the records written since, replayed on the copy. Appends of this process to
 * the same scopes wait for each other, so they never conflict among themselves.
 *
 * Pools: on one server the session and its pools are written by the same script call. On Cluster, one
 * script cannot reach two scopes (two slots). The session is read (the ids it holds, at version v), then
 * each pool is charged in its own atomic step that records the charge's field (so a retry never charges
 * it twice) and refuses it when the pool's fence for the session is past v; then the session is written.
 * Once it holds the events, the pools' fields of their charges are dropped and each pool's fence moves up
 * to the session's new version, in one step (in the background). So a charge is refused by its field from
 * its pool step until the drop, and from the drop on by the fence to any writer that read the session
 * before it held the event, while any writer that read it after sees the id there. A process that dies
 * between the pool's step and the session's leaves the pool charged and the session not; the event's
 * redelivery (the spool) finds the field and charges the session alone. One that dies before the drop
 * leaves a field that ages out. An event without id is charged again if it is redelivered. A session
 * without a lifetime yet (new, or written by an older reins) is charged without fence and its fields are
 * kept; its first write gives it one.
 *
 * While Redis is unreachable every call fails at once with `store_unavailable` (no offline queue) and
 * the client keeps reconnecting in the background, so the store comes back by itself.
 */
export class RedisStore extends LoggedStore<RedisCached> implements Store {
  readonly kind = "redis";
  readonly location: string;
  readonly #redis: Redis | Cluster;
  readonly #scripts: Scripts;
  readonly #cluster: boolean;
  readonly #prefix: string;
  readonly #ttl: number;
  readonly #password: string;
  readonly #trim: boolean;
  /** How long an event id is kept at least, ms. */
  readonly #idsWindowMs: number;
  readonly #now: () => number;
  readonly #onStep: RedisOptions["onStep"];
  /** Drops of confirmed pool charges in flight (Cluster), awaited by `close`. */
  readonly #drops = new Set<Promise<unknown>>();
  /** Why the connection last failed, for messages while it is down. */
  #lastError: string | null = null;
  /** The last append of this process to each scope in flight: appends to one scope run in turn. */
  readonly #chains = new Map<string, Promise<unknown>>();
  /** Scopes whose last append here met another process's write: copied before each decision. */
  readonly #contended = new Set<string>();

  private constructor(
    redis: Redis | Cluster,
    cluster: boolean,
    location: string,
    prefix: string,
    ttl: number,
    password: string,
    options: RedisOptions,
  ) {
    super();
    this.#redis = redis;
    this.#cluster = cluster;
    this.location = location;
    this.#prefix = prefix;
    this.#ttl = ttl;
    this.#password = password;
    this.#trim = options.trim ?? true;
    this.#idsWindowMs = (options.idsWindowSeconds ?? ttl) * 1000;
    this.#now = options.now ?? Date.now;
    this.#onStep = options.onStep;
    redis.defineCommand("reinsAppend", { lua: APPEND });
    redis.defineCommand("reinsRead", { lua: READ });
    redis.defineCommand("reinsAcknowledge", { lua: ACKNOWLEDGE });
    redis.defineCommand("reinsPrune", { lua: PRUNE });
    redis.defineCommand("reinsRange", { lua: RANGE });
    redis.defineCommand("reinsDrop", { lua: DROP });
    this.#scripts = redis as unknown as Scripts;
    redis.on("error", (error: unknown) => {
      const reason = reasonOf(error);
      // Keep the cause (refused, WRONGPASS, ...), not the echo of commands failing because of it.
      if (NOT_CONNECTED.test(reason)) return;
      this.#lastError = /Protocol error/i.test(reason) ? `not a Redis server: ${reason}` : reason;
    });
    redis.on("ready", () => {
      this.#lastError = null;
    });
  }

  /**
   * Connects to `url`: `redis://[user:password@]host[:port][/db]` (`rediss://` for TLS), or a Redis
   * Cluster `redis+cluster://[user:password@]host:port[,host:port...]` (`rediss+cluster://`). Rejects with
   * `usage` for a malformed URL, and with `store_unavailable` when Redis does not answer within
   * `connectTimeoutMs` or refuses the credentials (unless `requireConnection` is false).
   */
  static async connect(url: string, options: RedisOptions = {}): Promise<RedisStore> {
    const target = parseRedisUrl(url);
    const prefix = options.keyPrefix ?? "reins:";
    const ttl = options.ttlSeconds ?? 86_400;
    const connectTimeout = options.connectTimeoutMs ?? 500;
    if (/[{}]/.test(prefix))
      throw new ReinsError("usage", `Redis key prefix "${prefix}" must not contain "{" or "}"`);
    if (!Number.isInteger(ttl) || ttl < 1)
      throw new ReinsError("usage", `Redis TTL must be a whole number of seconds ≥ 1, not ${ttl}`);
    const window = options.idsWindowSeconds ?? ttl;
    if (!Number.isInteger(window) || window < 1)
      throw new ReinsError("usage", `Redis ids window must be a whole number of seconds ≥ 1, not ${window}`);
    if (!Number.isFinite(connectTimeout) || connectTimeout <= 0) {
      throw new ReinsError(
        "usage",
        `Redis connect timeout must be a positive number of ms, not ${connectTimeout}`,
      );
    }
    // Loaded here, not at the top: ioredis takes tens of ms to load, and the hook command needs it only
    // for a Redis store.
    const { Redis, Cluster } = await import("ioredis");
    const connection = {
      connectTimeout,
      commandTimeout: COMMAND_TIMEOUT_MS,
      // 0, not 1: commands in flight when the connection drops fail at once instead of waiting for a
      // second failed reconnect, and nothing is resent on a new connection (an append resent there
      // could have run already, and would find its own event applied).
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      // After a disconnect, how long a half-closed socket may keep the process alive (default 2 s).
      disconnectTimeout: 200,
      ...(target.tls ? { tls: {} } : {}),
    };
    const redis = target.cluster
      ? new Cluster(target.nodes, {
          lazyConnect: true,
          // Reads go to the masters: a replica may not have the write this process just made.
          scaleReads: "master",
          // No auto-pipelining: ioredis would group a script call by its first argument (the count of
          // keys), not its first key, and send it to the wrong node's pipeline.
          enableOfflineQueue: false,
          clusterRetryStrategy: () => RECONNECT_EVERY_MS,
          redisOptions: {
            ...connection,
            ...(target.username !== "" ? { username: target.username } : {}),
            ...(target.password !== "" ? { password: target.password } : {}),
          },
        })
      : new Redis(target.url, {
          ...connection,
          lazyConnect: true,
          // No auto-pipelining: an append is one command whose answer the next one waits for, so there
          // is nothing to batch, and measured with 8 clients it cost about 30 µs of CPU per decision.
          // Fail fast while disconnected rather than queue: the caller fails open (or closed) at once.
          enableOfflineQueue: false,
          retryStrategy: () => RECONNECT_EVERY_MS,
        });
    const trim = options.trim ?? target.trim;
    const store = new RedisStore(redis, target.cluster, safeUrl(url), prefix, ttl, target.password, {
      ...options,
      ...(trim === undefined ? {} : { trim }),
    });
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

  #keys(scope: string): string[] {
    return SCOPE_KEYS.map((kind) => this.#key(scope, kind));
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

  /** Runs `task` after this process's appends in flight to any of `scopes`. */
  #inTurn<T>(scopes: readonly string[], task: () => Promise<T>): Promise<T> {
    const before = scopes.flatMap((s) => {
      const chain = this.#chains.get(s);
      return chain === undefined ? [] : [chain];
    });
    const run = before.length === 0 ? task() : Promise.allSettled(before).then(task);
    const settled = run.catch(() => undefined);
    for (const s of scopes) this.#chains.set(s, settled);
    void settled.then(() => {
      for (const s of scopes) if (this.#chains.get(s) === settled) this.#chains.delete(s);
    });
    return run;
  }

  /** How long, ms, this store remembers an event id: a redelivery older than this could count twice. */
  get exactlyOnceMs(): number {
    return this.#idsWindowMs;
  }

  protected appendBatch(batch: Batch): Promise<BatchResult> {
    let scopes: string[];
    try {
      scopes = scopesFor(batch.scope, batch.events, batch.policy);
    } catch (error) {
      return Promise.reject(this.#error(error));
    }
    return this.#inTurn(scopes, async () => {
      try {
        return await this.#append(batch, scopes);
      } catch (error) {
        throw this.#error(error);
      }
    });
  }

  /**
   * Reads a scope for an append: absent, or its state rebuilt from the snapshot and the tail after it
   * under the policy stored with the snapshot; and, for each of `fields`, the record its id was applied as.
   */
  async #read(
    scope: string,
    policy: Policy | null,
    fields: readonly string[],
    copy?: RedisCached,
  ): Promise<Head> {
    const id = policy === null ? "" : storedPolicy(scope, policy).id;
    const known = copy?.state.seq ?? -1;
    const reply = await this.#scripts.reinsRead(
      SCOPE_KEYS.length,
      ...this.#keys(scope),
      known,
      id,
      ...fields,
    );
    if (reply[0] === 0) return { cached: null, found: fields.map(() => null) };
    const found = reply[2];
    const born = String(reply.at(-1) ?? "");
    if (copy !== undefined && policy !== null && (reply[0] === 1 || reply[0] === 4)) {
      // The copy is brought up to date with the records written since, decided under this policy.
      const tail = reply[0] === 4 ? reply[4].map((row) => JSON.parse(row) as LogRecord) : [];
      const state = rebuild(scope, copy.state, tail, policyFor(scope, policy));
      const snapshotSeq = reply[0] === 4 ? reply[3] : copy.snapshotSeq;
      const policyId = reply[0] === 4 ? id : copy.policyId;
      return { cached: { state, snapshotSeq, policyId, born }, found };
    }
    if (reply[0] === 3) {
      const state = JSON.parse(reply[3]) as State;
      return { cached: { state, snapshotSeq: -1, policyId: null, born }, found };
    }
    if (reply[0] !== 2) throw new Error(`unexpected answer from the read script: ${reply[0]}`);
    const [, , , json, snapshotSeq, policyId, policyJson, tail] = reply;
    const records = tail.map((row) => JSON.parse(row) as LogRecord);
    const state = rebuilt(scope, JSON.parse(json) as State, records, policy, {
      id: policyId,
      json: policyJson,
    });
    return { cached: { state, snapshotSeq, policyId: policyId === "" ? null : policyId, born }, found };
  }

  /** Alerts the batch may acknowledge, read once (alerts never change but for their acknowledgement): id → JSON. */
  async #storedAlerts(scope: string, events: readonly ReinsEvent[]): Promise<Map<string, string | null>> {
    const acked = [
      ...new Set(events.flatMap((e) => (e.kind === "human.alert_acknowledged" ? [e.alertId] : []))),
    ];
    const storedAlerts = new Map<string, string | null>();
    if (acked.length > 0) {
      const values = await this.#redis.hmget(this.#key(scope, "alerts"), ...acked);
      acked.forEach((id, i) => storedAlerts.set(id, values[i] ?? null));
    }
    return storedAlerts;
  }

  /**
   * Reads the `missing` scopes of an append (`copies`: states to bring up to date instead), noting in
   * `known` the ids the session already holds and the charges its pools recorded. With `confirm` (Cluster,
   * pools charged before the session) each read is a step (`onStep`).
   */
  async #readHeads(
    { scope, policy }: Batch,
    missing: readonly string[],
    known: KnownIds,
    copies: ReadonlyMap<string, RedisCached>,
    confirm: boolean,
  ): Promise<[string, RedisCached | null][]> {
    const { ids, byId, poolFields, seen, charged } = known;
    const read = await Promise.all(
      missing.map(async (s) => {
        if (confirm) await this.#onStep?.("read", s);
        return this.#read(s, policy, s === scope ? ids : poolFields, copies.get(s));
      }),
    );
    return read.map((head, i) => {
      const s = missing[i]!;
      head.found.forEach((record, j) => {
        if (record === null) return;
        if (s === scope) return seen.add(ids[j]!);
        const event = byId.get(ids[j % ids.length]!);
        // "": charged, its record trimmed since; its decision, no longer known, adds nothing to the answer.
        const decision = record === "" ? decisionOf(-1, []) : (JSON.parse(record) as LogRecord).decision;
        if (event !== undefined) noteCharge(charged, s, event, decision);
      });
      return [s, head.cached];
    });
  }

  async #append(batch: Batch, scopes: readonly string[]): Promise<BatchResult> {
    const { scope, events, policy, guards } = batch;
    const ids = [...new Set(events.flatMap((e) => (e.id === undefined ? [] : [e.id])))];
    const known: KnownIds = {
      ids,
      poolFields: this.#chargeFields(scope, ids),
      byId: new Map(events.flatMap((e) => (e.id === undefined ? [] : [[e.id, e] as const]))),
      seen: new Set<string>(),
      charged: new Map<string, Map<ReinsEvent, Decision>>(),
    };
    const { seen, charged } = known;
    const storedAlerts = await this.#storedAlerts(scope, events);
    const copies = new Map<string, RedisCached>();
    // On Cluster a pool is charged before the session is written: the session is read on every attempt,
    // so the ids it already holds are known as of the version the pools' charges are decided on (see DROP).
    const confirm = this.#cluster && ids.length > 0 && scopes.length > 1;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const now = this.#now();
      // The states, this store's own copies when it has them: taken out of the cache, since the engine
      // changes them in place; they go back only once Redis holds what they became.
      const heads = new Map<string, RedisCached | null>();
      const missing: string[] = [];
      for (const s of scopes) {
        const cached = this.taken(s);
        if (cached !== undefined && confirm && s === scope && !copies.has(s)) copies.set(s, cached);
        if (cached === undefined || (confirm && s === scope)) missing.push(s);
        else heads.set(s, cached);
      }
      if (missing.length > 0) {
        const read = await this.#readHeads(batch, missing, known, copies, confirm);
        for (const [s, head] of read) heads.set(s, head);
      }
      const versions = new Map([...heads].map(([s, head]) => [s, head === null ? -1 : head.state.seq]));
      // A scope another process also writes: a copy as it is now, to be brought up to date after a conflict
      // with the records written meanwhile rather than read whole again.
      copies.clear();
      for (const [s, head] of heads)
        if (head !== null && this.#contended.has(s))
          copies.set(s, { ...head, state: cloneState(head.state) });

      const result = applyBatch(
        scope,
        events,
        policy,
        (s) => {
          const head = heads.get(s);
          if (head === undefined)
            throw new Error(`scope ${s} was not read before the batch (scopesFor missed it)`);
          return head?.state ?? null;
        },
        (s, id) => s === scope && seen.has(id),
        guards,
        (pool, event) => charged.get(pool)?.get(event),
      );
      if (result.records.length === 0) {
        for (const [s, head] of heads) if (head !== null) this.cache.set(s, head);
        return result;
      }

      const born = confirm ? (heads.get(scope)?.born ?? "") : "";
      const writes = this.#writesOf(scope, result, heads, versions, policy, storedAlerts, now, born);
      const conflict = !(await this.#writeSteps(scope, writes, charged, now, born));
      // Scopes the batch did not change (a pool charged by an earlier step) are still current.
      for (const [s, head] of heads)
        if (head !== null && !result.states.has(s) && !this.cache.has(s)) this.cache.set(s, head);
      if (!conflict) {
        if (attempt === 1) for (const s of scopes) this.#contended.delete(s);
        return result;
      }
      for (const s of scopes) this.#contended.add(s);
      if (this.#contended.size > STATE_CACHE) this.#contended.clear();
      // Scopes changed but not written go back to Redis's copy: read again on the next attempt.
      if (attempt > 2) await sleep(Math.random() * Math.min(attempt, 20));
    }
    throw new ReinsError(
      "store_unavailable",
      `${this.location}: gave up on ${scope} after ${MAX_ATTEMPTS} attempts: other writers kept changing it`,
    );
  }

  /**
   * Writes an append's scopes: one script call for every scope on one server; on Cluster, each pool first,
   * then the session, and once the session holds the events, the pools' fields of their charges are
   * dropped (in the background: see DROP). False on a conflict.
   */
  async #writeSteps(
    scope: string,
    writes: readonly ScopeWrite[],
    charged: Map<string, Map<ReinsEvent, Decision>>,
    now: number,
    born: string,
  ): Promise<boolean> {
    const steps = this.#cluster
      ? [...writes.filter((w) => w.scope !== scope).map((w) => [w]), writes.filter((w) => w.scope === scope)]
      : [writes];
    for (const step of steps) {
      if (step.length === 0) continue;
      if (!(await this.#write(step, now))) return false;
      for (const w of step) {
        this.cache.set(w.scope, w.cached);
        this.counted(w.records.length, w.snapshot === null ? 0 : 1, w.bytes);
        // On Cluster the session may still conflict: its retry must not charge this pool again.
        for (const [record, source] of w.sources) noteCharge(charged, w.scope, source, record.decision);
      }
      if (this.#cluster && this.#onStep !== undefined && charged.size > 0)
        await this.#onStep(step[0]!.scope === scope ? "session" : "pool", step[0]!.scope);
    }
    const session = writes.find((w) => w.scope === scope);
    if (this.#cluster && born !== "" && session !== undefined) this.#dropCharges(session, charged, born);
    return true;
  }

  /**
   * Drops, in the background, the pools' fields of the charges of events `session` has just written, and
   * fences each pool at the session's new version (DROP): a field left by a process that dies first is
   * harmless, it ages out with its generation. Only for a session whose lifetime (`born`) was read.
   */
  #dropCharges(session: ScopeWrite, charged: Map<string, Map<ReinsEvent, Decision>>, born: string): void {
    const written = new Set<string>();
    for (let i = 0; i < session.ids.length; i += 2) written.add(session.ids[i]!);
    for (const [pool, events] of charged) {
      const fields: string[] = [];
      for (const event of events.keys())
        if (event.id !== undefined && written.has(event.id))
          fields.push(chargeField(session.scope, event.id));
      if (fields.length === 0) continue;
      const keys = [this.#key(pool, "snap"), this.#key(pool, "ids"), this.#key(pool, "ids0")];
      const args = [this.#ttl, fenceField(session.scope), born, session.cached.state.seq, ...fields];
      const drop = this.#scripts.reinsDrop(keys.length, ...keys, ...args).catch(() => undefined);
      this.#drops.add(drop);
      void drop.then(() => this.#drops.delete(drop));
    }
  }

  /**
   * The fields a pool is read for, to find the charges of `ids` (of `scope`'s events) it already has: on
   * Cluster the compact field and, until it ages out, the old layout's; on one server none (see the keys).
   */
  #chargeFields(scope: string, ids: readonly string[]): string[] {
    if (!this.#cluster) return [];
    return [...ids.map((id) => chargeField(scope, id)), ...ids.map((id) => chargeKey(scope, id))];
  }

  /** What an append writes to each scope it changed, encoded once for the script. */
  #writesOf(
    scope: string,
    result: BatchResult,
    heads: Map<string, RedisCached | null>,
    versions: Map<string, number>,
    policy: Policy,
    storedAlerts: Map<string, string | null>,
    now: number,
    born: string,
  ): ScopeWrite[] {
    const sources = chargeSources(scope, result.records);
    const writes = new Map<string, ScopeWrite>();
    for (const [s, state] of result.states) {
      const before = heads.get(s) ?? null;
      const { snapshot, cached } = nextSnapshot(s, state, before, policy);
      const due = snapshot !== null;
      // A scope with a snapshot once written has a lifetime: the one read, or this write's clock.
      const hasSnapshot = due || (before !== null && before.snapshotSeq >= 0);
      const lifetime = before?.born || (hasSnapshot ? String(now) : "");
      writes.set(s, {
        scope: s,
        expected: versions.get(s) ?? -1,
        lastAt: state.lastAt ?? 0,
        records: [],
        ids: [],
        alerts: new Map(),
        snapshot: due
          ? [snapshot.json, String(state.seq), snapshot.policyId, snapshot.policyJson ?? ""]
          : null,
        // The records before the snapshot replaced go: the scope keeps the period before its snapshot too.
        trimTo: due && this.#trim && trimmable(s) && before !== null ? before.snapshotSeq : -1,
        cached: { ...cached, born: lifetime },
        // A pool charged on Cluster checks the session's fence: its charges were decided on that version.
        fence: s === scope || !this.#cluster ? null : [fenceField(scope), born, versions.get(scope) ?? -1],
        sources: [],
        bytes: snapshot?.bytes ?? 0,
      });
    }
    for (const r of result.records) {
      const w = writes.get(r.scope)!;
      const json = JSON.stringify(r);
      w.records.push(json);
      w.bytes += json.length;
      if (r.scope === scope) {
        if (r.event.id !== undefined) w.ids.push(r.event.id, String(r.seq));
        continue;
      }
      const source = sources.get(r);
      if (source === undefined) continue;
      w.sources.push([r, source]);
      // On one server the session's ids, checked in the same script, already make the charge once.
      if (source.id !== undefined && this.#cluster) w.ids.push(chargeField(scope, source.id), String(r.seq));
    }
    for (const a of result.alerts) writes.get(a.scope)?.alerts.set(a.id, JSON.stringify(a));
    for (const ack of acknowledgementsOf(result.records)) {
      const w = writes.get(ack.scope);
      const stored = w?.alerts.get(ack.alertId) ?? storedAlerts.get(ack.alertId) ?? null;
      if (ack.scope !== scope || w === undefined || stored === null) continue;
      w.alerts.set(ack.alertId, JSON.stringify(acknowledged(JSON.parse(stored) as StoredAlert, ack.by)));
    }
    return [...writes.values()];
  }

  /** Writes `step` with one APPEND call (and, on Cluster, the index beside it); false on a conflict. */
  async #write(step: readonly ScopeWrite[], now: number): Promise<boolean> {
    const keys = step.flatMap((w) => this.#keys(w.scope));
    const args: (string | number)[] = [this.#ttl, this.#cluster ? "0" : "1", now, this.#idsWindowMs];
    for (const w of step) {
      args.push(
        w.expected,
        w.scope,
        w.lastAt,
        w.records.length,
        w.ids.length / 2,
        w.alerts.size,
        w.snapshot === null ? "0" : "1",
        w.trimTo,
        ...(w.fence ?? ["", "", -1]),
        ...w.records,
        ...w.ids,
        ...[...w.alerts].flat(),
        ...(w.snapshot ?? []),
      );
    }
    if (!this.#cluster) keys.push(this.#index);
    const append = this.#scripts.reinsAppend(keys.length, ...keys, ...args);
    if (!this.#cluster) return (await append)[0] === 1;
    // The index is in a slot of its own: written beside the append, not in it. An entry for a scope
    // whose append then conflicts is harmless: the scope is written by the retry, or pruned when listed.
    const [reply] = await Promise.all([
      append,
      ...step.map((w) => this.#redis.zadd(this.#index, w.lastAt, w.scope)),
      this.#redis.expire(this.#index, this.#ttl),
    ]);
    return reply[0] === 1;
  }

  async state(scope: string): Promise<State | null> {
    try {
      const cached = this.cache.get(scope);
      if (cached !== undefined) {
        const known = cached.state.seq;
        const reply = await this.#scripts.reinsRead(SCOPE_KEYS.length, ...this.#keys(scope), known, "");
        // Still current (and not taken by an append meanwhile): a copy of this store's own.
        if (reply[0] === 1 && this.cache.get(scope) === cached && cached.state.seq === known)
          return structuredClone(cached.state);
      }
      return (await this.#read(scope, null, [])).cached?.state ?? null;
    } catch (error) {
      throw this.#error(error);
    }
  }

  /**
   * Scopes, the log records they keep, and their bytes (MEMORY USAGE of each scope's keys, Redis's own
   * estimate), counted when asked: one command per key, so `reins status` on a large fleet takes a moment.
   */
  async usage(): Promise<StoreUsage> {
    const scopes = await this.scopes();
    try {
      const counted = await Promise.all(
        scopes.map(async (scope) => {
          const [records, ...bytes] = await Promise.all([
            this.#redis.llen(this.#key(scope, "log")),
            ...this.#keys(scope).map((key) => this.#redis.call("MEMORY", "USAGE", key)),
          ]);
          return { records, bytes: bytes.reduce<number>((a, b) => a + Number(b ?? 0), 0) };
        }),
      );
      return {
        scopes: scopes.length,
        records: counted.reduce((a, c) => a + c.records, 0),
        bytes: counted.reduce((a, c) => a + c.bytes, 0),
      };
    } catch (error) {
      throw this.#error(error);
    }
  }

  async events(scope: string, options: { from?: number; limit?: number } = {}): Promise<LogRecord[]> {
    const from = Math.max(0, options.from ?? 0);
    const limit = options.limit ?? -1;
    if (limit === 0) return [];
    try {
      const keys = [this.#key(scope, "snap"), this.#key(scope, "log")];
      const rows = await this.#scripts.reinsRange(2, ...keys, from, limit < 0 ? -1 : limit);
      return rows.map((row) => JSON.parse(row) as LogRecord);
    } catch (error) {
      throw this.#error(error);
    }
  }

  /** An index's entries, with those whose key (`keyOf`) is gone pruned. */
  async #listed(index: string, exists: (member: string) => Promise<boolean>) {
    const flat = await this.#redis.zrevrange(index, 0, -1, "WITHSCORES");
    const listed: { member: string; score: string }[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2)
      listed.push({ member: flat[i] ?? "", score: flat[i + 1] ?? "" });
    const live = await Promise.all(listed.map((e) => exists(e.member)));
    const gone = listed.filter((_e, i) => !live[i]);
    if (gone.length > 0)
      await this.#scripts.reinsPrune(1, index, ...gone.flatMap((e) => [e.member, e.score]));
    return listed.filter((_e, i) => live[i]).map((e) => ({ member: e.member, score: Number(e.score) }));
  }

  async scopes(): Promise<string[]> {
    try {
      // EXISTS of a scope's two keys, one slot: each check is one command, whichever node holds it.
      const live = await this.#listed(
        this.#index,
        async (scope) => (await this.#redis.exists(this.#key(scope, "snap"), this.#key(scope, "state"))) > 0,
      );
      return live
        .sort((a, b) => b.score - a.score || (a.member < b.member ? -1 : a.member > b.member ? 1 : 0))
        .map((s) => s.member);
    } catch (error) {
      throw this.#error(error);
    }
  }

  async alerts(filter: { scope?: string; acknowledged?: boolean } = {}): Promise<StoredAlert[]> {
    const scopes = filter.scope === undefined ? await this.scopes() : [filter.scope];
    try {
      const replies = await Promise.all(scopes.map((s) => this.#redis.hvals(this.#key(s, "alerts"))));
      const alerts = replies.flatMap((values) => values.map((v) => JSON.parse(v) as StoredAlert));
      return filterAlerts(alerts, filter);
    } catch (error) {
      throw this.#error(error);
    }
  }

  async acknowledgeAlert(id: string, by: string): Promise<StoredAlert | null> {
    const scope = alertScope(id);
    if (scope === null) return null;
    try {
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        const stored = await this.#redis.hget(this.#key(scope, "alerts"), id);
        if (stored === null) return null;
        const alert = acknowledged(JSON.parse(stored) as StoredAlert, by);
        const keys = this.#keys(scope);
        const written = await this.#scripts.reinsAcknowledge(
          keys.length,
          ...keys,
          this.#ttl,
          id,
          stored,
          JSON.stringify(alert),
        );
        if (written === 1) return alert;
        await sleep(Math.random() * Math.min(attempt, 20));
      }
      throw new ReinsError(
        "store_unavailable",
        `${this.location}: gave up acknowledging ${id} after ${MAX_ATTEMPTS} attempts`,
      );
    } catch (error) {
      throw this.#error(error);
    }
  }

  async saveRun(run: StoredRun): Promise<void> {
    const { id, status, updatedAt, summary, checkpoint } = encodeRun(run);
    const key = this.#runKey(id);
    try {
      // One HSET of every field: a reader sees the old run or the new one, whole. The index is another slot.
      // A run that can be resumed outlives the TTL: its record is what `--resume` goes on from.
      await Promise.all([
        this.#redis.hset(key, { status, updatedAt: String(updatedAt), summary, checkpoint }),
        resumable(status) ? this.#redis.persist(key) : this.#redis.expire(key, this.#ttl),
        this.#redis.zadd(this.#runIndex, updatedAt, id),
        this.#redis.persist(this.#runIndex),
      ]);
    } catch (error) {
      throw this.#error(error);
    }
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
      const rows = new Map<string, (string | null)[]>();
      const live = await this.#listed(this.#runIndex, async (id) => {
        const row = await this.#redis.hmget(this.#runKey(id), "status", "updatedAt", "summary");
        rows.set(id, row);
        return row.every((v) => v !== null);
      });
      return live
        .map(({ member: id }) => {
          const [status, updatedAt, summary] = rows.get(id) ?? [];
          return decodeListedRun({ id, status: status!, updatedAt: Number(updatedAt), summary: summary! });
        })
        .sort(byRecency);
    } catch (error) {
      throw this.#error(error);
    }
  }

  async close(): Promise<void> {
    this.cache.clear();
    if (this.#redis.status === "end") return;
    await Promise.all(this.#drops);
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

/** What one append writes to one scope, encoded for the APPEND script. */
interface ScopeWrite {
  scope: string;
  /** The version (seq) the append was decided on, -1 for a scope it found absent. */
  expected: number;
  lastAt: number;
  /** JSON LogRecords. */
  records: string[];
  /** Flat id → seq pairs. */
  ids: string[];
  /** Alert id → JSON. */
  alerts: Map<string, string>;
  /** State JSON, seq, policy id, policy JSON ("" when unchanged); null when no snapshot is due. */
  snapshot: [string, string, string, string] | null;
  /** The records before this seq are trimmed (the snapshot's, when one is written); -1: none. */
  trimTo: number;
  /** A pool's on Cluster: the session's fence field, lifetime ("": no check) and version read. */
  fence: [string, string, number] | null;
  /** What to keep in memory once written. */
  cached: RedisCached;
  /** Pool records and the session events they charge. */
  sources: [LogRecord, ReinsEvent][];
  bytes: number;
}
