// The SQLite store's speed by page size: the same sessions appended to files of 4, 2 and 1 KiB pages (4 KiB
// is how reins made every store before 1 KiB pages), then read back from each file opened afresh, in rounds
// taking turns. CPU time per operation, medians: the file of 4 KiB pages is the same-run baseline.
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { resolvePolicy } from "../dist/base/core/index.js";
import { SqliteStore } from "../dist/base/store/sqlite.js";
import { median } from "./stats.js";
import { workload } from "./workload.js";

const SIZES = [4_096, 2_048, 1_024];
const SESSIONS = 10;
const EVENTS = 1_000;
const ROUNDS = 8;
const policy = resolvePolicy({ budget: { session: { tokens: null }, task: { tokens: null } } });
const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** An empty file of `size`-byte pages, which a store then keeps. */
function fileOf(path, size) {
  const db = new Database(path);
  db.pragma(`page_size = ${size}`);
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE t (x); DROP TABLE t;");
  db.close();
}

/** CPU µs per state loaded cold and per 200 log records read, from the file opened afresh. */
async function reads(path) {
  const store = new SqliteStore(path);
  let c0 = cpu();
  for (let s = 0; s < SESSIONS; s++) await store.state(`session:p${s}`);
  const state = (cpu() - c0) / SESSIONS;
  c0 = cpu();
  for (let s = 0; s < SESSIONS; s++)
    for (let from = 0; from < EVENTS; from += 200) await store.events(`session:p${s}`, { from, limit: 200 });
  const events = (cpu() - c0) / ((SESSIONS * EVENTS) / 200);
  await store.close();
  return { state, events };
}

export async function sqlitePagesBench(report) {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "reins-bench-pages-")));
  const sessions = Array.from({ length: SESSIONS }, (_, s) => workload(EVENTS, `session:p${s}`));
  const figures = new Map();
  for (const size of SIZES) {
    const path = join(base, `${size}.db`);
    fileOf(path, size);
    const store = new SqliteStore(path);
    const c0 = cpu();
    for (let i = 0; i < EVENTS; i++)
      for (const list of sessions) await store.append(list[i].scope, [list[i]], policy);
    figures.set(size, { path, append: (cpu() - c0) / (SESSIONS * EVENTS), state: [], events: [] });
    await store.close();
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const size of round % 2 === 0 ? SIZES : [...SIZES].reverse()) {
      const f = figures.get(size);
      const r = await reads(f.path);
      f.state.push(r.state);
      f.events.push(r.events);
    }
  }
  rmSync(base, { recursive: true, force: true });
  const us = (n) => `${Math.round(n).toLocaleString("en")} µs`;
  const line = (size) => {
    const f = figures.get(size);
    return `append ${us(f.append)}, a state loaded cold ${us(median(f.state))}, 200 log records read cold ${us(median(f.events))}`;
  };
  report("SQLite by page size, CPU per operation (1 KiB: a store made now)", line(1_024), {
    "2 KiB": line(2_048),
    baseline: `4 KiB, a store made before, same run: ${line(4_096)}`,
  });
}
