/** Tests of the spool: events kept while the store is down and delivered exactly once. */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync, spawn } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hostileEvents } from "#test/hostile.js";
import { ReinsError } from "../core/errors.js";
import type { ReinsEvent } from "../core/reins-event.js";
import { defaultPolicy } from "../core/policy.js";
import { createGovernor } from "../../guard/governor.js";
import { MemoryStore } from "./memory.js";
import { Spool } from "./spool.js";
import { SqliteStore } from "./sqlite.js";
import { toolRequest } from "#test/tool-request.js";

const event = (n: number, extra: Partial<ReinsEvent> = {}) =>
  toolRequest(n, { command: `echo ${n}`, ...extra });

function dirs() {
  const root = mkdtempSync(join(tmpdir(), "reins-spool-"));
  return { root, spool: new Spool(join(root, "spool")) };
}

describe("the spool", () => {
  it("sets a damaged file aside instead of failing every drain after it, and delivers the rest", async () => {
    const { root, spool } = dirs();
    mkdirSync(spool.dir, { recursive: true });
    writeFileSync(join(spool.dir, "000000000000001-1-a.json"), "null");
    writeFileSync(join(spool.dir, "000000000000002-1-b.json"), '{"scope": 3, "events": "x"}');
    writeFileSync(join(spool.dir, "000000000000003-1-c.json"), "{torn");
    spool.add("session:s", [event(1)]);
    const store = new MemoryStore();
    const drained = await spool.drain(store, defaultPolicy);
    expect(drained).toEqual({ delivered: 1, rejected: 3, expired: 0 });
    expect(spool.files()).toEqual([]);
    const rejected = join(spool.dir, "rejected");
    expect(readdirSync(rejected).filter((f) => f.endsWith(".json"))).toHaveLength(3);
    // Each set aside with why beside it, one line.
    for (const f of ["000000000000001-1-a.json", "000000000000002-1-b.json", "000000000000003-1-c.json"])
      expect(readFileSync(join(rejected, `${f}.why`), "utf8")).toBe(
        "not a spooled batch (torn or damaged)\n",
      );
    expect(await store.events("session:s")).toHaveLength(1);
    // The next drain has nothing to do: the bad files no longer stand in the way.
    expect(await spool.drain(store, defaultPolicy)).toEqual({ delivered: 0, rejected: 0, expired: 0 });
    expect(existsSync(root)).toBe(true);
  });

  it("sets aside a batch spooled longer ago than the store remembers event ids, and delivers the younger", async () => {
    const { spool } = dirs();
    // A store that remembers ids for a minute (as Redis does for its window): an older redelivery could count twice.
    const store = Object.assign(new MemoryStore(), { exactlyOnceMs: 60_000 });
    spool.add("session:s", [event(1)]);
    spool.add("session:s", [event(2)]);
    const [old] = spool.files();
    const aged = `${String(Date.now() - 120_000).padStart(15, "0")}${old!.slice(15)}`;
    renameSync(join(spool.dir, old!), join(spool.dir, aged));
    expect(await spool.drain(store, defaultPolicy)).toEqual({ delivered: 1, rejected: 1, expired: 1 });
    expect(readdirSync(join(spool.dir, "rejected"))).toEqual([aged, `${aged}.why`]);
    expect(readFileSync(join(spool.dir, "rejected", `${aged}.why`), "utf8")).toBe(
      "spooled longer ago than the store remembers event ids (60000 ms)\n",
    );
    expect((await store.events("session:s")).map((r) => (r.event as { command?: string }).command)).toEqual([
      "echo 2",
    ]);
  });

  /** A store that refuses, for other than being down, the appends `refuses` says. */
  const refusing = (refuses: (events: readonly ReinsEvent[]) => boolean) => {
    const store = new MemoryStore();
    const append = store.append.bind(store);
    store.append = (scope, events, ...rest) =>
      refuses(events)
        ? Promise.reject(new ReinsError("scope_mismatch", "record session:a#3 applied to the state at 2"))
        : append(scope, events, ...rest);
    return store;
  };
  const commands = async (store: MemoryStore, scope: string) =>
    (await store.events(scope)).map((r) => (r.event as { command?: string }).command);

  it("keeps a batch the store refused once, and delivers it before its scope's later ones next time", async () => {
    const { spool } = dirs();
    spool.add("session:a", [event(1, { scope: "session:a" })]);
    spool.add("session:b", [event(2, { scope: "session:b" })]);
    spool.add("session:a", [event(3, { scope: "session:a" })]);
    let refuse = true;
    const store = refusing(() => refuse);
    // Refused: nothing is set aside, and no batch of session:a overtakes the one refused.
    expect(await spool.drain(store, defaultPolicy)).toEqual({ delivered: 0, rejected: 0, expired: 0 });
    expect(spool.files()).toHaveLength(3);
    refuse = false;
    expect(await spool.drain(store, defaultPolicy)).toEqual({ delivered: 3, rejected: 0, expired: 0 });
    expect(await commands(store, "session:a")).toEqual(["echo 1", "echo 3"]);
    expect(await commands(store, "session:b")).toEqual(["echo 2"]);
    // Nothing is left behind: no batch, no count of refusals.
    expect(readdirSync(spool.dir)).toEqual([]);
    // A count another drainer left beside no batch (it delivered the batch before it saw the count) goes too.
    writeFileSync(join(spool.dir, "000000000000001-1-gone.json.refused"), "1\nscope_mismatch: x\n");
    spool.add("session:a", [event(4, { scope: "session:a" })]);
    expect(await spool.drain(store, defaultPolicy)).toEqual({ delivered: 1, rejected: 0, expired: 0 });
    expect(readdirSync(spool.dir)).toEqual([]);
  });

  it("sets aside a batch refused at three drains over 30 s, with why beside it, and delivers its scope's later ones", async () => {
    const { spool } = dirs();
    spool.add("session:a", [event(1, { scope: "session:a" })]);
    spool.add("session:a", [event(9, { scope: "session:a" })]);
    spool.add("session:a", [event(3, { scope: "session:a" })]);
    const [, poisoned] = spool.files();
    const store = refusing((events) => events.some((e) => (e as { command?: string }).command === "echo 9"));
    expect(await spool.drain(store, defaultPolicy)).toEqual({ delivered: 1, rejected: 0, expired: 0 });
    expect(await spool.drain(store, defaultPolicy)).toEqual({ delivered: 0, rejected: 0, expired: 0 });
    expect(spool.files()).toHaveLength(2);
    // Three refusals within a few ms are not enough: a passing fault may last that long.
    expect(await spool.drain(store, defaultPolicy)).toEqual({ delivered: 0, rejected: 0, expired: 0 });
    const counter = join(spool.dir, `${poisoned}.refused`);
    const [count, first, why] = readFileSync(counter, "utf8").split("\n");
    expect([count, why]).toEqual(["3", "scope_mismatch: record session:a#3 applied to the state at 2"]);
    // The first refusal 31 s ago: the next refusal sets it aside.
    writeFileSync(counter, `${count}\n${Number(first) - 31_000}\n${why}\n`);
    expect(await spool.drain(store, defaultPolicy)).toEqual({ delivered: 1, rejected: 1, expired: 0 });
    expect(await commands(store, "session:a")).toEqual(["echo 1", "echo 3"]);
    expect(readdirSync(join(spool.dir, "rejected"))).toEqual([poisoned, `${poisoned}.why`]);
    expect(readFileSync(join(spool.dir, "rejected", `${poisoned}.why`), "utf8")).toMatch(
      /^refused at 4 drains over 310\d\d ms; the last: scope_mismatch: record session:a#3 applied to the state at 2\n$/,
    );
    expect(readdirSync(spool.dir)).toEqual(["rejected"]);
  });

  it("keeps every batch while the store is down, and stops at the first that cannot be delivered", async () => {
    const { spool } = dirs();
    spool.add("session:s", [event(1)]);
    spool.add("session:s", [event(2)]);
    const down = new MemoryStore();
    down.append = () => Promise.reject(new ReinsError("store_unavailable", "down"));
    await expect(spool.drain(down, defaultPolicy)).rejects.toThrow("down");
    expect(spool.files()).toHaveLength(2);
  });
});

