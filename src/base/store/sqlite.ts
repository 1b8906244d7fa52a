/** The store in a SQLite file (reins/sqlite), the default. */
import { chmodSync, existsSync, mkdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type Database from "better-sqlite3";
import { applyBatch, type BatchResult, type LogRecord, type StoredAlert } from "../core/batch.js";
import { ReinsError } from "../core/errors.js";
import type { ReinsEvent } from "../core/reins-event.js";
import type { Policy } from "../core/policy.js";
import type { State } from "../core/state.js";
import type { Store, StoredRun, StoreUsage } from "../core/store.js";
import { checkRunId, decodeListedRun, decodeRun, encodeRun, type EncodedRun } from "../core/stored-run.js";
import { acknowledgementsOf } from "./alerts.js";
import { backgroundCheckpoints, Checkpointer } from "./sqlite-checkpoint.js";
import {
  LoggedStore,
  nextSnapshot,
  rebuilt,
  type Batch,
  type Cached,
  type WriteCounts,
} from "./logged-store.js";
import { collectSqlite, sqliteUsage, type GcOptions, type GcResult } from "./sqlite-gc.js";
import { decisionFromJson, decisionJson, HEAD_SEQ_SQL, HEAD_SQL, SCOPES_SQL } from "./sqlite-rows.js";
import { pageCacheKib } from "./state-cache.js";

// better-sqlite3 is CommonJS: require() loads it about 6 ms faster than import (no export scan), which the
// hook command, one process per tool call, pays on every call.
const requireCjs = createRequire(import.meta.url);

/** better-sqlite3, and the path of its compiled addon when it is where an npm build puts it. */
type Driver = { Database: typeof Database; main: string; addon: string | undefined };

let driver: Driver | undefined;
/**
 * better-sqlite3 and the path of its compiled addon, found once. Given the path, better-sqlite3 skips the
 * `bindings` package's search of a dozen candidate paths (about 1 ms of every hook command).
 */
function sqliteDriver(): Driver {
  if (driver === undefined) {
    const main = requireCjs.resolve("better-sqlite3");
    const addon = join(dirname(main), "..", "build", "Release", "better_sqlite3.node");
    driver = {
      Database: requireCjs(main) as typeof Database,
      main,
      addon: existsSync(addon) ? addon : undefined,
    };
  }
  return driver;
}

/** Schema migrations, in order; `user_version` records how many have run. */
const MIGRATIONS = [
  `CREATE TABLE reins_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   INSERT INTO reins_meta (key, value) VALUES ('application', 'reins');
   CREATE TABLE scopes (scope TEXT PRIMARY KEY, seq INTEGER NOT NULL, last_at INTEGER NOT NULL, state TEXT NOT NULL);
   CREATE INDEX scopes_last_at ON scopes (last_at DESC);
   CREATE TABLE events (
     scope TEXT NOT NULL, seq INTEGER NOT NULL, event_id TEXT, at INTEGER NOT NULL, kind TEXT NOT NULL,
     event TEXT NOT NULL, decision TEXT NOT NULL, PRIMARY KEY (scope, seq)) WITHOUT ROWID;
   CREATE UNIQUE INDEX events_id ON events (scope, event_id) WHERE event_id IS NOT NULL;
   CREATE TABLE alerts (
     id TEXT PRIMARY KEY, scope TEXT NOT NULL, seq INTEGER NOT NULL, at INTEGER NOT NULL, kind TEXT NOT NULL,
     guard TEXT NOT NULL, message TEXT NOT NULL, acknowledged INTEGER NOT NULL DEFAULT 0, acknowledged_by TEXT);
   CREATE INDEX alerts_at ON alerts (at DESC);`,
  // Runs of `reins run`: one row each, its checkpoint replaced on every save.
  `CREATE TABLE runs (id TEXT PRIMARY KEY, status TEXT NOT NULL, updated_at INTEGER NOT NULL, summary TEXT NOT NULL, checkpoint TEXT NOT NULL);
   CREATE INDEX runs_updated_at ON runs (updated_at DESC);`,
  // Snapshots every SNAPSHOT_EVERY events, in a table of their own: a scope's row is then its head (a few
  // bytes rewritten by every append; SQLite rewrites a whole row, overflow pages and all, to change one
  // column), and the policy the log after a snapshot was decided under is kept beside it. A snapshot
  // written before is at its scope's head, with no policy: the next append writes a new one. The index on
  // last_at goes: it cost every append a page, to spare a sort of the scopes when they are listed. The
  // log becomes a rowid table: records of a kilobyte or more, kept in (scope, seq) order WITHOUT ROWID,
  // cost page splits all over the tree; appended by rowid they fill one page after another (measured: a
  // third fewer pages written per commit, 1.7 times the commits per second).
  `CREATE TABLE snapshots (scope TEXT PRIMARY KEY, seq INTEGER NOT NULL, state TEXT NOT NULL, policy_id TEXT, policy TEXT);
   INSERT INTO snapshots (scope, seq, state) SELECT scope, seq, state FROM scopes;
   ALTER TABLE scopes DROP COLUMN state;
   DROP INDEX scopes_last_at;
   CREATE TABLE events_by_rowid (
     scope TEXT NOT NULL, seq INTEGER NOT NULL, event_id TEXT, at INTEGER NOT NULL, kind TEXT NOT NULL,
     event TEXT NOT NULL, decision TEXT NOT NULL);
   INSERT INTO events_by_rowid SELECT scope, seq, event_id, at, kind, event, decision FROM events ORDER BY at, scope, seq;
   DROP TABLE events;
   ALTER TABLE events_by_rowid RENAME TO events;
   CREATE UNIQUE INDEX events_seq ON events (scope, seq);
   CREATE UNIQUE INDEX events_id ON events (scope, event_id) WHERE event_id IS NOT NULL;`,
  // The ids of records `reins gc` removed, kept for the retention's age: a redelivery of their events (the
  // spool's) is still recognised and applied once.
  `CREATE TABLE event_ids (scope TEXT NOT NULL, event_id TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (scope, event_id)) WITHOUT ROWID;`,
  // The file's identity, drawn once: a file put in this one's place has another (docs/tamper-detection.md).
  `INSERT OR IGNORE INTO reins_meta (key, value) VALUES ('store_id', lower(hex(randomblob(16))));`,
  // A scope's head is worked out from its snapshot and its log (sqlite-rows.ts), not kept in a row every
  // append rewrote: that row cost each decision a page of WAL. An older reins, which would read a head
  // nobody updates, refuses the file from here on ("written by a newer reins").
  `DROP TABLE scopes;`,
];

interface AlertRow {
  id: string;
  scope: string;
  seq: number;
  at: number;
  kind: string;
  guard: string;
  message: string;
  acknowledged: number;
  acknowledged_by: string | null;
}

function toAlert(row: AlertRow): StoredAlert {
  return {
    id: row.id,
    scope: row.scope,
    seq: row.seq,
    at: row.at,
    kind: row.kind as StoredAlert["kind"],
    guard: row.guard,
    message: row.message,
    acknowledged: row.acknowledged === 1,
    acknowledgedBy: row.acknowledged_by,
  };
}

/** The inode of the file at `path`, or -1 when there is none. */
function inodeOf(path: string): number {
  try {
    return statSync(path).ino;
  } catch {
    return -1;
  }
}

/** Turns SQLite's errors into one-line ReinsErrors that name the file. */
function storeError(path: string, error: unknown): ReinsError {
  if (ReinsError.is(error)) return error;
  const code = (error as { code?: string }).code ?? "";
  const message = error instanceof Error ? error.message : String(error);
  if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") {
    return new ReinsError("store_unavailable", `${path} is not a reins database or is damaged (${message})`, {
      cause: error,
    });
  }
  // A full disk shows as SQLITE_FULL when writing, and as an I/O error growing the WAL's shared memory.
  if (code === "SQLITE_FULL" || code === "SQLITE_IOERR_SHMSIZE")
    return new ReinsError("store_unavailable", `${path}: the disk or database is full; nothing was written`, {
      cause: error,
    });
  if (code === "SQLITE_CANTOPEN")
    return new ReinsError("store_unavailable", `cannot open ${path} (${message})`, { cause: error });
  if (code === "SQLITE_READONLY")
    return new ReinsError("store_unavailable", `${path} is read-only (${message})`, { cause: error });
  return new ReinsError("store_unavailable", `${path}: ${message}`, { cause: error });
}

