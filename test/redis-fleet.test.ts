/** Redis across processes: writers that lose and double-count nothing, outages spooled and delivered once. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolvePolicy, type ReinsEvent } from "../src/base/core/index.js";
import { createGovernor } from "../src/guard/governor.js";
import { RedisStore } from "../src/base/store/redis.js";
import { Spool } from "../src/base/store/spool.js";
import { finished, startFixture } from "#test/processes.js";
import {
  redisServerInstalled,
  redisUnavailableReason,
  startManagedRedis,
  type RedisServer,
} from "#test/redis-server.js";

const skipReason = redisUnavailableReason();
if (skipReason !== null) console.warn(`skipping Redis fleet tests: ${skipReason}`);

describe.skipIf(skipReason !== null || !redisServerInstalled)("Redis across processes", () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startManagedRedis();
  });
  afterAll(async () => {
    await server.stop();
  });

  it("8 writers on one session and 8 on one pool lose and double-count nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reins-fleet-"));
    const policy = { budget: { session: { tokens: 100_000 } }, pools: { shared: { tokens: 1_000_000_000 } } };
    const json = JSON.stringify(policy);
    const writers = [
      ...Array.from({ length: 8 }, (_, k) =>
        startFixture("writer.mjs", [server.url, "session:hot", "2000", "7", json, `hot-${k}`], dir),
      ),
      ...Array.from({ length: 8 }, (_, k) =>
        startFixture("writer.mjs", [server.url, `session:pool-${k}`, "2000", "5", json, `pool-${k}`], dir),
      ),
    ];
    const results = await Promise.all(writers.map(finished));
    for (const r of results) expect(r.code, r.stderr).toBe(0);

    const store = await RedisStore.connect(server.url);
    const hot = await store.state("session:hot");
    expect(hot?.budget.session.spent.tokens).toBe(8 * 2_000 * 7);
    expect(hot?.seq).toBe(16_000);
    expect(await store.events("session:hot", { from: 15_999 })).toHaveLength(1);
    expect((await store.state("pool:shared"))?.budget.session.spent.tokens).toBe(
      8 * 2_000 * 7 + 8 * 2_000 * 5,
    );
    const paused = (await store.alerts({ scope: "session:hot" })).filter((a) => a.kind === "budget_paused");
    expect(paused).toHaveLength(1);
    await store.close();
  }, 180_000);

  it("keeps deciding while Redis is down, then delivers the spool exactly once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reins-outage-"));
    const store = await RedisStore.connect(server.url, { keyPrefix: "outage:" });
    const warnings: string[] = [];
    const governor = createGovernor({
      store,
      policy: resolvePolicy({}),
      spool: new Spool(join(dir, "spool")),
      onWarning: (line) => warnings.push(line),
    });
    const usage = (i: number): ReinsEvent => ({
      kind: "usage.recorded",
      at: 1_000 + i,
      scope: "session:o",
      inputTokens: 10,
    });

    for (let i = 0; i < 50; i++) expect((await governor.recordEvent(usage(i)))?.verdict).toBe("allow");
    await server.stop();
    const started = performance.now();
    const during = [];
    for (let i = 50; i < 100; i++) during.push(await governor.recordEvent(usage(i)));
    const perDecisionMs = (performance.now() - started) / 50;
    expect(during.every((d) => d?.verdict === "allow")).toBe(true);
    expect(during[0]?.results[0]?.message).toMatch(/store unavailable/);
    expect(warnings).toHaveLength(50);
    expect(warnings[0]?.split("\n")).toHaveLength(1);
    expect(perDecisionMs).toBeLessThan(1_000); // answered within the connect timeout, not the agent's patience

    await server.restart(); // no persistence: Redis comes back empty, so the first 50 are gone; the spool is not
    for (let i = 0; i < 200; i++) {
      if ((await governor.record("session:o", [])).degraded === null) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await governor.recordEvent(usage(100));
    const state = await store.state("session:o");
    expect(state?.budget.session.spent.tokens).toBe(51 * 10);
    expect(new Spool(join(dir, "spool")).files()).toEqual([]);
    // A second drain (another process, a retry) delivers nothing twice.
    await governor.record("session:o", []);
    expect((await store.state("session:o"))?.budget.session.spent.tokens).toBe(51 * 10);
    await store.close();
  }, 60_000);

  it("blocks instead when the policy fails closed", async () => {
    const store = await RedisStore.connect(server.url, { keyPrefix: "closed:" });
    const governor = createGovernor({
      store,
      policy: resolvePolicy({ failClosed: true }),
      onWarning: () => undefined,
    });
    await server.stop();
    const decision = await governor.recordEvent({
      kind: "tool.requested",
      at: 1,
      scope: "session:f",
      tool: "Bash",
      inputHash: "h",
    });
    expect(decision?.verdict).toBe("block");
    expect(decision?.instructions[0]).toMatch(/failClosed is set/);
    await server.restart();
    await store.close();
  }, 30_000);
});
