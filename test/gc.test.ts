/**
 * `reins gc` on a real SQLite file: it removes what the retention setting lets go and keeps what the
 * dashboard, `reins export`/`reins check`, the engine and resumable runs need.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { memoryIo } from "../src/cli/io.js";
import { run } from "../src/cli/run.js";
import { resolvePolicy, type ReinsEvent } from "../src/base/core/index.js";
import { runDir } from "../src/run/drive/run-trace.js";
import { defaultStorePath } from "../src/base/store/open.js";
import { SqliteStore } from "../src/base/store/sqlite.js";
import type { Overview } from "../src/server/web.js";
import { startApi } from "#test/api-server.js";
import { finished, startFixture } from "#test/processes.js";
import { pausedRun, provenRun } from "#test/runs.js";
import { workload } from "#test/workload.js";

const DAY = 86_400_000;
const NOW = Date.now();

/** A project with `config` as its policy and an empty `.reins/`. */
function project(config: object): string {
  const dir = mkdtempSync(join(tmpdir(), "reins-gc-"));
  mkdirSync(join(dir, ".reins"));
  writeFileSync(join(dir, "reins.config.json"), JSON.stringify(config));
  return dir;
}

async function reins(dir: string, ...argv: string[]) {
  const io = memoryIo({ cwd: dir });
  const code = await run(argv, io);
  return { code, out: io.out.join(""), err: io.err.join("") };
}

/** The workload's events of `scope`, moved to start at `start`, one every `step` ms. */
function session(scope: string, count: number, start: number, step = 1_000, skip = 0): ReinsEvent[] {
  return workload(count + skip, scope)
    .slice(skip)
    .map((e, i) => ({ ...e, at: start + i * step }));
}

/** What the dashboard and the export show of a project's store, read through a real server. */
async function views(dir: string, scopes: readonly string[]) {
  const api = await startApi({ project: dir });
  try {
    const spend = (await api.call("GET", `/api/spend?${scopes.map((s) => `scope=${s}`).join("&")}`)).json as {
      series: { scope: string; points: [number, number, number][] }[];
    };
    const overview = (await api.call("GET", `/api/overview?since=${NOW - 7 * DAY}`)).json as Overview;
    return { spend: spend.series, overview };
  } finally {
    await api.close();
  }
}

const config = { retention: { days: 30, records: 10_000 } };