export interface SqliteOptions {
  /** How long a writer waits for another process's transaction, ms. @default 5000 */
  busyTimeoutMs?: number;
}

/** An append waiting for the next group commit. */
interface Pending {
  batch: Batch;
  resolve: (result: BatchResult) => void;
  reject: (error: unknown) => void;
}

/** What one append wrote: its result, the states to keep in memory once committed, and its write counts. */
interface PendingWrite {
  result: BatchResult;
  cached: [string, Cached][];
  counts: WriteCounts;
}

/** What one append of a group came to inside the group's transaction. */
type Outcome = PendingWrite | { error: unknown };

/** Blocks the thread for `ms`: for the waits of a constructor, which cannot await. */
const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Puts the file in WAL mode (kept by the file: once set, nothing is left to do and no lock is taken). The
 * switch needs the file to itself, and SQLite answers "database is locked" at once instead of running the
 * busy handler when another connection holds it, as a process that created the file a moment before does
 * while it writes the schema: so it is tried again, a few ms apart, for up to `budgetMs`.
 */
function enterWal(db: Database.Database, budgetMs: number): void {
  if (String(db.pragma("journal_mode", { simple: true })).toLowerCase() === "wal") return;
  const deadline = Date.now() + budgetMs;
  for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
    try {
      // Its answer is the mode the file is in now: "memory" for an in-memory store, which has no WAL.
      db.pragma("journal_mode = WAL");
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== "SQLITE_BUSY" || Date.now() >= deadline) throw error;
    }
    sleepSync(wait);
  }
}