describe("a session's spooled events", () => {
  /** A store that takes `ms` for every append. */
  class Slow extends MemoryStore {
    constructor(readonly ms: number) {
      super();
    }
    override async append(...args: Parameters<MemoryStore["append"]>) {
      await new Promise((resolve) => setTimeout(resolve, this.ms));
      return super.append(...args);
    }
  }
  const of = (scope: string, n: number) => event(n, { scope, id: `${scope}-${n}` });

  it("go to the store before its new ones, even past the drain's deadline and behind another drain", async () => {
    const { spool } = dirs();
    for (let n = 0; n < 3; n++) spool.add("session:other", [of("session:other", n)]);
    for (let n = 0; n < 3; n++) spool.add("session:a", [of("session:a", n)]);
    const store = new Slow(20);
    // Another call's drain is under way; this session's call comes meanwhile, its deadline already passed.
    const other = spool.drain(store, defaultPolicy, {
      deadline: Date.now() + 10_000,
      scope: "session:other",
    });
    await spool.drain(store, defaultPolicy, { deadline: Date.now() - 1, scope: "session:a" });
    expect((await store.events("session:a")).map((r) => r.event.id)).toEqual([
      "session:a-0",
      "session:a-1",
      "session:a-2",
    ]);
    await other;
    expect(spool.files()).toEqual([]);
  });

  it("keep the order they were spooled in, also within one millisecond", async () => {
    const { spool } = dirs();
    for (let n = 0; n < 200; n++) spool.add("session:a", [of("session:a", n)]);
    const store = new MemoryStore();
    await spool.drain(store, defaultPolicy);
    expect((await store.events("session:a")).map((r) => r.event.id)).toEqual(
      Array.from({ length: 200 }, (_, n) => `session:a-${n}`),
    );
  });

  it("wait for a store that is down once, not once per waiting call", async () => {
    const { spool } = dirs();
    spool.add("session:a", [of("session:a", 0)]);
    let tries = 0;
    const silent = new (class extends MemoryStore {
      override async append(): Promise<never> {
        tries += 1;
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new ReinsError("store_unavailable", "Redis did not answer");
      }
    })();
    const calls = ["a", "b", "c", "d"].map((s) =>
      spool.drain(silent, defaultPolicy, { scope: `session:${s}` }),
    );
    for (const call of calls) await expect(call).rejects.toThrow("Redis did not answer");
    expect(tries).toBe(1);
    // A later call tries afresh: the store may be back.
    await expect(spool.drain(silent, defaultPolicy)).rejects.toThrow("Redis did not answer");
    expect(tries).toBe(2);
  });
});

