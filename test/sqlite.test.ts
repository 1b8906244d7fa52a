/** The SQLite store under concurrent writers, its caches, group commit, failures and migrations. */
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { memoryIo } from "../src/cli/io.js";
import { run } from "../src/cli/run.js";
import { ReinsError, defaultPolicy, resolvePolicy, timeline } from "../src/base/core/index.js";
import { MemoryStore } from "../src/base/store/memory.js";
import { SqliteStore } from "../src/base/store/sqlite.js";
import { decisionJson } from "../src/base/store/sqlite-rows.js";
import { finished, startFixture } from "#test/processes.js";
import { workload } from "#test/workload.js";

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "reins-sqlite-"));
}

describe("SQLite under concurrent writers", () => {
  it("8 writers on one session and 8 on one pool lose and double-count nothing", async () => {
    const dir = tempDir();
    const spec = `sqlite:${join(dir, "reins.db")}`;
    const policy = { budget: { session: { tokens: 100_000 } }, pools: { shared: { tokens: 1_000_000_000 } } };
    const json = JSON.stringify(policy);
    const writers = [
      ...Array.from({ length: 8 }, (_, k) =>
        startFixture("writer.mjs", [spec, "session:hot", "2000", "7", json, `hot-${k}`], dir),
      ),
      ...Array.from({ length: 8 }, (_, k) =>
        startFixture("writer.mjs", [spec, `session:pool-${k}`, "2000", "5", json, `pool-${k}`], dir),
      ),
    ];
    const results = await Promise.all(writers.map(finished));
    for (const r of results) expect(r.code, r.stderr).toBe(0);

    const store = new SqliteStore(join(dir, "reins.db"));
    const hot = await store.state("session:hot");
    expect(hot?.budget.session.spent.tokens).toBe(8 * 2_000 * 7);
    expect(hot?.seq).toBe(16_000);
    expect(await store.events("session:hot", { from: 15_999 })).toHaveLength(1);
    const pool = await store.state("pool:shared");
    expect(pool?.budget.session.spent.tokens).toBe(8 * 2_000 * 7 + 8 * 2_000 * 5);
    const paused = (await store.alerts({ scope: "session:hot" })).filter((a) => a.kind === "budget_paused");
    expect(paused).toHaveLength(1);
    for (let k = 0; k < 8; k++)
      expect((await store.state(`session:pool-${k}`))?.budget.session.spent.tokens).toBe(10_000);
    await store.close();
  }, 120_000);
});

/** Ten input tokens spent in `scope`, the `n`th such event. */
const usage = (scope: string, n: number) => ({
  kind: "usage.recorded" as const,
  at: 1_790_000_000_000 + n,
  scope,
  id: `u${n}`,
  inputTokens: 10,
});

describe("SQLite's in-memory states", () => {
  it("two stores on one file taking turns on a scope count every event once", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "reins-cache-")), "reins.db");
    const a = new SqliteStore(path);
    const b = new SqliteStore(path);
    try {
      for (let n = 0; n < 40; n++)
        await (n % 3 === 0 ? b : a).append("session:x", [usage("session:x", n)], defaultPolicy);
      for (const store of [a, b]) {
        const state = await store.state("session:x");
        expect(state?.seq).toBe(40);
        expect(state?.budget.session.spent.tokens).toBe(400);
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("a batch that fails before its commit leaves nothing behind, not even in memory", async () => {
    const store = new SqliteStore(join(mkdtempSync(join(tmpdir(), "reins-cache-")), "reins.db"));
    try {
      await store.append("session:y", [usage("session:y", 0)], defaultPolicy);
      // A value JSON cannot write fails the batch after the engine has changed the state.
      const poisoned = { ...usage("session:y", 2), model: 1n as unknown as string };
      await expect(
        store.append("session:y", [usage("session:y", 1), poisoned], defaultPolicy),
      ).rejects.toThrow();
      const result = await store.append("session:y", [usage("session:y", 1)], defaultPolicy);
      expect(result.answers[0]?.seq).toBe(1);
      expect((await store.state("session:y"))?.budget.session.spent.tokens).toBe(20);
    } finally {
      await store.close();
    }
  });
});

