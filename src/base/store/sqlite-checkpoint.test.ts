import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { resolvePolicy, timeline } from "../core/index.js";
import { checkpointInBackground } from "./sqlite-checkpoint.js";
import { SqliteStore } from "./sqlite.js";

const dirs: string[] = [];
afterEach(() => {
  checkpointInBackground(false);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Appends `count` tool calls one commit each, as hook calls do; the database file's size after each. */
async function fill(store: SqliteStore, count: number, scope = "session:c"): Promise<void> {
  const t = timeline({ scope, start: Date.UTC(2026, 0, 1), step: 1_000 });
  t.started("test");
  for (let i = 0; i < count; i++) t.read(`src/f${i}.ts`, `v${i}`);
  for (const event of t.events) await store.append(scope, [event], resolvePolicy({}));
}

/** Waits (at most `waits` short waits) until the file at `path` is larger than `than` bytes. */
async function grown(path: string, than: number, waits = 400): Promise<number> {
  let size = statSync(path).size;
  for (let i = 0; i < waits && size <= than; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    size = statSync(path).size;
  }
  return size;
}

describe("checkpoints in the background", () => {
  it("copies the WAL into the database file from a worker, with SQLite's inline checkpoint off", async () => {
    checkpointInBackground();
    const dir = mkdtempSync(join(tmpdir(), "reins-ckpt-"));
    dirs.push(dir);
    const path = join(dir, "reins.db");
    const store = new SqliteStore(path);
    const before = statSync(path).size;
    await fill(store, 40);
    // The worker's checkpoint is what moves pages into the file: 40 commits are far below SQLite's own
    // threshold (4,000 pages), so without it the file would keep its size.
    let size = statSync(path).size;
    for (let i = 0; i < 200 && size === before; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      size = statSync(path).size;
    }
    expect(size).toBeGreaterThan(before);
    expect((await store.events("session:c")).length).toBe(81);
    await store.close();
  });

  it("checkpoints more files than the worker keeps connections to, opening a file's again when it is due", async () => {
    checkpointInBackground();
    const dir = mkdtempSync(join(tmpdir(), "reins-ckpt-"));
    dirs.push(dir);
    const paths = Array.from({ length: 12 }, (_x, i) => join(dir, `reins-${i}.db`));
    const stores = paths.map((path) => new SqliteStore(path));
    const before = paths.map((path) => statSync(path).size);
    for (const store of stores) await fill(store, 40);
    const after = await Promise.all(paths.map((path, i) => grown(path, before[i]!)));
    after.forEach((size, i) => expect(size).toBeGreaterThan(before[i]!));
    // The first file's connection was closed for the eleven others since: its next commits are still copied.
    // A checkpoint is asked for by a commit at most once a second: commit until one is, a bounded number of times.
    await fill(stores[0]!, 200, "session:d");
    let size = statSync(paths[0]!).size;
    for (let i = 0; i < 100 && size <= after[0]!; i++) {
      await fill(stores[0]!, 1, `session:e${i}`);
      size = await grown(paths[0]!, after[0]!, 4);
    }
    expect(size).toBeGreaterThan(after[0]!);
    await Promise.all(stores.map((store) => store.close()));
  });

  it("leaves a short-lived process's store to SQLite's inline checkpoint", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reins-ckpt-"));
    dirs.push(dir);
    const path = join(dir, "reins.db");
    const store = new SqliteStore(path);
    const before = statSync(path).size;
    await fill(store, 40);
    expect(statSync(path).size).toBe(before);
    await store.close();
  });
});