/**
 * The page size of a store reins creates, bytes. Every commit writes each page it touched whole, and one
 * decision touches four pages or more whatever its size (the log's leaves, its index's, the scope's head,
 * the file's first page when it grows): at 1 KiB instead of SQLite's 4 KiB a decision's WAL bytes come to
 * less than half (docs/performance.md). An existing file keeps the size it was made with.
 */
const PAGE_SIZE = 1_024;

/** WAL bytes written before SQLite checkpoints them into the database file (4,000 pages of 4 KiB). */
const CHECKPOINT_BYTES = 4_000 * 4_096;

/** A scope's head with its last snapshot. */
interface ScopeRow {
  seq: number;
  state: string;
  policy_id: string | null;
  policy: string | null;
}

/** The statements a SQLite store runs, prepared once per connection. */
function prepareStatements(db: Database.Database) {
  return {
    head: db.prepare<[string], ScopeRow>(HEAD_SQL),
    seq: db.prepare<[string], { seq: number }>(HEAD_SEQ_SQL),
    tail: db.prepare<[string, number], { seq: number; event: string; decision: string }>(
      "SELECT seq, event, decision FROM events WHERE scope = ? AND seq >= ? ORDER BY seq",
    ),
    seen: db.prepare<[string, string, string, string], { one: number }>(
      "SELECT 1 AS one FROM events WHERE scope = ? AND event_id = ? UNION ALL SELECT 1 FROM event_ids WHERE scope = ? AND event_id = ? LIMIT 1",
    ),
    // The policy's JSON is bound only when it changed; null keeps the stored one.
    saveSnapshot: db.prepare(
      "INSERT INTO snapshots (scope, seq, state, policy_id, policy) VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope) DO UPDATE SET seq = excluded.seq, state = excluded.state, policy_id = excluded.policy_id, policy = coalesce(excluded.policy, snapshots.policy)",
    ),
    addEvent: db.prepare(
      "INSERT INTO events (scope, seq, event_id, at, kind, event, decision) VALUES (?, ?, ?, ?, ?, ?, ?)",
    ),
    addAlert: db.prepare(
      "INSERT OR IGNORE INTO alerts (id, scope, seq, at, kind, guard, message) VALUES (?, ?, ?, ?, ?, ?, ?)",
    ),
    events: db.prepare<
      [string, number, number],
      { scope: string; seq: number; event: string; decision: string }
    >("SELECT scope, seq, event, decision FROM events WHERE scope = ? AND seq >= ? ORDER BY seq LIMIT ?"),
    scopes: db.prepare<[], { scope: string }>(SCOPES_SQL),
    alerts: db.prepare<[], AlertRow>("SELECT * FROM alerts ORDER BY at DESC, scope, seq DESC"),
    alert: db.prepare<[string], AlertRow>("SELECT * FROM alerts WHERE id = ?"),
    ack: db.prepare("UPDATE alerts SET acknowledged = 1, acknowledged_by = ? WHERE id = ?"),
    ackOfScope: db.prepare(
      "UPDATE alerts SET acknowledged = 1, acknowledged_by = ? WHERE id = ? AND scope = ?",
    ),
    saveRun: db.prepare<[EncodedRun]>(
      "INSERT INTO runs (id, status, updated_at, summary, checkpoint) VALUES (@id, @status, @updatedAt, @summary, @checkpoint) ON CONFLICT (id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at, summary = excluded.summary, checkpoint = excluded.checkpoint",
    ),
    run: db.prepare<[string], EncodedRun>(
      "SELECT id, status, updated_at AS updatedAt, summary, checkpoint FROM runs WHERE id = ?",
    ),
    runs: db.prepare<[], Omit<EncodedRun, "checkpoint">>(
      "SELECT id, status, updated_at AS updatedAt, summary FROM runs ORDER BY updated_at DESC, id",
    ),
  };
}

