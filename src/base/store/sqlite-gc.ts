/**
 * `reins gc` on a SQLite store: what a retention setting lets go of the log, and the size of what is kept.
 * Works on the store's own connection, in short `BEGIN IMMEDIATE` transactions, so hook processes writing
 * at the same time wait a moment and lose nothing.
 */
import type Database from "better-sqlite3";
import { trimmable } from "../core/snapshot.js";
import type { StoreUsage } from "../core/store.js";
import { HEADS_SQL, IDLE_SQL } from "./sqlite-rows.js";

/** What a gc may remove: the retention setting, the time it is measured from, and what it must keep. */
export interface GcOptions {
  /** Records older than this, and scopes idle since before it, epoch ms. */
  before: number;
  /** A scope keeps at most its last this many records. */
  records: number;
  /** Count what would go and remove nothing. */
  dryRun: boolean;
}

/** What a gc removed (or, dry, would remove). */
export interface GcResult {
  /** Scopes removed whole: idle sessions and tasks. */
  scopes: string[];
  /** Log records removed, those of removed scopes included, and their bytes as stored. */
  records: number;
  recordBytes: number;
  /** Runs removed from the store (proven runs older than the limit). */
  runs: string[];
  /** Whether VACUUM ran, and the file's size before and after. */
  vacuumed: boolean;
  before: StoreUsage;
  after: StoreUsage;
}

/** Rows deleted per transaction: a writer waiting on gc waits for one such batch at most. */
const BATCH = 5_000;

/** VACUUM when the free pages come to this share of the file, or to VACUUM_BYTES. */
const VACUUM_SHARE = 0.25;
const VACUUM_BYTES = 64 * 1024 * 1024;

/**
 * Scopes gc may remove whole once idle: sessions and tasks (see `trimmable` for those it may trim). Pools
 * are trimmed but never removed: a pool without a period is a budget for all time.
 */
const REMOVABLE = ["session:", "task:"];

const startsWithAny = (scope: string, prefixes: readonly string[]) =>
  prefixes.some((p) => scope.startsWith(p));

/** Scopes, records and bytes (page_count * page_size) of the file. */
export function sqliteUsage(db: Database.Database): StoreUsage {
  const row = db
    .prepare<[], { scopes: number; records: number }>(
      "SELECT (SELECT count(*) FROM snapshots) AS scopes, (SELECT count(*) FROM events) AS records",
    )
    .get()!;
  const pages = db.pragma("page_count", { simple: true }) as number;
  const size = db.pragma("page_size", { simple: true }) as number;
  return { scopes: row.scopes, records: row.records, bytes: pages * size };
}

/**
 * Removes what the retention setting lets go: idle sessions and tasks whole, and of every other trimmed
 * scope the records before its latest snapshot that are older than `before` or not among its last
 * `records`. Records after a scope's snapshot are never removed: its state is rebuilt from them.
 */
export function collectSqlite(db: Database.Database, options: GcOptions): GcResult {
  const before = sqliteUsage(db);
  const result: GcResult = {
    scopes: [],
    records: 0,
    recordBytes: 0,
    runs: [],
    vacuumed: false,
    before,
    after: before,
  };
  const count = db.prepare<unknown[], { n: number; bytes: number | null }>(
    "SELECT count(*) AS n, sum(length(event) + length(decision)) AS bytes FROM events WHERE scope = ? AND seq < ? AND (at < ? OR seq < ?)",
  );
  const doomed =
    "SELECT rowid FROM events WHERE scope = ? AND seq < ? AND (at < ? OR seq < ?) ORDER BY rowid LIMIT ?";
  // The ids of the records about to go, kept so a redelivery of their events is still applied once.
  const keepIds = db.prepare(
    `INSERT OR IGNORE INTO event_ids (scope, event_id, at) SELECT scope, event_id, at FROM events WHERE rowid IN (${doomed}) AND event_id IS NOT NULL`,
  );
  const trim = db.prepare(`DELETE FROM events WHERE rowid IN (${doomed})`);
  const heads = db
    .prepare<[], { scope: string; seq: number; last_at: number; snapshot: number }>(HEADS_SQL)
    .all();
  const idle = db.prepare<[string, number], { one: number }>(IDLE_SQL);
  const removeScope = db.transaction((scope: string): boolean => {
    // Written to since it was listed: no longer idle.
    if (idle.get(scope, options.before) === undefined) return false;
    for (const table of ["events", "event_ids", "snapshots", "alerts"])
      db.prepare(`DELETE FROM ${table} WHERE scope = ?`).run(scope);
    return true;
  });
  const trimBatch = db.transaction((scope: string, cutoff: number): number => {
    // Read again inside the write lock: a writer may have moved the snapshot on (never back).
    const snapshot = db
      .prepare<[string], { seq: number }>("SELECT seq FROM snapshots WHERE scope = ?")
      .get(scope)?.seq;
    if (snapshot === undefined) return 0;
    keepIds.run(scope, snapshot, options.before, cutoff, BATCH);
    return trim.run(scope, snapshot, options.before, cutoff, BATCH).changes;
  });

  for (const head of heads) {
    if (!trimmable(head.scope)) continue;
    if (head.last_at < options.before && startsWithAny(head.scope, REMOVABLE)) {
      const all = count.get(head.scope, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, 0)!;
      if (options.dryRun || removeScope.immediate(head.scope)) {
        result.scopes.push(head.scope);
        result.records += all.n;
        result.recordBytes += all.bytes ?? 0;
      }
      continue;
    }
    const cutoff = head.seq - options.records;
    const gone = count.get(head.scope, head.snapshot, options.before, cutoff)!;
    if (gone.n === 0) continue;
    result.recordBytes += gone.bytes ?? 0;
    if (options.dryRun) {
      result.records += gone.n;
      continue;
    }
    for (let removed = BATCH; removed === BATCH;) {
      removed = trimBatch.immediate(head.scope, cutoff);
      result.records += removed;
    }
  }

  result.runs = collectRuns(db, options);
  if (options.dryRun) return result;
  // Ids of removed records are kept as long as records are: a redelivery older than that is a new event.
  db.prepare("DELETE FROM event_ids WHERE at < ?").run(options.before);
  const free =
    (db.pragma("freelist_count", { simple: true }) as number) *
    (db.pragma("page_size", { simple: true }) as number);
  if (before.bytes !== null && (free >= VACUUM_BYTES || free >= before.bytes * VACUUM_SHARE) && free > 0) {
    db.exec("VACUUM");
    result.vacuumed = true;
  }
  result.after = sqliteUsage(db);
  return result;
}

/**
 * Proven runs last updated before `before`, removed unless dry. Any other run can still be resumed
 * (`reins run --resume` refuses only a proven one), so it stays.
 */
function collectRuns(db: Database.Database, options: GcOptions): string[] {
  const ids = db
    .prepare<[number], { id: string }>("SELECT id FROM runs WHERE status = 'proven' AND updated_at < ?")
    .all(options.before)
    .map((r) => r.id);
  if (!options.dryRun && ids.length > 0) {
    const remove = db.prepare("DELETE FROM runs WHERE id = ? AND status = 'proven' AND updated_at < ?");
    db.transaction(() => {
      for (const id of ids) remove.run(id, options.before);
    }).immediate();
  }
  return ids;
}