describe("reins gc on SQLite", () => {
  it("removes idle sessions and old records, and keeps the charts, exports, states and resumable runs", async () => {
    const dir = project(config);
    const policy = resolvePolicy(config);
    const store = new SqliteStore(defaultStorePath(dir));
    // Idle for 60 days: goes whole. Half 40 days old, half today: its old half goes. Today only: kept whole.
    const idle = session("session:idle", 200, NOW - 60 * DAY);
    const long = [
      ...session("session:long", 300, NOW - 40 * DAY),
      ...session("session:long", 300, NOW - DAY, 1_000, 300),
    ];
    const recent = session("session:recent", 300, NOW - DAY / 2);
    for (const [scope, events] of [
      ["session:idle", idle],
      ["session:long", long],
      ["session:recent", recent],
    ] as const)
      for (let i = 0; i < events.length; i += 50) await store.append(scope, events.slice(i, i + 50), policy);
    // A paused run (resumable) and a proven one, both last saved 90 days ago, each with its trace.
    const paused = pausedRun(NOW - 90 * DAY);
    const proven = provenRun(NOW - 90 * DAY);
    for (const r of [paused, proven]) {
      await store.saveRun(r);
      mkdirSync(runDir(dir, r.id), { recursive: true });
      writeFileSync(join(runDir(dir, r.id), "trace.jsonl"), "{}\n".repeat(1_000));
    }
    const states = { long: await store.state("session:long"), recent: await store.state("session:recent") };
    await store.close();

    const before = await views(dir, ["session:long", "session:recent"]);
    const exported = await reins(dir, "export", "session:recent");
    expect(exported.code).toBe(0);

    // --dry-run says what would go and removes nothing.
    const dry = await reins(dir, "gc", "--dry-run", "--json");
    expect(dry.code, dry.err).toBe(0);
    const planned = JSON.parse(dry.out) as { scopes: string[]; records: number; runs: string[] };
    expect(planned.scopes).toEqual(["session:idle"]);
    expect(planned.records).toBe(200 + 300);
    expect(planned.runs).toEqual([proven.id]);
    expect(existsSync(runDir(dir, proven.id))).toBe(true);
    const untouched = new SqliteStore(defaultStorePath(dir));
    expect((await untouched.usage()).records).toBe(200 + 600 + 300);
    await untouched.close();

    const gc = await reins(dir, "gc", "--json");
    expect(gc.code, gc.err).toBe(0);
    const done = JSON.parse(gc.out) as typeof planned & { after: { scopes: number; records: number } };
    expect(done).toMatchObject({ scopes: ["session:idle"], records: 500, runs: [proven.id] });
    expect(done.after).toMatchObject({ scopes: 2, records: 600 });

    // The engine's states, the export of a scope kept whole, and the charts of the kept period are unchanged.
    const after = new SqliteStore(defaultStorePath(dir));
    expect(await after.state("session:long")).toEqual(states.long);
    expect(await after.state("session:recent")).toEqual(states.recent);
    expect(await after.state("session:idle")).toBeNull();
    expect((await after.events("session:long", { limit: 1 }))[0]?.seq).toBe(300);
    // The resumable run keeps its record and trace; the proven one is gone with its trace.
    expect(await after.run(paused.id)).toEqual(paused);
    expect(await after.run(proven.id)).toBeNull();
    await after.close();
    expect(existsSync(join(runDir(dir, paused.id), "trace.jsonl"))).toBe(true);
    expect(existsSync(runDir(dir, proven.id))).toBe(false);

    expect((await reins(dir, "export", "session:recent")).out).toBe(exported.out);
    const traceFile = join(dir, "recent.jsonl");
    writeFileSync(traceFile, exported.out);
    expect((await reins(dir, "check", traceFile)).out).toMatch(/^ok: 300 events replayed/);

    const later = await views(dir, ["session:long", "session:recent"]);
    const [longBefore, recentBefore] = before.spend;
    const [longAfter, recentAfter] = later.spend;
    expect(recentAfter).toEqual(recentBefore);
    const kept = longBefore!.points.filter(([at]) => at >= NOW - 30 * DAY);
    expect(kept.length).toBeGreaterThan(0);
    expect(longAfter!.points).toEqual(kept);
    // The overview of the last week is the same, but for the idle session no longer counted.
    expect(later.overview).toEqual({
      ...before.overview,
      sessions: { ...before.overview.sessions, total: before.overview.sessions.total - 1 },
      budgets: { ...before.overview.budgets, active: before.overview.budgets.active - 1 },
      breakers: { ...before.overview.breakers, closed: before.overview.breakers.closed - 1 },
    });

    // A second gc has nothing left to do.
    const again = JSON.parse((await reins(dir, "gc", "--json")).out) as typeof planned;
    expect(again).toMatchObject({ scopes: [], records: 0, runs: [] });
  }, 60_000);

  it("keeps a scope's last records by count, and never those after its snapshot", async () => {
    const dir = project({ retention: { days: 30, records: 100 } });
    const store = new SqliteStore(defaultStorePath(dir));
    const policy = resolvePolicy({});
    const events = session("session:busy", 1_000, NOW - DAY);
    for (let i = 0; i < events.length; i += 100)
      await store.append("session:busy", events.slice(i, i + 100), policy);
    const state = await store.state("session:busy");
    await store.close();

    expect((await reins(dir, "gc")).out).toMatch(/^removed 0 idle scopes, 900 records/);
    const after = new SqliteStore(defaultStorePath(dir));
    expect((await after.events("session:busy")).map((r) => r.seq)).toEqual(
      Array.from({ length: 100 }, (_, i) => 900 + i),
    );
    expect(await after.state("session:busy")).toEqual(state);
    // A redelivery of events whose records gc removed (the spool's, after a crash) is still applied once.
    const ided = events.filter((e) => e.id !== undefined).slice(0, 50);
    expect(ided.length).toBeGreaterThan(0);
    await after.append("session:busy", ided, policy);
    expect(await after.state("session:busy")).toEqual(state);
    await after.close();
  });

  it("leaves a scope trimmed to no record at its snapshot's head, listed by its last time", async () => {
    const dir = project({ retention: { days: 30, records: 1 } });
    const store = new SqliteStore(defaultStorePath(dir));
    const policy = resolvePolicy({});
    // 64 events: the snapshot is written at the 64th, so every record lies before it, and all are old.
    const old = session("pool:old", 64, NOW - 60 * DAY);
    await store.append("pool:old", old, policy);
    const recent = session("pool:recent", 10, NOW - 40 * DAY);
    await store.append("pool:recent", recent, policy);
    const state = await store.state("pool:old");
    expect(await store.scopes()).toEqual(["pool:recent", "pool:old"]);
    await store.close();

    // Both are trimmed whole: their snapshots were written at their last events.
    expect((await reins(dir, "gc")).out).toMatch(/^removed 0 idle scopes, 74 records/);
    const after = new SqliteStore(defaultStorePath(dir));
    expect(await after.events("pool:old")).toEqual([]);
    expect(await after.events("pool:recent")).toEqual([]);
    expect(await after.state("pool:old")).toEqual(state);
    // Their last times are their snapshots' now: listed as before.
    expect(await after.scopes()).toEqual(["pool:recent", "pool:old"]);
    const next = session("pool:old", 1, NOW, 1_000, 64);
    const written = await after.append("pool:old", next, policy);
    expect(written.records.map((r) => r.seq)).toEqual([64]);
    expect(await after.scopes()).toEqual(["pool:old", "pool:recent"]);
    await after.close();
  });

  it("loses nothing a writer in another process commits while gc trims its scope", async () => {
    const dir = project({ retention: { days: 36_500, records: 50 } });
    const spec = `sqlite:${defaultStorePath(dir)}`;
    const writer = startFixture("writer.mjs", [spec, "session:hot", "1500", "3", "{}", "hot"], dir);
    // gc over and over while the writer writes, each one in its own short transactions.
    const exited = finished(writer);
    let runs = 0;
    let settled = false;
    void exited.then(() => (settled = true));
    while (!settled) {
      expect((await reins(dir, "gc")).code).toBe(0);
      runs += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const result = await exited;
    expect(result.code, result.stderr).toBe(0);
    expect(runs).toBeGreaterThan(1);
    const store = new SqliteStore(defaultStorePath(dir));
    const hot = await store.state("session:hot");
    expect(hot?.seq).toBe(1_500);
    expect(hot?.budget.session.spent.tokens).toBe(1_500 * 3);
    expect((await store.events("session:hot", { from: 1_450 })).length).toBe(50);
    await store.close();
  }, 120_000);

  it("keeps the default retention for one of 0 or less, said in one line naming the field", async () => {
    for (const retention of [{ days: 0 }, { records: -5 }]) {
      const dir = project({ retention });
      const r = await reins(dir, "gc");
      expect(r.code).toBe(0);
      expect(r.err.trim().split("\n")).toHaveLength(1);
      expect(r.err).toMatch(/retention\.(days|records)/);
      expect(r.err).toContain("reins is guarding with the defaults for it");
    }
  });

  it("on Redis, says in one line that keys expire by their TTL, without connecting", async () => {
    const dir = project({ store: "redis://127.0.0.1:1" });
    const r = await reins(dir, "gc");
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      "nothing to do: Redis expires reins' keys by their TTL itself (policy store is Redis)\n",
    );
  });

  it("reins status and /metrics say how much the store holds", async () => {
    const dir = project({});
    const store = new SqliteStore(defaultStorePath(dir));
    await store.append("session:s", session("session:s", 40, NOW), resolvePolicy({}));
    await store.close();
    const status = await reins(dir, "status");
    expect(status.out).toMatch(/store: sqlite \S+reins\.db holds 1 scope, 40 events, \d+ kB/);
    const api = await startApi({ project: dir });
    try {
      const text = (await api.call("GET", "/metrics")).text;
      expect(text).toMatch(/^reins_store_scopes 1$/m);
      expect(text).toMatch(/^reins_store_events 40$/m);
      expect(text).toMatch(/^reins_store_bytes \d+$/m);
    } finally {
      await api.close();
    }
    expect(readFileSync(join(dir, "reins.config.json"), "utf8")).toBe("{}");
  });
});