describe("SQLite snapshots and log tails", () => {
  const file = () => join(tempDir(), "reins.db");
  /** Usage with cache reads, which a policy may count or not: a reducer difference between policies. */
  const cached = (scope: string, n: number) => ({ ...usage(scope, n), id: `c${n}`, cacheReadTokens: 1_000 });
  const counting = resolvePolicy({ budget: { countCacheReads: true } });

  it("writes the whole state once every 32 events, within the stated bound on bytes per decision", async () => {
    const store = new SqliteStore(file());
    const events = workload(640, "session:w");
    let records = 0;
    let largest = 0;
    for (const event of events) {
      const result = await store.append(event.scope, [event], defaultPolicy);
      // A record as the store keeps it: the event, and the decision without what its columns hold.
      for (const r of result.records)
        records += JSON.stringify(r.event).length + decisionJson(r.decision).length;
      for (const state of result.states.values()) largest = Math.max(largest, JSON.stringify(state).length);
    }
    const { snapshots, bytes } = store.writes;
    // The first event writes one (and the policy's JSON), then one at every 32nd event.
    expect(snapshots).toBe(1 + Math.floor((640 - 1) / 32));
    // The bound: the records, plus a 32nd of a snapshot per decision, plus the policy once per scope.
    const bound = records + Math.ceil(640 / 32) * largest + JSON.stringify(defaultPolicy).length;
    expect(bytes).toBeLessThanOrEqual(bound);
    expect(bytes).toBeGreaterThan(records);
    const memory = new MemoryStore();
    await memory.append("session:w", events, defaultPolicy);
    expect(await store.state("session:w")).toEqual(await memory.state("session:w"));
    await store.close();
  });

  it("another store on the file rebuilds a state mid-tail exactly, and goes on from it", async () => {
    const path = file();
    const a = new SqliteStore(path);
    const b = new SqliteStore(path);
    const memory = new MemoryStore();
    const events = workload(100, "session:m");
    try {
      for (const [i, event] of events.entries()) {
        const store = i % 7 === 3 ? b : a;
        const [mine, theirs] = await Promise.all([
          store.append(event.scope, [event], defaultPolicy),
          memory.append(event.scope, [event], defaultPolicy),
        ]);
        expect(mine.answers).toEqual(theirs.answers);
        if (i % 10 === 5) expect(await b.state("session:m")).toEqual(await memory.state("session:m"));
      }
      expect(await a.state("session:m")).toEqual(await memory.state("session:m"));
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("replays a tail under the policy it was decided under, not the reader's, and snapshots a change", async () => {
    const path = file();
    const first = new SqliteStore(path);
    for (let n = 0; n < 10; n++) await first.append("session:p", [cached("session:p", n)], counting);
    await first.close();
    // A process with another policy (cache reads not counted) picks the scope up mid-tail.
    const second = new SqliteStore(path);
    expect((await second.state("session:p"))?.budget.session.spent.tokens).toBe(10 * 1_010);
    await second.append("session:p", [cached("session:p", 10)], defaultPolicy);
    expect(second.writes.snapshots).toBe(1);
    const memory = new MemoryStore();
    for (let n = 0; n < 10; n++) await memory.append("session:p", [cached("session:p", n)], counting);
    await memory.append("session:p", [cached("session:p", 10)], defaultPolicy);
    const expected = await memory.state("session:p");
    expect(expected?.budget.session.spent.tokens).toBe(10 * 1_010 + 10);
    expect(await second.state("session:p")).toEqual(expected);
    await second.close();
    const third = new SqliteStore(path);
    expect(await third.state("session:p")).toEqual(expected);
    await third.close();
  });
});

describe("SQLite group commit", () => {
  it("appends made at once share one commit, and one that fails is undone alone", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "reins-group-")), "reins.db");
    const store = new SqliteStore(path);
    // Another connection sees data_version move once per commit made by someone else.
    const watcher = new Database(path, { readonly: true });
    const version = () => watcher.pragma("data_version", { simple: true }) as number;
    try {
      await store.append("session:a", [usage("session:a", 0)], defaultPolicy);
      const before = version();
      const poisoned = { ...usage("session:b", 99), model: 1n as unknown as string };
      const calls = [
        ...Array.from({ length: 30 }, (_, n) =>
          store.append(`session:${"abc"[n % 3]}`, [usage(`session:${"abc"[n % 3]}`, n + 1)], defaultPolicy),
        ),
        store.append("session:b", [usage("session:b", 100), poisoned], defaultPolicy),
      ];
      const settled = await Promise.allSettled(calls);
      expect(version()).toBe(before + 1);
      expect(settled.slice(0, 30).every((s) => s.status === "fulfilled")).toBe(true);
      expect(settled[30]?.status).toBe("rejected");
      // The failed batch left nothing: not its first event, not its place in the sequence.
      const reopened = new SqliteStore(path);
      for (const [scope, events] of [
        ["session:a", 11],
        ["session:b", 10],
        ["session:c", 10],
      ] as const) {
        for (const s of [store, reopened]) {
          const state = await s.state(scope);
          expect(state?.seq).toBe(events);
          expect(state?.budget.session.spent.tokens).toBe(events * 10);
        }
      }
      await reopened.close();
    } finally {
      watcher.close();
      await store.close();
    }
  });

  it("writes the appends still waiting when the store is closed", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "reins-group-")), "reins.db");
    const store = new SqliteStore(path);
    const pending = Array.from({ length: 5 }, (_, n) =>
      store.append("session:z", [usage("session:z", n)], defaultPolicy),
    );
    await store.close();
    expect((await Promise.all(pending)).map((r) => r.answers[0]?.seq)).toEqual([0, 1, 2, 3, 4]);
    const reopened = new SqliteStore(path);
    expect((await reopened.state("session:z"))?.seq).toBe(5);
    await reopened.close();
    await expect(store.append("session:z", [usage("session:z", 9)], defaultPolicy)).rejects.toThrow(/closed/);
  });
});