/**
 * The default store: one SQLite file (WAL). Appends are written in `BEGIN IMMEDIATE` transactions, so hook
 * processes running at once never lose an update, and a killed writer leaves every committed event.
 * Appends made while the event loop is busy (a server's concurrent requests) share one commit, each in
 * its own savepoint: a failing append is undone alone, and nobody is answered before the commit.
 */
export class SqliteStore extends LoggedStore<Cached> implements Store {
  readonly kind = "sqlite";
  readonly location: string;
  readonly #db: Database.Database;
  readonly #stmt;
  readonly #append;
  readonly #group;
  /** Appends waiting for the group commit scheduled on the next turn of the event loop. */
  #queue: Pending[] = [];
  /** The inode of the file as opened: another file at the path means this store is no longer what is there. */
  #inode: number | null = null;
  /** The worker that checkpoints this file, or null when SQLite does it inline. */
  #checkpointer: Checkpointer | null = null;

  constructor(path: string, options: SqliteOptions = {}) {
    super();
    this.location = path;
    try {
      const fresh = path !== ":memory:" && !existsSync(path);
      if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
      const { Database: Sqlite, addon } = sqliteDriver();
      this.#db = new Sqlite(path, {
        timeout: options.busyTimeoutMs ?? 5_000,
        ...(addon !== undefined ? { nativeBinding: addon } : {}),
      });
      // A database reins creates holds every session's commands and paths: its owner's alone.
      if (fresh) chmodSync(path, 0o600);
      if (path !== ":memory:") this.#inode = statSync(path).ino;
      // Taken by a new file before its first write; a file with pages keeps its own (in WAL mode even
      // VACUUM keeps it), so a store made before keeps 4 KiB pages and works as it did.
      this.#db.pragma(`page_size = ${PAGE_SIZE}`);
      enterWal(this.#db, options.busyTimeoutMs ?? 5_000);
      this.#db.pragma("synchronous = NORMAL");
      const kib = pageCacheKib();
      if (kib !== null) this.#db.pragma(`cache_size = -${kib}`);
      // A checkpoint copies the WAL into the file and fsyncs it. Every 16 MB of WAL (4,000 pages of 4 KiB,
      // 16,000 of 1 KiB) instead of SQLite's 1,000 pages: fewer fsyncs, and a page rewritten by many
      // commits copied once per checkpoint. The WAL stays under about 16 MB whatever the file's page size.
      // In a long-lived process a worker checkpoints instead, off the thread that answers (sqlite-checkpoint.ts).
      this.#checkpointer =
        path !== ":memory:" && backgroundCheckpoints()
          ? Checkpointer.shared({ main: sqliteDriver().main, addon: sqliteDriver().addon })
          : null;
      const pageSize = this.#db.pragma("page_size", { simple: true }) as number;
      const checkpointPages = Math.ceil(CHECKPOINT_BYTES / pageSize);
      this.#db.pragma(`wal_autocheckpoint = ${this.#checkpointer !== null ? 0 : checkpointPages}`);
      // A WAL grown past that by one large transaction (gc's VACUUM writes the whole file into it) is cut
      // back to it when it next starts over, instead of keeping its largest size on disk for good.
      this.#db.pragma(`journal_size_limit = ${CHECKPOINT_BYTES}`);
      this.#migrate();
    } catch (error) {
      throw storeError(path, error);
    }
    const db = this.#db;
    this.#stmt = prepareStatements(db);
    this.#append = db.transaction((batch: Batch): PendingWrite => this.#write(batch));
    // Each append runs as a savepoint inside the group's transaction: its failure undoes it alone, unless
    // SQLite itself rolled the whole transaction back (a full disk, say); then the group fails as one.
    this.#group = db.transaction((queue: readonly Pending[]): Outcome[] =>
      queue.map((p) => {
        try {
          return this.#append(p.batch);
        } catch (error) {
          if (!db.inTransaction) throw error;
          return { error };
        }
      }),
    );
  }

  /**
   * One append inside the write transaction: the batch applied to the scopes' states, its records, alerts
   * and acknowledgements written, a snapshot where one is due, each scope's head moved on.
   */
  #write({ scope, events, policy, guards }: Batch): PendingWrite {
    const loaded = new Map<string, Cached | null>();
    const result = applyBatch(
      scope,
      events,
      policy,
      (s) => {
        const known = this.#load(s, policy);
        loaded.set(s, known);
        return known?.state ?? null;
      },
      (s, id) => this.#stmt.seen.get(s, id, s, id) !== undefined,
      guards,
    );
    let bytes = 0;
    for (const r of result.records) {
      const event = JSON.stringify(r.event);
      const decision = decisionJson(r.decision);
      bytes += event.length + decision.length;
      this.#stmt.addEvent.run(r.scope, r.seq, r.event.id ?? null, r.event.at, r.event.kind, event, decision);
    }
    const cached: [string, Cached][] = [];
    let snapshots = 0;
    for (const [s, state] of result.states) {
      const next = nextSnapshot(s, state, loaded.get(s) ?? null, policy);
      const snapshot = next.snapshot;
      if (snapshot !== null) {
        bytes += snapshot.bytes;
        snapshots += 1;
        this.#stmt.saveSnapshot.run(s, state.seq, snapshot.json, snapshot.policyId, snapshot.policyJson);
      }
      cached.push([s, next.cached]);
    }
    for (const a of result.alerts)
      this.#stmt.addAlert.run(a.id, a.scope, a.seq, a.at, a.kind, a.guard, a.message);
    for (const ack of acknowledgementsOf(result.records))
      this.#stmt.ackOfScope.run(ack.by, ack.alertId, ack.scope);
    return { result, cached, counts: { records: result.records.length, snapshots, bytes } };
  }

  /**
   * A scope's state inside a write transaction: this store's own copy when the file's head is still at
   * it, else the stored snapshot with the log after it replayed under the policy stored with it. Null for
   * a scope the file does not have. The caller changes the state: until the commit it is nobody's cache.
   */
  #load(scope: string, policy: Policy): Cached | null {
    const cached = this.taken(scope);
    if (cached !== undefined && this.#stmt.seq.get(scope)?.seq === cached.state.seq) return cached;
    const row = this.#stmt.head.get(scope);
    return row === undefined ? null : this.#rebuild(scope, row, policy);
  }

  /** The state at a stored row's head: its snapshot and the log records after it. */
  #rebuild(scope: string, row: ScopeRow, policy: Policy | null): Cached {
    const snapshot = JSON.parse(row.state) as State;
    const snapshotSeq = snapshot.seq;
    const records = row.seq > snapshotSeq ? this.#stmt.tail.all(scope, snapshotSeq) : [];
    const tail = records.map((r) => ({
      event: JSON.parse(r.event) as ReinsEvent,
      decision: decisionFromJson(r.seq, r.decision),
    }));
    const state = rebuilt(scope, snapshot, tail, policy, { id: row.policy_id, json: row.policy });
    return { state, snapshotSeq, policyId: row.policy_id };
  }

  /** Brings the schema up to date in one `BEGIN IMMEDIATE` transaction, so processes opening a new file at once do not race. */
  #migrate(): void {
    const db = this.#db;
    db.transaction(() => {
      const version = db.pragma("user_version", { simple: true }) as number;
      if (version === 0) {
        const tables = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as {
          n: number;
        };
        if (tables.n > 0) {
          throw new ReinsError(
            "store_unavailable",
            `${this.location} is a SQLite database of another program; choose another path`,
          );
        }
      } else {
        const app = db.prepare("SELECT value FROM reins_meta WHERE key = 'application'").get() as
          { value: string } | undefined;
        if (app?.value !== "reins")
          throw new ReinsError("store_unavailable", `${this.location} is not a reins database`);
      }
      if (version > MIGRATIONS.length) {
        throw new ReinsError(
          "store_unavailable",
          `${this.location} was written by a newer reins (schema ${version}); upgrade reins`,
        );
      }
      for (let v = version; v < MIGRATIONS.length; v++) {
        db.exec(MIGRATIONS[v] ?? "");
        db.pragma(`user_version = ${v + 1}`);
      }
    }).immediate();
  }

  protected appendBatch(batch: Batch): Promise<BatchResult> {
    return new Promise((resolve, reject) => {
      if (this.#queue.push({ batch, resolve, reject }) === 1) setImmediate(this.#flush);
    });
  }

  /** Commits every waiting append in one transaction, then answers each. */
  readonly #flush = (): void => {
    const queue = this.#queue;
    if (queue.length === 0) return;
    this.#queue = [];
    let outcomes: Outcome[];
    try {
      if (!this.#db.open) throw new ReinsError("store_unavailable", `${this.location} is closed`);
      // One append alone is its own transaction: no savepoint needed to undo it alone.
      const only = queue.length === 1 ? queue[0] : undefined;
      outcomes = only !== undefined ? [this.#append.immediate(only.batch)] : this.#group.immediate(queue);
    } catch (error) {
      const failure = storeError(this.location, error);
      for (const p of queue) p.reject(failure);
      return;
    }
    // Committed: the states are what the file holds now.
    outcomes.forEach((outcome, i) => {
      const pending = queue[i]!;
      if ("error" in outcome) return pending.reject(storeError(this.location, outcome.error));
      for (const [s, cached] of outcome.cached) this.cache.set(s, cached);
      const { records, snapshots, bytes } = outcome.counts;
      this.counted(records, snapshots, bytes);
      pending.resolve(outcome.result);
    });
    this.#checkpointer?.committed(this.location);
  };

  /**
   * Runs a read (or a one-statement write), turning SQLite's failures (a damaged page, a file gone, a full
   * disk) into store_unavailable.
   */
  #read<T>(read: () => T): Promise<T> {
    try {
      return Promise.resolve(read());
    } catch (error) {
      return Promise.reject(storeError(this.location, error));
    }
  }

  state(scope: string): Promise<State | null> {
    return this.#read(() => {
      const cached = this.cache.get(scope);
      const row = this.#stmt.head.get(scope);
      if (row === undefined) return null;
      if (cached !== undefined && cached.state.seq === row.seq) return structuredClone(cached.state);
      return this.#rebuild(scope, row, null).state;
    });
  }

  events(scope: string, options: { from?: number; limit?: number } = {}): Promise<LogRecord[]> {
    return this.#read(() =>
      this.#stmt.events.all(scope, Math.max(0, options.from ?? 0), options.limit ?? -1).map((r) => ({
        scope: r.scope,
        seq: r.seq,
        event: JSON.parse(r.event) as ReinsEvent,
        decision: decisionFromJson(r.seq, r.decision),
      })),
    );
  }

  scopes(): Promise<string[]> {
    return this.#read(() => this.#stmt.scopes.all().map((r) => r.scope));
  }

  alerts(filter: { scope?: string; acknowledged?: boolean } = {}): Promise<StoredAlert[]> {
    return this.#read(() =>
      this.#stmt.alerts
        .all()
        .map(toAlert)
        .filter(
          (a) =>
            (filter.scope === undefined || a.scope === filter.scope) &&
            (filter.acknowledged === undefined || a.acknowledged === filter.acknowledged),
        ),
    );
  }

  acknowledgeAlert(id: string, by: string): Promise<StoredAlert | null> {
    return this.#read(() => {
      this.#stmt.ack.run(by, id);
      const row = this.#stmt.alert.get(id);
      return row === undefined ? null : toAlert(row);
    });
  }

  saveRun(run: StoredRun): Promise<void> {
    // One statement, so its own transaction: a reader sees the old row or the new one, never a mix.
    return this.#read(() => {
      this.#stmt.saveRun.run(encodeRun(run));
    });
  }

  run(id: string): Promise<StoredRun | null> {
    return this.#read(() => {
      const row = this.#stmt.run.get(checkRunId(id));
      return row === undefined ? null : decodeRun(row);
    });
  }

  runs(): Promise<Omit<StoredRun, "checkpoint">[]> {
    return this.#read(() => this.#stmt.runs.all().map(decodeListedRun));
  }

  identity(): Promise<string | null> {
    return this.#read(() => {
      const row = this.#db.prepare("SELECT value FROM reins_meta WHERE key = 'store_id'").get() as
        { value: string } | undefined;
      // A long-lived store (the daemon's) keeps writing the file it opened even once another is put at
      // its path: that is a replacement too.
      if (this.#inode !== null && this.#inode !== inodeOf(this.location)) return "(another file)";
      return row?.value ?? null;
    });
  }

  usage(): Promise<StoreUsage> {
    return this.#read(() => sqliteUsage(this.#db));
  }

  /** Removes what a retention setting lets go (see sqlite-gc.ts); `reins gc`. */
  collect(options: GcOptions): Promise<GcResult> {
    this.#flush();
    // States kept in memory may be of scopes gc removes.
    this.cache.clear();
    return this.#read(() => collectSqlite(this.#db, options));
  }

  close(): Promise<void> {
    // Appends already made are written before the file is closed.
    this.#flush();
    this.cache.clear();
    this.#checkpointer?.closed(this.location);
    if (this.#db.open) this.#db.close();
    return Promise.resolve();
  }
}
