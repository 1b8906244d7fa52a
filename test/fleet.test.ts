/** Many servers, one truth: three `reins serve` processes on one Redis, with agents spread over them. */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Decision, ReinsEvent } from "../src/base/core/index.js";
import { scripted } from "#test/api-server.js";
import {
  redisServerInstalled,
  redisUnavailableReason,
  startManagedRedis,
  type RedisServer,
} from "#test/redis-server.js";

const bin = join(import.meta.dirname, "..", "bin", "reins.js");
const skipReason = redisUnavailableReason();

interface Server {
  url: string;
  token: string;
  child: ChildProcess;
}

/** `reins serve` in a project of its own, on the shared Redis; resolves once it listens. */
async function serve(redis: string): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), "reins-fleet-server-"));
  writeFileSync(
    join(dir, "reins.config.json"),
    JSON.stringify({ budget: { session: { tokens: 1_000_000 } } }),
  );
  const child = spawn(process.execPath, [bin, "serve", "--port", "0", "--store", redis], {
    cwd: dir,
    env: { ...process.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      const found = /serving (http:\/\/[\d.:]+)/.exec(out)?.[1];
      if (found !== undefined && out.includes("\n")) resolve(found);
    });
    child.on("close", (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  return { url, token: readFileSync(join(dir, ".reins", "api-token"), "utf8").trim(), child };
}

async function call(server: Server, method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${server.token}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} on ${server.url}: ${response.status} ${text}`);
  return path === "/metrics" ? text : JSON.parse(text);
}

const decide = async (server: Server, scope: string, events: ReinsEvent[]): Promise<(Decision | null)[]> =>
  ((await call(server, "POST", "/api/decide", { scope, events })) as { decisions: (Decision | null)[] })
    .decisions;

/** The sum of a counter family's samples on a /metrics page. */
function total(page: string, name: string): number {
  const family = parsePrometheusTextFormat(page).find((f) => f.name === name);
  return (family?.metrics ?? []).reduce((n, m) => n + Number((m as { value?: string }).value ?? 0), 0);
}

describe.skipIf(skipReason !== null || !redisServerInstalled)("three reins servers on one Redis", () => {
  let redis: RedisServer;
  const servers: Server[] = [];
  beforeAll(async () => {
    redis = await startManagedRedis();
    for (let i = 0; i < 3; i++) servers.push(await serve(redis.url));
  }, 60_000);
  afterAll(async () => {
    for (const s of servers) s.child.kill("SIGTERM");
    await redis?.stop();
  });

  it("count 64 agents' tokens exactly, see one another's breaker reset, and report the same totals", async () => {
    // 64 agents, each 5 model calls of its own size, every call sent to the next server round robin.
    const AGENTS = 64;
    const CALLS = 5;
    let expected = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: AGENTS }, async (_, a) => {
        const scope = `session:agent-${a}`;
        for (let c = 0; c < CALLS; c++) {
          const tokens = 100 + a * 7 + c;
          expected += tokens;
          const event: ReinsEvent = {
            kind: "usage.recorded",
            id: `${scope}#${c}`,
            at: 1_790_000_000_000 + c,
            scope,
            inputTokens: tokens,
            costUsd: 0,
            pricing: "agent",
          };
          const server = servers[next++ % servers.length]!;
          expect(await decide(server, scope, [event])).toHaveLength(1);
        }
      }),
    );
    for (let a = 0; a < AGENTS; a += 9) {
      const { state } = (await call(servers[a % 3]!, "GET", `/api/sessions/session:agent-${a}`)) as {
        state: { budget: { session: { spent: { tokens: number } } } };
      };
      expect(state.budget.session.spent.tokens).toBe(
        Array.from({ length: CALLS }, (_, c) => 100 + a * 7 + c).reduce((x, y) => x + y),
      );
    }

    // An agent loops on server A until the breaker opens; a person resets it on server B; the next call,
    // on server C, is decided with the breaker closed.
    const [a, b, c] = servers as [Server, Server, Server];
    const loop = scripted("session:looper", (t) => {
      t.started();
      for (let i = 0; i < 5; i++) t.bash("node migrate.js", { ok: false, output: "ECONNREFUSED" });
    });
    const looped = await decide(a, "session:looper", loop);
    expect(looped.some((d) => d?.verdict === "block" && d.needsHuman)).toBe(true);
    const blocked = await decide(c, "session:looper", [
      { ...loop[1]!, id: "looper-after-trip", at: loop.at(-1)!.at + 1 },
    ]);
    expect(blocked[0]?.verdict).toBe("block");
    await call(b, "POST", "/api/circuits/session:looper/reset", { reason: "fixed the database", by: "ops" });
    const after = await decide(c, "session:looper", [
      {
        kind: "tool.requested",
        id: "looper-after-reset",
        at: loop.at(-1)!.at + 2,
        scope: "session:looper",
        tool: "Bash",
        inputHash: "ls",
        command: "ls",
      },
    ]);
    expect(after[0]?.verdict).toBe("allow");

    // /metrics on each server: the same token total, the exact one. Each server reads the shared store
    // at most a second late; wait (bounded) until all three show every write.
    const pages = async () => Promise.all(servers.map((s) => call(s, "GET", "/metrics") as Promise<string>));
    let totals: number[] = [];
    for (let tries = 0; tries < 50; tries++) {
      totals = (await pages()).map((p) => total(p, "reins_tokens_used_total"));
      if (totals.every((t) => t === expected)) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(totals).toEqual([expected, expected, expected]);
  }, 120_000);
});