describe("SQLite's own failures", () => {
  it("are the store's: a closed database is unavailable (spooled), never events the engine refused", async () => {
    const store = new SqliteStore(join(mkdtempSync(join(tmpdir(), "reins-sqlite-closed-")), "reins.db"));
    await store.close();
    // better-sqlite3 throws a TypeError here, the kind the engine throws on what an event holds.
    for (const read of [
      () => store.state("session:x"),
      () => store.scopes(),
      () => store.events("session:x"),
      () => store.saveRun({ id: "run-x", status: "running", updatedAt: 1, summary: {}, checkpoint: {} }),
      () => store.run("run-x"),
      () => store.runs(),
    ])
      await expect(read()).rejects.toMatchObject({ code: "store_unavailable" });
  });
});

/** Schema 1 as the first release of reins wrote it, kept here verbatim: a migration must not edit it. */
const SCHEMA_1 = `CREATE TABLE reins_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
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
   CREATE INDEX alerts_at ON alerts (at DESC);`;

describe("SQLite schema migrations", () => {
  it("bring a database of schema 1 up to date: its sessions stay, and runs work", async () => {
    const file = join(tempDir(), "reins.db");
    const policy = resolvePolicy({});
    const t = timeline("session:old").started().read("a.ts");
    const before = await new MemoryStore().append("session:old", t.events, policy);
    const state = before.states.get("session:old")!;
    const db = new Database(file);
    db.exec(SCHEMA_1);
    db.pragma("user_version = 1");
    db.prepare("INSERT INTO scopes (scope, seq, last_at, state) VALUES (?, ?, ?, ?)").run(
      "session:old",
      state.seq,
      state.lastAt ?? 0,
      JSON.stringify(state),
    );
    const addEvent = db.prepare(
      "INSERT INTO events (scope, seq, event_id, at, kind, event, decision) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    for (const r of before.records)
      addEvent.run(
        r.scope,
        r.seq,
        null,
        r.event.at,
        r.event.kind,
        JSON.stringify(r.event),
        JSON.stringify(r.decision),
      );
    db.close();

    const store = new SqliteStore(file);
    expect(await store.runs()).toEqual([]);
    const saved = {
      id: "run-1",
      status: "running",
      updatedAt: 1_000,
      summary: { tasks: 3 },
      checkpoint: { step: 1 },
    };
    await store.saveRun(saved);
    expect(await store.run("run-1")).toEqual(saved);
    expect(await store.state("session:old")).toEqual(JSON.parse(JSON.stringify(state)));
    const more = timeline({ scope: "session:old", start: (state.lastAt ?? 0) + 1 }).read("b.ts");
    await store.append("session:old", more.events, policy);
    const count = before.records.length + more.events.length;
    expect((await store.events("session:old")).map((r) => r.seq)).toEqual([...Array(count).keys()]);
    const memory = new MemoryStore();
    await memory.append("session:old", [...t.events, ...more.events], policy);
    expect(await store.state("session:old")).toEqual(await memory.state("session:old"));
    await store.close();

    const upgraded = new Database(file, { readonly: true });
    expect(upgraded.pragma("user_version", { simple: true })).toBe(6);
    // A scope's head is worked out from its snapshot and log: the table every append rewrote is gone.
    expect(upgraded.prepare("SELECT name FROM sqlite_master WHERE name = 'scopes'").all()).toEqual([]);
    expect(
      upgraded
        .prepare(
          "SELECT name FROM sqlite_master WHERE tbl_name = 'runs' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .all(),
    ).toEqual([{ name: "runs" }, { name: "runs_updated_at" }]);
    upgraded.close();
    const again = new SqliteStore(file);
    expect((await again.runs()).map((r) => r.id)).toEqual(["run-1"]);
    await again.close();
  });

  it("waits out another process holding the new file while it switches it to WAL", async () => {
    // The switch to WAL needs the file to itself, and SQLite does not run the busy handler for it: a
    // process that opened it a moment before, still in its first write, made the open fail at once with
    // "database is locked" (seen in CI when 8 processes created one database at once).
    const file = join(tempDir(), "reins.db");
    const holder = new Database(file);
    holder.exec("BEGIN IMMEDIATE; CREATE TABLE held (a)");
    const opener = startFixture("open-sqlite.mjs", [file], tempDir());
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(opener.exitCode, "the opener waits while the file is held").toBeNull();
    holder.exec("ROLLBACK");
    holder.close();
    const result = await finished(opener);
    expect(result.stderr).toBe("");
    const store = new SqliteStore(file);
    expect(await store.scopes()).toEqual([]);
    await store.close();
  });

  it("let 8 processes create the same new database at once", async () => {
    for (let round = 0; round < 3; round++) {
      const dir = tempDir();
      const file = join(dir, "reins.db");
      const results = await Promise.all(
        Array.from({ length: 8 }, () => finished(startFixture("open-sqlite.mjs", [file], dir))),
      );
      for (const r of results) expect(r.stderr).toBe("");
      const store = new SqliteStore(file);
      expect(await store.scopes()).toEqual([]);
      await store.close();
    }
  }, 60_000);
});

describe("SQLite after a crash", () => {
  it("keeps every acknowledged event when the writer is killed with SIGKILL mid-stream", async () => {
    const dir = tempDir();
    const file = join(dir, "reins.db");
    const writer = startFixture(
      "writer.mjs",
      [`sqlite:${file}`, "session:crash", "1000000", "3", "{}", "c"],
      dir,
    );
    let acked = -1;
    await new Promise<void>((resolve) => {
      writer.stdout?.on("data", (chunk: Buffer) => {
        const last = chunk.toString().trim().split("\n").pop() ?? "";
        const n = Number(last.split(" ")[1]);
        if (Number.isFinite(n)) acked = Math.max(acked, n);
        if (acked >= 400) {
          writer.kill("SIGKILL");
          resolve();
        }
      });
    });
    await new Promise((resolve) => writer.on("close", resolve));
    const db = new Database(file, { readonly: true });
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    db.close();
    const store = new SqliteStore(file);
    const log = await store.events("session:crash");
    expect(log.length).toBeGreaterThanOrEqual(acked + 1);
    expect(new Set(log.map((r) => r.event.id)).size).toBe(log.length);
    const state = await store.state("session:crash");
    expect(state?.seq).toBe(log.length);
    expect(state?.budget.session.spent.tokens).toBe(log.length * 3);
    await store.close();
  }, 60_000);
});

describe("SQLite bad input", () => {
  async function status(store: string) {
    const io = memoryIo({ cwd: tempDir() });
    const code = await run(["--store", store, "status"], io);
    return { code, err: io.err.join("") };
  }

  it("names a corrupt file and prints no stack trace", async () => {
    const file = join(tempDir(), "garbage.db");
    writeFileSync(file, Buffer.alloc(8192, 0x5a));
    const { code, err } = await status(`sqlite:${file}`);
    expect(code).toBe(2);
    expect(err).toContain(file);
    expect(err).toMatch(/not a reins database or is damaged/);
    expect(err.trim().split("\n")).toHaveLength(1);
  });

  it("refuses another program's SQLite database and leaves it untouched", async () => {
    const file = join(tempDir(), "other.db");
    const db = new Database(file);
    db.exec(
      "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers (name) VALUES ('ada')",
    );
    db.close();
    const { code, err } = await status(`sqlite:${file}`);
    expect(code).toBe(2);
    expect(err).toContain(`${file} is a SQLite database of another program`);
    const again = new Database(file, { readonly: true });
    expect(again.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([
      { name: "customers" },
    ]);
    again.close();
  });

  it("refuses a database written by a newer schema", () => {
    const file = join(tempDir(), "future.db");
    new SqliteStore(file).close().catch(() => undefined);
    const db = new Database(file);
    db.pragma("user_version = 99");
    db.close();
    expect(() => new SqliteStore(file)).toThrow(/newer reins \(schema 99\)/);
  });

  it("names a path that cannot hold a database", async () => {
    const blocker = join(tempDir(), "a-file");
    writeFileSync(blocker, "not a folder");
    const { code, err } = await status(`sqlite:${blocker}/reins.db`);
    expect(code).toBe(2);
    expect(err).toContain(`${blocker}/reins.db`);
    expect(err.trim().split("\n")).toHaveLength(1);
  });

  const canMount =
    process.getuid?.() === 0 &&
    (() => {
      try {
        const probe = tempDir();
        execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe], { stdio: "ignore" });
        execFileSync("umount", [probe], { stdio: "ignore" });
        return true;
      } catch {
        return false;
      }
    })();
  const mounted: string[] = [];
  afterAll(() => {
    for (const dir of mounted) execFileSync("umount", [dir], { stdio: "ignore" });
  });

  it.skipIf(!canMount)("reports a full disk clearly and keeps what was committed", async () => {
    const dir = tempDir();
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", dir]);
    mounted.push(dir);
    const store = new SqliteStore(join(dir, "reins.db"));
    const policy = resolvePolicy({});
    let committed = 0;
    let failure: unknown = null;
    for (let i = 0; i < 10_000 && failure === null; i++) {
      try {
        await store.append(
          "session:full",
          [
            {
              kind: "usage.recorded",
              at: i,
              scope: "session:full",
              id: `f${i}`,
              inputTokens: 1,
              model: "x".repeat(500),
            },
          ],
          policy,
        );
        committed += 1;
      } catch (error) {
        failure = error;
      }
    }
    expect(ReinsError.is(failure)).toBe(true);
    expect((failure as Error).message).toMatch(/full/);
    expect((failure as Error).message).toContain(dir);
    const checkpoint = { log: "x".repeat(512 * 1024) };
    const save = store.saveRun({ id: "run-full", status: "running", updatedAt: 1, summary: {}, checkpoint });
    await expect(save).rejects.toMatchObject({
      code: "store_unavailable",
      message: expect.stringMatching(/full/),
    });
    await store.close();
    const reopened = new SqliteStore(join(dir, "reins.db"));
    expect((await reopened.state("session:full"))?.budget.session.spent.tokens).toBe(committed);
    await reopened.close();
  });
});
