/**
 * The SQLite store's pages and WAL: a new file's 1 KiB pages and the WAL bytes a decision costs with them, a
 * file made before (4 KiB pages, by the code of that time) opening, reading, appending and collected as
 * before, and a WAL grown past its limit cut back.
 */
import { copyFileSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { resolvePolicy } from "../../src/base/core/index.js";
import { MemoryStore } from "../../src/base/store/memory.js";
import { SqliteStore } from "../../src/base/store/sqlite.js";
import { workload } from "#test/workload.js";

const policy = resolvePolicy({});
const tempFile = () => join(mkdtempSync(join(tmpdir(), "reins-pages-")), "reins.db");

/** The page size and page count of the file at `path`, read by a connection of its own. */
function pages(path: string): { size: number; count: number } {
  const db = new Database(path, { readonly: true });
  const size = db.pragma("page_size", { simple: true }) as number;
  const count = db.pragma("page_count", { simple: true }) as number;
  db.close();
  return { size, count };
}

/** An empty file with 4 KiB pages and nothing in it, as SQLite made every file before. */
function emptyFileOf4KiB(path: string): void {
  const db = new Database(path);
  db.pragma("page_size = 4096");
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE t (x); DROP TABLE t;");
  db.close();
}

/** Bytes the file's WAL grows by while `events` are appended one per commit, as hook calls append them. */
async function walGrowth(store: SqliteStore, path: string, events: ReturnType<typeof workload>) {
  const size = () => statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
  const before = size();
  for (const e of events) await store.append(e.scope, [e], policy);
  return size() - before;
}

describe("SQLite pages", () => {
  it("a new store has 1 KiB pages: a decision's WAL bytes are under half those of 4 KiB pages", async () => {
    const events = workload(300, "session:p");
    const small = tempFile();
    const large = tempFile();
    emptyFileOf4KiB(large);
    const smallStore = new SqliteStore(small);
    const largeStore = new SqliteStore(large);
    // Warm up: the first events create every table's pages.
    for (const e of events.slice(0, 40)) {
      await smallStore.append(e.scope, [e], policy);
      await largeStore.append(e.scope, [e], policy);
    }
    const smallWal = await walGrowth(smallStore, small, events.slice(40));
    const largeWal = await walGrowth(largeStore, large, events.slice(40));
    expect(pages(small).size).toBe(1_024);
    expect(pages(large).size).toBe(4_096);
    expect(smallWal).toBeGreaterThan(0);
    expect(smallWal).toBeLessThan(largeWal / 2);
    // The same decisions, whatever the page size.
    expect(await smallStore.state("session:p")).toEqual(await largeStore.state("session:p"));
    expect(await smallStore.events("session:p")).toEqual(await largeStore.events("session:p"));
    await smallStore.close();
    await largeStore.close();
  });

  it("a store made by the previous reins (schema 5, 4 KiB pages) opens, reads, dedupes, appends and is collected", async () => {
    // Made by the store's code before 1 KiB pages: 40 events of workload(40, "session:old"), one per
    // commit, under resolvePolicy({}), and the run "run-old"; closed, so its WAL is in the file.
    const path = tempFile();
    copyFileSync(join(import.meta.dirname, "..", "fixtures", "store-schema5-4096.db"), path);
    const all = workload(60, "session:old");
    const memory = new MemoryStore();
    await memory.append("session:old", all.slice(0, 40), policy);

    const store = new SqliteStore(path);
    expect(await store.state("session:old")).toEqual(await memory.state("session:old"));
    expect((await store.events("session:old")).map((r) => r.seq)).toEqual([...Array(40).keys()]);
    expect(await store.run("run-old")).toMatchObject({ status: "running", checkpoint: { step: 1 } });
    // A redelivery of an event the old file holds is recognised by its id: not applied again.
    const again = await store.append("session:old", [all[39]!], policy);
    expect(again.answers).toEqual([null]);
    expect(again.records).toEqual([]);
    for (const e of all.slice(40)) await store.append(e.scope, [e], policy);
    await memory.append("session:old", all.slice(40), policy);
    expect(await store.state("session:old")).toEqual(await memory.state("session:old"));
    expect((await store.events("session:old")).map((r) => r.seq)).toEqual([...Array(60).keys()]);
    const usage = await store.usage();
    expect(usage.records).toBe(60);
    await store.close();
    const kept = pages(path);
    expect(kept.size).toBe(4_096);
    expect(usage.bytes).toBe(kept.count * 4_096);

    // gc removes the idle session whole and VACUUMs: the file keeps its 4 KiB pages and its run.
    const collecting = new SqliteStore(path);
    const gc = await collecting.collect({ before: Date.now(), records: 10, dryRun: false });
    expect(gc.scopes).toEqual(["session:old"]);
    expect(gc.records).toBe(60);
    expect(gc.vacuumed).toBe(true);
    expect(gc.after.records).toBe(0);
    expect(await collecting.run("run-old")).not.toBeNull();
    await collecting.close();
    expect(pages(path).size).toBe(4_096);
  });

  it("cuts a WAL grown past 16 MB by large transactions back to 16 MB when it starts over", async () => {
    const path = tempFile();
    const store = new SqliteStore(path);
    const checkpoint = { log: "x".repeat(7 * 1024 * 1024) };
    // Three runs of 7 MB: the third commit takes the WAL past 16 MB, and SQLite's inline checkpoint copies it all.
    for (const id of ["run-1", "run-2", "run-3"])
      await store.saveRun({ id, status: "running", updatedAt: 1, summary: {}, checkpoint });
    const grown = statSync(`${path}-wal`).size;
    expect(grown).toBeGreaterThan(20 * 1024 * 1024);
    // The next commit starts the WAL over, and cuts the file to the limit instead of leaving it at its largest.
    await store.saveRun({ id: "run-4", status: "running", updatedAt: 2, summary: {}, checkpoint: {} });
    expect(statSync(`${path}-wal`).size).toBeLessThanOrEqual(4_000 * 4_096);
    expect((await store.runs()).map((r) => r.id).sort()).toEqual(["run-1", "run-2", "run-3", "run-4"]);
    await store.close();
  });
});