describe("a spool written by one process while another drains it", () => {
  it("never shows the drainer a batch half written: nothing it was told is kept is set aside", async () => {
    const { root, spool } = dirs();
    mkdirSync(spool.dir, { recursive: true });
    // Another process spools 40 batches of about 1 MB each (the daemon's spool is shared with the hooks').
    const writer = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { Spool } from ${JSON.stringify(new URL("../../../dist/base/store/spool.js", import.meta.url).href)};
         const spool = new Spool(${JSON.stringify(spool.dir)});
         for (let b = 0; b < 40; b++)
           spool.add("session:s", Array.from({ length: 400 }, (_, i) => ({
             kind: "tool.requested", at: 1_790_000_000_000, scope: "session:s", id: \`b\${b}-\${i}\`,
             tool: "Bash", inputHash: "h", command: "x".repeat(2_500) })));`,
      ],
      { stdio: "inherit" },
    );
    const exited = new Promise<number | null>((resolve) => writer.on("close", resolve));
    let done = false;
    void exited.then(() => (done = true));
    const store = new MemoryStore();
    while (!done) {
      await spool.drain(store, defaultPolicy);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await exited).toBe(0);
    await spool.drain(store, defaultPolicy);
    expect(existsSync(join(spool.dir, "rejected")) ? readdirSync(join(spool.dir, "rejected")) : []).toEqual(
      [],
    );
    expect(readdirSync(spool.dir)).toEqual([]);
    expect((await store.events("session:s")).length).toBe(40 * 400);
    void root;
  }, 60_000);
});

describe("an event the engine cannot apply", () => {
  // A getter that throws stands for any fault of the engine's on an event's content.
  const poison = (): ReinsEvent => {
    const e = event(9) as unknown as Record<string, unknown>;
    Object.defineProperty(e, "tool", {
      enumerable: true,
      get: () => {
        throw new TypeError("bad tool");
      },
    });
    return e as unknown as ReinsEvent;
  };

  it("is not taken for a store that is down: SQLite says so, and nothing is spooled", async () => {
    const { root, spool } = dirs();
    const store = new SqliteStore(join(root, "reins.db"));
    try {
      const error = await store.append("session:s", [poison()], defaultPolicy).catch((e: unknown) => e);
      expect(ReinsError.is(error) && error.code).toBe("invalid_event");
      const warnings: string[] = [];
      const governor = createGovernor({
        store,
        policy: defaultPolicy,
        spool,
        onWarning: (l) => warnings.push(l),
      });
      await expect(governor.record("session:s", [poison()])).rejects.toThrow(/could not apply/);
      expect(spool.files()).toEqual([]);
      // The store still works, and what it held is intact.
      expect((await governor.record("session:s", [event(1)])).answers).toHaveLength(1);
      expect(await store.events("session:s")).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});

describe("stores fed hostile content (seeded fast-check)", () => {
  it("apply every event, never taking its content for a store that is down", async () => {
    const { root } = dirs();
    const sqlite = new SqliteStore(join(root, "hostile.db"));
    const memory = new MemoryStore();
    let n = 0;
    try {
      await fc.assert(
        fc.asyncProperty(hostileEvents("session:h"), async (events) => {
          const scope = `session:h${++n}`;
          const batch = events.map((e, i) => ({ ...e, scope, id: `${scope}#${i}` }));
          for (const store of [sqlite, memory]) {
            const result = await store.append(scope, batch, defaultPolicy);
            expect(result.answers).toHaveLength(batch.length);
            expect((await store.state(scope))?.seq).toBe(batch.length);
          }
        }),
        { seed: 20261123, numRuns: 40 },
      );
    } finally {
      await sqlite.close();
    }
  }, 60_000);
});

/** A tiny tmpfs to fill up; only root can mount one, so elsewhere the test says it is skipped. */
function fullDisk(): string | null {
  if (process.getuid?.() !== 0) return null;
  const dir = mkdtempSync(join(tmpdir(), "reins-full-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], { stdio: "ignore" });
  } catch {
    return null;
  }
  return dir;
}
const disk = fullDisk();

describe.skipIf(disk === null)("a full disk (tmpfs; needs root, skipped otherwise)", () => {
  it("leaves no empty spool file, and still answers, failing closed when the policy says so", async () => {
    const dir = disk!;
    try {
      const spool = new Spool(join(dir, "spool"));
      writeFileSync(join(dir, "ballast"), Buffer.alloc(60 * 1024));
      const big = Array.from({ length: 50 }, (_, i) => event(i, { command: "x".repeat(200) }));
      expect(() => spool.add("session:s", big)).toThrow(/ENOSPC/);
      expect(spool.files()).toEqual([]);
      const down = new MemoryStore();
      down.append = () => Promise.reject(new ReinsError("store_unavailable", "disk full"));
      const warnings: string[] = [];
      const policy = { ...defaultPolicy, failClosed: true };
      const governor = createGovernor({ store: down, policy, spool, onWarning: (l) => warnings.push(l) });
      const { answers } = await governor.record("session:s", big);
      expect(answers[0]).toMatchObject({ verdict: "block" });
      expect(spool.files()).toEqual([]);
      expect(warnings[0]).toMatch(/failClosed is set.*could not be kept either \(ENOSPC\)/);
    } finally {
      execFileSync("umount", [dir]);
    }
  });
});
