import { closeSync, openSync, statSync, writeSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { defaultGuards, defaultPolicy, pipeline, type ReinsEvent } from "../../src/base/core/index.js";
import { ReinsError } from "../../src/base/core/errors.js";
import { agentToken } from "../../src/base/config/hook-secret.js";
import { isLoopback } from "../../src/server/server.js";
import { RemoteStore } from "../../src/base/store/remote.js";
import { scripted, startApi, type ApiServer } from "#test/api-server.js";
import { freePort } from "#test/free-port.js";

/**
 * The control-plane API against a real server on 127.0.0.1 with a real SQLite store: every endpoint,
 * its validation, authentication, rate limit and not-found answers.
 */

let api: ApiServer;
const healthy = "session:healthy";
const spender = "session:spender";
const stuck = "session:stuck";

const seed = [
  ...scripted(healthy, (t) => t.started("claude").usage({ inputTokens: 100, outputTokens: 10 }).read("a.ts")),
  ...scripted(spender, (t) => t.started("codex").usage({ inputTokens: 1_000 })),
  ...scripted(stuck, (t) => {
    t.started("claude");
    for (let i = 0; i < 8; i++) t.bash("npm test", { ok: false, exitCode: 1, output: "1 failed" });
  }),
];

beforeAll(async () => {
  api = await startApi({ config: { budget: { session: { tokens: 1_000 } } }, actionsPerMinute: 1_000 });
  const ingest = await api.call("POST", "/api/events", { events: seed });
  expect(ingest.status).toBe(200);
  expect(ingest.json).toEqual({ accepted: seed.length, duplicates: 0, scopes: 3 });
});

afterAll(async () => {
  await api.close();
});

const enc = encodeURIComponent;

describe("reads", () => {
  it("GET /healthz answers without a token", async () => {
    const r = await api.call("GET", "/healthz", undefined, { token: null });
    expect(r.json).toMatchObject({ ok: true, store: "sqlite", root: api.project });
  });

  it("GET /api/budgets lists every scope, sorted, filtered and paged", async () => {
    const all = await api.call("GET", "/api/budgets?sort=tokens&order=desc", undefined, { token: null });
    expect(all.status).toBe(200);
    expect(all.json.total).toBe(3);
    expect(all.json.items.map((s: { scope: string }) => s.scope)).toEqual([spender, healthy, stuck]);
    const paused = await api.call("GET", "/api/budgets?status=paused");
    expect(paused.json.items.map((s: { scope: string }) => s.scope)).toEqual([spender]);
    const page = await api.call("GET", "/api/budgets?limit=1&offset=1&sort=scope&order=asc");
    expect(page.json).toMatchObject({ total: 3, limit: 1, offset: 1, items: [{ scope: spender }] });
    const found = await api.call("GET", "/api/budgets?q=heal");
    expect(found.json.items).toHaveLength(1);
  });

  it("GET /api/budgets/:id gives the budget lines, status, agent and open alerts", async () => {
    const r = await api.call("GET", `/api/budgets/${enc(spender)}`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ scope: spender, agent: "codex", status: "paused" });
    expect(r.json.budget).toContainEqual({ resource: "tokens", used: 1_000, limit: 1_000, ratio: 1 });
    expect(r.json.openAlerts).toBeGreaterThan(0);
  });

  it("GET /api/circuits lists breakers and GET /api/circuits/:id shows why one tripped", async () => {
    const list = await api.call("GET", "/api/circuits?breaker=open");
    expect(list.json.items.map((c: { id: string }) => c.id)).toEqual([stuck]);
    const one = await api.call("GET", `/api/circuits/${enc(stuck)}`);
    expect(one.json).toMatchObject({ id: stuck, status: "open", reason: "duplicate_calls", trips: 1 });
    expect(one.json.detail).toContain("npm test");
  });

  it("GET /api/alerts filters by budget and acknowledgement", async () => {
    const r = await api.call("GET", `/api/alerts?budget_id=${enc(spender)}&acknowledged=false`);
    expect(r.status).toBe(200);
    expect(r.json.items.length).toBeGreaterThan(0);
    expect(r.json.items.every((a: { scope: string }) => a.scope === spender)).toBe(true);
    expect(r.json.items.map((a: { kind: string }) => a.kind)).toContain("budget_paused");
  });

  it("GET /api/sessions and /api/sessions/:id give summaries and the state", async () => {
    const list = await api.call("GET", "/api/sessions");
    expect(list.json.total).toBe(3);
    const one = await api.call("GET", `/api/sessions/${enc(healthy)}`);
    expect(one.json.summary).toMatchObject({ scope: healthy, status: "active", agent: "claude" });
    expect(one.json.state.scope).toBe(healthy);
  });

  it("GET /api/sessions/:id/events pages through the log with a cursor", async () => {
    const first = await api.call("GET", `/api/sessions/${enc(stuck)}/events?limit=5`);
    expect(first.json.items).toHaveLength(5);
    expect(first.json.next).toBe(5);
    const rest = await api.call(
      "GET",
      `/api/sessions/${enc(stuck)}/events?from=${first.json.next}&limit=1000`,
    );
    expect(rest.json.items[0].seq).toBe(5);
    expect(rest.json.next).toBeNull();
    expect(first.json.items.length + rest.json.items.length).toBe(
      seed.filter((e) => e.scope === stuck).length,
    );
  });

  it("GET /api/openapi.json documents every endpoint", async () => {
    const r = await api.call("GET", "/api/openapi.json");
    expect(r.json.openapi).toMatch(/^3\./);
    for (const path of [
      "/api/budgets",
      "/api/budgets/{id}",
      "/api/budgets/{id}/extend",
      "/api/budgets/{id}/reset",
      "/api/circuits",
      "/api/circuits/{id}",
      "/api/circuits/{id}/acknowledge",
      "/api/circuits/{id}/reset",
      "/api/alerts",
      "/api/alerts/{id}/acknowledge",
      "/api/sessions",
      "/api/sessions/{id}/events",
      "/api/events",
      "/api/decide",
      "/api/stream",
    ])
      expect(Object.keys(r.json.paths), path).toContain(path);
  });

  it("GET /metrics answers in the Prometheus text format", async () => {
    const r = await api.call("GET", "/metrics");
    expect(r.status).toBe(200);
    expect(r.text).toContain("# TYPE reins_tokens_used_total counter");
  });
});

describe("a paused budget, a person, and the next decision", () => {
  it("blocks while paused; after extend it is active and the next call is allowed; who and why are recorded", async () => {
    const call = (n: number) => ({
      kind: "tool.requested",
      at: 1_790_000_100_000 + n,
      scope: spender,
      id: `spender-call-${n}`,
      tool: "Read",
      inputHash: `h${n}`,
      reads: [`f${n}.ts`],
    });
    const before = await api.call("POST", "/api/decide", { scope: spender, events: [call(1)] });
    expect(before.status).toBe(200);
    expect(before.json.decisions[0].verdict).toBe("block");

    const extended = await api.call("POST", `/api/budgets/${enc(spender)}/extend`, {
      additional_tokens: 5_000,
      reason: "the refactor needs more room",
      by: "ana",
    });
    expect(extended.status).toBe(200);
    expect(extended.json.status).toBe("active");

    const after = await api.call("POST", "/api/decide", { scope: spender, events: [call(2)] });
    expect(after.json.decisions[0].verdict).toBe("allow");

    const log = await api.call("GET", `/api/sessions/${enc(spender)}/events?limit=1000`);
    const human = log.json.items.find(
      (r: { event: { kind: string } }) => r.event.kind === "human.budget_extended",
    );
    expect(human.event).toMatchObject({ by: "ana", reason: "the refactor needs more room", amount: 5_000 });
  });

  it("POST /api/decide with include_state returns the state after the decision", async () => {
    const r = await api.call("POST", "/api/decide", {
      scope: healthy,
      include_state: true,
      events: [
        { kind: "usage.recorded", at: 1_790_000_200_000, scope: healthy, id: "h-usage", inputTokens: 5 },
      ],
    });
    expect(r.json.decisions[0].verdict).toBe("allow");
    expect(r.json.state.budget.session.spent.tokens).toBe(115);
  });

  it("POST /api/budgets/:id/reset starts the budget from zero", async () => {
    const r = await api.call("POST", `/api/budgets/${enc(healthy)}/reset`, { reason: "new day", by: "ana" });
    expect(r.status).toBe(200);
    expect(r.json.budget.find((b: { resource: string }) => b.resource === "tokens").used).toBe(0);
  });
});

describe("breakers and alerts", () => {
  it("acknowledge turns an open breaker half-open; acknowledging it again is a conflict; reset closes it", async () => {
    const ack = await api.call("POST", `/api/circuits/${enc(stuck)}/acknowledge`, {
      by: "ana",
      reason: "looked",
    });
    expect(ack.status).toBe(200);
    expect(ack.json.status).toBe("half_open");
    const again = await api.call("POST", `/api/circuits/${enc(stuck)}/acknowledge`, {});
    expect(again.status).toBe(409);
    expect(again.json.message).toContain("half_open");
    const reset = await api.call("POST", `/api/circuits/${enc(stuck)}/reset`);
    expect(reset.status).toBe(200);
    expect(reset.json.status).toBe("closed");
  });

  it("acknowledges an alert, records who did it, and lists it as acknowledged", async () => {
    const open = await api.call("GET", `/api/alerts?budget_id=${enc(spender)}&acknowledged=false`);
    const id = open.json.items[0].id as string;
    const ack = await api.call("POST", `/api/alerts/${enc(id)}/acknowledge`, { by: "sre" });
    expect(ack.status).toBe(200);
    expect(ack.json).toMatchObject({ id, acknowledged: true, acknowledgedBy: "sre" });
    const done = await api.call("GET", `/api/alerts?budget_id=${enc(spender)}&acknowledged=true`);
    expect(done.json.items.map((a: { id: string }) => a.id)).toContain(id);
  });

  it("acknowledging an alert records one human event in its scope, and the alert is acknowledged", async () => {
    const open = await api.call("GET", "/api/alerts?acknowledged=false");
    const alert = open.json.items[0] as { id: string; scope: string };
    expect(alert).toBeDefined();
    const ack = await api.call("POST", `/api/alerts/${enc(alert.id)}/acknowledge`, { by: "oncall" });
    expect(ack.json).toMatchObject({ id: alert.id, acknowledged: true, acknowledgedBy: "oncall" });
    const log = await api.call("GET", `/api/sessions/${enc(alert.scope)}/events?limit=1000`);
    const acks = log.json.items.filter(
      (r: { event: ReinsEvent }) =>
        r.event.kind === "human.alert_acknowledged" && r.event.alertId === alert.id,
    );
    expect(acks.map((r: { event: ReinsEvent }) => r.event)).toMatchObject([
      { by: "oncall", scope: alert.scope },
    ]);
    const listed = await api.call("GET", `/api/alerts?budget_id=${enc(alert.scope)}&acknowledged=true`);
    expect(listed.json.items.map((a: { id: string }) => a.id)).toContain(alert.id);
  });
});

describe("ingest", () => {
  it("is idempotent per event id: the same batch twice counts once", async () => {
    const events = scripted("session:ingest", (t) => t.started("gemini").usage({ inputTokens: 42 }));
    const first = await api.call("POST", "/api/events", { events });
    const second = await api.call("POST", "/api/events", { events });
    expect(first.json).toEqual({ accepted: 2, duplicates: 0, scopes: 1 });
    expect(second.json).toEqual({ accepted: 0, duplicates: 2, scopes: 1 });
    const budget = await api.call("GET", "/api/budgets/session%3Aingest");
    expect(budget.json.budget[0].used).toBe(42);
  });
});

describe("the live stream", () => {
  it("refuses a scope with line breaks or other control characters, so nothing can forge a record", async () => {
    const forged = 'session:x\r\nevent: record\r\ndata: {"scope":"session:victim"}\r\n';
    const ingest = await api.call("POST", "/api/events", {
      events: [{ kind: "session.started", at: 1, scope: forged, id: "forged-1" }],
    });
    expect(ingest.status).toBe(400);
    expect(ingest.json.message).toMatch(/^body\.events\.0\.scope: /);
    const decide = await api.call("POST", "/api/decide", { scope: "session:a\u0000b", events: [] });
    expect(decide.status).toBe(400);
  });

  it("sends each new record as a server-sent event", async () => {
    const controller = new AbortController();
    const response = await fetch(`${api.url}/api/stream`, { signal: controller.signal });
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const seen = (async () => {
      while (!text.includes("stream-probe")) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value);
      }
    })();
    const events = scripted("session:stream", (t) => t.started("claude").read("stream-probe.ts"));
    await api.call("POST", "/api/events", { events });
    await seen;
    controller.abort();
    expect(text).toContain("event: record");
    const data = text
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)) as { scope: string; event: { kind: string }; decision: object });
    expect(data.map((d) => d.event.kind)).toEqual(["session.started", "tool.requested", "tool.completed"]);
    expect(data[0]).toMatchObject({ scope: "session:stream", decision: { verdict: "allow" } });
  });
});

describe("validation: 400 naming the field", () => {
  const cases: [string, string, unknown, string][] = [
    [
      "POST",
      `/api/budgets/${enc(healthy)}/extend`,
      { additional_tokens: 0, reason: "x" },
      "body.additional_tokens",
    ],
    [
      "POST",
      `/api/budgets/${enc(healthy)}/extend`,
      { additional_tokens: 1_000_001, reason: "x" },
      "body.additional_tokens",
    ],
    [
      "POST",
      `/api/budgets/${enc(healthy)}/extend`,
      { additional_tokens: 1.5, reason: "x" },
      "body.additional_tokens",
    ],
    ["POST", `/api/budgets/${enc(healthy)}/extend`, { additional_tokens: 10 }, "body.reason"],
    ["POST", `/api/budgets/${enc(healthy)}/extend`, { additional_tokens: 10, reason: "   " }, "body.reason"],
    ["POST", `/api/budgets/${enc(healthy)}/extend`, { reason: "x" }, "body.additional_tokens"],
    [
      "POST",
      `/api/budgets/${enc(healthy)}/extend`,
      { additional_tokens: 5, additional_usd: 1, reason: "x" },
      "body.additional_tokens",
    ],
    [
      "POST",
      `/api/budgets/${enc(healthy)}/extend`,
      { additional_usd: -1, reason: "x" },
      "body.additional_usd",
    ],
    ["POST", `/api/budgets/${enc(healthy)}/reset`, {}, "body.reason"],
    ["GET", "/api/alerts?acknowledged=maybe", undefined, "querystring.acknowledged"],
    ["GET", "/api/budgets?limit=0", undefined, "querystring.limit"],
    ["GET", "/api/budgets?sort=mood", undefined, "querystring.sort"],
    ["GET", `/api/sessions/${enc(healthy)}/events?from=-1`, undefined, "querystring.from"],
    ["POST", "/api/events", { events: [] }, "body.events"],
    [
      "POST",
      "/api/events",
      { events: [{ kind: "usage.recorded", at: 1, scope: "session:x" }] },
      "body.events.0.id",
    ],
    ["POST", "/api/events", { events: [{ kind: "nope", at: 1, scope: "s", id: "1" }] }, "body.events.0.kind"],
    ["POST", "/api/decide", { scope: healthy }, "body.events"],
    [
      "POST",
      "/api/decide",
      { scope: healthy, events: [{ kind: "session.started", at: 1, scope: "session:other" }] },
      "body.events",
    ],
  ];
  it.each(cases)("%s %s %j → 400 naming %s", async (method, path, body, field) => {
    const r = await api.call(method, path, body);
    expect(r.status).toBe(400);
    expect(r.json.message).toContain(field);
    expect(r.json.message).not.toContain("\n");
  });

  it("answers malformed JSON with a one-line 400", async () => {
    const r = await api.call("POST", `/api/budgets/${enc(healthy)}/extend`, undefined, { raw: "{not json" });
    expect(r.status).toBe(400);
    expect(r.json.message).not.toContain("\n");
  });
});

describe("authentication", () => {
  const mutating: [string, string, unknown][] = [
    ["POST", `/api/budgets/${enc(healthy)}/extend`, { additional_tokens: 5, reason: "x" }],
    ["POST", `/api/budgets/${enc(healthy)}/reset`, { reason: "x" }],
    ["POST", `/api/circuits/${enc(stuck)}/acknowledge`, {}],
    ["POST", `/api/circuits/${enc(stuck)}/reset`, {}],
    ["POST", "/api/alerts/x/acknowledge", {}],
    ["POST", "/api/events", { events: seed.slice(0, 1) }],
    ["POST", "/api/decide", { scope: healthy, events: seed.slice(0, 1) }],
  ];
  it.each(mutating)("%s %s → 401 without a token or with a wrong one", async (method, path, body) => {
    expect((await api.call(method, path, body, { token: null })).status).toBe(401);
    expect((await api.call(method, path, body, { token: "x".repeat(48) })).status).toBe(401);
  });

  it("off loopback, reads need the token too (health stays open)", async () => {
    const wide = await startApi({ host: "0.0.0.0" });
    try {
      for (const path of [
        "/api/budgets",
        "/api/sessions",
        "/api/alerts",
        "/metrics",
        "/api/openapi.json",
        "/api/stream",
      ])
        expect((await wide.call("GET", path, undefined, { token: null })).status, path).toBe(401);
      expect((await wide.call("GET", "/api/budgets")).status).toBe(200);
      const health = await wide.call("GET", "/healthz", undefined, { token: null });
      expect(health.status).toBe(200);
      expect(health.json.root).toBeUndefined();
    } finally {
      await wide.close();
    }
  });
});

describe("not found", () => {
  it.each([
    ["GET", "/api/budgets/session%3Anobody"],
    ["GET", "/api/circuits/session%3Anobody"],
    ["GET", "/api/sessions/session%3Anobody"],
    ["GET", "/api/sessions/session%3Anobody/events"],
    ["POST", "/api/circuits/session%3Anobody/acknowledge"],
    ["POST", "/api/alerts/nobody%230%230/acknowledge"],
  ])("%s %s → 404", async (method, path) => {
    const r = await api.call(method, path, method === "POST" ? {} : undefined);
    expect(r.status).toBe(404);
    expect(r.json.error).toBe("not_found");
  });

  it("an extend of an unknown budget is a 404 and records nothing", async () => {
    const r = await api.call("POST", "/api/budgets/session%3Anobody/extend", {
      additional_tokens: 5,
      reason: "x",
    });
    expect(r.status).toBe(404);
    expect(await api.services.store.state("session:nobody")).toBeNull();
  });
});

describe("error codes", () => {
  it.each([
    ["invalid_transition", 409],
    ["git_failed", 500],
    ["store_unavailable", 503],
  ] as const)("a %s raised under a route answers %i, naming its code in one line", async (code, status) => {
    const read = vi
      .spyOn(api.services.store, "run")
      .mockRejectedValueOnce(new ReinsError(code, `${code} in a test\nsecond line`));
    try {
      const r = await api.call("GET", "/api/runs/run-error-code");
      expect(r.status).toBe(status);
      expect(r.json).toEqual({ error: code, message: `${code} in a test` });
    } finally {
      read.mockRestore();
    }
  });
});

describe("rate limit", () => {
  it("answers 429 once extend and reset are flooded past 10 a minute per token", async () => {
    const own = await startApi();
    try {
      await own.call("POST", "/api/events", { events: scripted("session:flood", (t) => t.started()) });
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++)
        statuses.push(
          (
            await own.call("POST", "/api/budgets/session%3Aflood/extend", {
              additional_tokens: 1,
              reason: `try ${i}`,
            })
          ).status,
        );
      expect(statuses.slice(0, 10)).toEqual(Array(10).fill(200));
      expect(statuses.slice(10)).toEqual([429, 429]);
      const limited = await own.call("POST", "/api/budgets/session%3Aflood/reset", { reason: "x" });
      expect(limited.status).toBe(429);
      expect(limited.json.message).toMatch(/per minute/);
      // Reads are not limited.
      expect((await own.call("GET", "/api/budgets/session%3Aflood")).status).toBe(200);
    } finally {
      await own.close();
    }
  });
});

describe("the server's own defences", () => {
  it("reads and acts on a scope whose id is longer than 100 characters", async () => {
    const scope = `session:${"x".repeat(150)}`;
    const events = scripted(scope, (t) => t.started("claude").read("a.ts"));
    const ingest = await api.call("POST", "/api/events", { events });
    expect(ingest.status, JSON.stringify(ingest.json)).toBe(200);
    const read = await api.call("GET", `/api/sessions/${encodeURIComponent(scope)}`);
    expect(read.status).toBe(200);
    const reset = await api.call("POST", `/api/budgets/${encodeURIComponent(scope)}/reset`, {
      reason: "long id",
    });
    expect(reset.status).toBe(200);
  });

  it("refuses a request whose Host is not this loopback server's (DNS rebinding)", async () => {
    const port = new URL(api.url).port;
    const raw = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: "127.0.0.1", port, path: "/api/budgets", headers: { host } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on("error", reject);
        req.end();
      });
    expect(await raw(`127.0.0.1:${port}`)).toBe(200);
    expect(await raw(`localhost:${port}`)).toBe(200);
    expect(await raw(`evil.example:${port}`)).toBe(403);
    expect(await raw("127.0.0.1.evil.example")).toBe(403);
    // The server remembers the last good Host, never a bad one: each is judged again after the other.
    expect(await raw(`localhost:${port}`)).toBe(200);
    expect(await raw(`evil.example:${port}`)).toBe(403);
    expect(await raw(`localhost:${port}`)).toBe(200);
  });

  it("tells loopback by address, not by the text's first characters", () => {
    expect(["127.0.0.1", "127.8.9.10", "::1", "localhost", "::ffff:127.0.0.1"].every(isLoopback)).toBe(true);
    expect(["127.evil.example", "0.0.0.0", "10.0.0.1", "::", "localhost.evil"].some(isLoopback)).toBe(false);
  });
});

describe("a store damaged on disk", () => {
  it("answers 503 naming the store, and /healthz says it is down", async () => {
    // A project whose database holds many sessions, damaged from a quarter of the way in to its end: it
    // opens (its header, schema and version are in its first pages), but reads of its sessions fail.
    const first = await startApi();
    for (let i = 0; i < 40; i++) {
      const events = scripted(`session:s${i}`, (t) =>
        t.started("claude").read(`${"a".repeat(2_000)}${i}.ts`),
      );
      await first.call("POST", "/api/events", { events });
    }
    const project = first.project;
    await first.close();
    const db = join(project, ".reins", "reins.db");
    const size = statSync(db).size;
    const fd = openSync(db, "r+");
    writeSync(fd, Buffer.alloc(size - Math.floor(size / 4), 0xa5), 0, undefined, Math.floor(size / 4));
    closeSync(fd);
    const own = await startApi({ project });
    try {
      const read = await own.call("GET", "/api/sessions");
      expect(read.status).toBe(503);
      expect(read.json.error).toBe("store_unavailable");
      expect(read.json.message).toMatch(/reins\.db is not a reins database or is damaged/);
      const health = await own.call("GET", "/healthz");
      expect(health.status).toBe(503);
      expect(health.json).toMatchObject({ ok: false, store: "sqlite" });
    } finally {
      await own.close();
    }
  });
});

describe("human actions and their limit", () => {
  it("refuses human actions through ingest and decide: they have their own endpoints, limited and recorded", async () => {
    const extend = {
      kind: "human.budget_extended",
      at: 1,
      scope: "session:h",
      id: "h1",
      by: "agent",
      resource: "tokens",
      amount: 1_000_000,
    };
    const ingest = await api.call("POST", "/api/events", { events: [extend] });
    expect(ingest.status).toBe(400);
    expect(ingest.json.message).toMatch(/human actions/);
    const decide = await api.call("POST", "/api/decide", {
      scope: "session:h",
      events: [{ ...extend, id: "h2" }],
    });
    expect(decide.status).toBe(400);
    const reset = { kind: "human.budget_reset", at: 1, scope: "session:h", id: "h3", by: "agent" };
    expect((await api.call("POST", "/api/events", { events: [reset] })).status).toBe(400);
  });

  it("counts extends and resets per token, however the Authorization header is spaced", async () => {
    const own = await startApi({ actionsPerMinute: 2 });
    try {
      await own.call("POST", "/api/events", { events: scripted("session:lim", (t) => t.started("claude")) });
      const statuses: number[] = [];
      for (const header of [
        `Bearer ${own.token}`,
        `Bearer  ${own.token}`,
        `Bearer ${own.token} `,
        `bearer ${own.token}`,
      ]) {
        const r = await fetch(`${own.url}/api/budgets/session%3Alim/reset`, {
          method: "POST",
          headers: { authorization: header, "content-type": "application/json" },
          body: JSON.stringify({ reason: "probe" }),
        });
        statuses.push(r.status);
      }
      // Every spelling is the same token, so the same count: two allowed, then refused.
      expect(statuses).toEqual([200, 200, 429, 429]);
    } finally {
      await own.close();
    }
  });
});

describe("the two tokens", () => {
  it("lets the agents' token ingest and decide but never act as a person", async () => {
    const agents = agentToken(api.project).value;
    const events = scripted("session:tokens", (t) => t.started("claude").read("a.ts"));
    expect((await api.call("POST", "/api/events", { events }, { token: agents })).status).toBe(200);
    const decide = await api.call(
      "POST",
      "/api/decide",
      { scope: "session:tokens", events: scripted("session:tokens", (t) => t.read("b.ts")) },
      { token: agents },
    );
    expect(decide.status).toBe(200);
    const extend = await api.call(
      "POST",
      "/api/budgets/session%3Atokens/extend",
      { additional_tokens: 1_000, reason: "more" },
      { token: agents },
    );
    expect(extend.status).toBe(403);
    expect(extend.json.message).toMatch(/cannot act as a person/);
    const reset = await api.call(
      "POST",
      "/api/circuits/session%3Atokens/reset",
      { reason: "x" },
      { token: agents },
    );
    expect(reset.status).toBe(403);
    const people = await api.call("POST", "/api/budgets/session%3Atokens/extend", {
      additional_tokens: 1_000,
      reason: "more",
    });
    expect(people.status).toBe(200);
  });
});

describe("runs of reins run", () => {
  const run = (updatedAt: number, checkpoint: unknown = { step: 1 }) => ({
    status: "running",
    updatedAt,
    summary: { plan: "plan.yaml", tasks: { done: 1, total: 3 } },
    checkpoint,
  });

  it("PUT /api/runs/:id saves a checkpoint; GET /api/runs/:id and GET /api/runs read it back", async () => {
    const saved = await api.call("PUT", "/api/runs/run-api-1", run(1_000, { tasks: ["a"] }));
    expect(saved.status, saved.text).toBe(200);
    expect(saved.json).toEqual({ id: "run-api-1", status: "running", updatedAt: 1_000 });
    await api.call("PUT", "/api/runs/run-api-2", run(2_000));
    const replaced = await api.call("PUT", "/api/runs/run-api-1", {
      ...run(3_000, { tasks: ["b"] }),
      status: "proven",
    });
    expect(replaced.status).toBe(200);

    const one = await api.call("GET", "/api/runs/run-api-1", undefined, { token: null });
    expect(one.status).toBe(200);
    expect(one.json).toEqual({ id: "run-api-1", ...run(3_000, { tasks: ["b"] }), status: "proven" });
    const list = await api.call("GET", "/api/runs", undefined, { token: null });
    expect(list.status).toBe(200);
    expect(list.json.total).toBe(2);
    expect(list.json.items.map((r: { id: string }) => r.id)).toEqual(["run-api-1", "run-api-2"]);
    expect(list.json.items[0]).not.toHaveProperty("checkpoint");
    const page = await api.call("GET", "/api/runs?limit=1&offset=1");
    expect(page.json).toMatchObject({ total: 2, limit: 1, offset: 1, items: [{ id: "run-api-2" }] });
  });

  it("answers 404 for an unknown run and 400 for a bad id or body, naming the field", async () => {
    const unknown = await api.call("GET", "/api/runs/run-none");
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toBe("not_found");
    for (const id of ["a%20b", "a%0Ab", "x".repeat(129), "%7Bx%7D"]) {
      expect((await api.call("GET", `/api/runs/${id}`)).status, id).toBe(400);
      expect((await api.call("PUT", `/api/runs/${id}`, run(1))).status, id).toBe(400);
    }
    const noCheckpoint = await api.call("PUT", "/api/runs/run-bad", { ...run(1), checkpoint: undefined });
    expect(noCheckpoint.status).toBe(400);
    expect(noCheckpoint.json.message).toMatch(/^body\.checkpoint/);
    const arraySummary = await api.call("PUT", "/api/runs/run-bad", { ...run(1), summary: [] });
    expect(arraySummary.json.message).toMatch(/^body\.summary/);
    const twoLines = await api.call("PUT", "/api/runs/run-bad", { ...run(1), status: "a\nb" });
    expect(twoLines.json.message).toMatch(/^body\.status/);
    const notJson = await api.call("PUT", "/api/runs/run-bad", undefined, { raw: "{nope" });
    expect(notJson.status).toBe(400);
    expect(notJson.json.message.split("\n")).toHaveLength(1);
    expect((await api.call("GET", "/api/runs/run-bad")).status).toBe(404);
  });

  it("keeps __proto__ keys in a checkpoint as data over HTTP, polluting nothing", async () => {
    const hostile = '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}';
    const body = `{"status": "running", "updatedAt": 5, "summary": ${hostile}, "checkpoint": {"state": ${hostile}}}`;
    const saved = await api.call("PUT", "/api/runs/run-proto", undefined, { raw: body });
    expect(saved.status, saved.text).toBe(200);
    const read = await api.call("GET", "/api/runs/run-proto");
    expect(read.text).toContain('"summary":{"__proto__":{"polluted":true}');
    expect(read.text).toContain('"checkpoint":{"state":{"__proto__":{"polluted":true}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("takes a checkpoint of millions of multi-byte characters, past the server's usual body limit", async () => {
    // 7 Mi characters of 3 bytes each: 21 MB of body, over the 16 MB of other routes, under the 8 Mi
    // characters a store keeps.
    const checkpoint = { text: "€".repeat(7 * 1024 * 1024) };
    const saved = await api.call("PUT", "/api/runs/run-huge", run(6, checkpoint));
    expect(saved.status, saved.text.slice(0, 200)).toBe(200);
    const read = await api.call("GET", "/api/runs/run-huge");
    expect(read.json.checkpoint.text.length).toBe(7 * 1024 * 1024);
    const tooBig = await api.call("PUT", "/api/runs/run-huge", run(7, { text: "x".repeat(9 * 1024 * 1024) }));
    expect(tooBig.status).toBe(400);
    expect(tooBig.json).toMatchObject({ error: "usage" });
    expect(tooBig.json.message).toMatch(/checkpoint is \d+ characters of JSON/);
  });

  it("lets only the people's token save a run: the agents' token reads but cannot rewrite a checkpoint", async () => {
    const agents = agentToken(api.project).value;
    const refused = await api.call("PUT", "/api/runs/run-tokens", run(1), { token: agents });
    expect(refused.status).toBe(403);
    expect(refused.json.message).toMatch(/cannot act as a person/);
    expect((await api.call("PUT", "/api/runs/run-tokens", run(1), { token: null })).status).toBe(401);
    expect((await api.call("PUT", "/api/runs/run-tokens", run(1), { token: "wrong" })).status).toBe(401);
    expect((await api.call("GET", "/api/runs/run-tokens")).status).toBe(404);
    expect((await api.call("PUT", "/api/runs/run-tokens", run(1))).status).toBe(200);
    expect((await api.call("GET", "/api/runs/run-tokens", undefined, { token: agents })).status).toBe(200);
  });

  it("serves RemoteStore: a driver on another machine saves, resumes and lists runs through the server", async () => {
    const remote = new RemoteStore(api.url, api.token, 10_000);
    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "n": 1}') as Record<string, unknown>;
    const saved = {
      id: "run-remote",
      status: "paused",
      updatedAt: 9_000_000,
      summary: hostile,
      checkpoint: [hostile],
    };
    await remote.saveRun(saved);
    const read = await remote.run("run-remote");
    expect(JSON.stringify(read)).toBe(JSON.stringify(saved));
    expect(Object.hasOwn(read?.summary ?? {}, "__proto__")).toBe(true);
    expect(await remote.run("run-remote-none")).toBeNull();
    expect((await remote.runs())[0]).toMatchObject({ id: "run-remote", status: "paused" });
    await expect(remote.saveRun({ ...saved, id: "bad id" })).rejects.toMatchObject({ code: "usage" });
    await expect(remote.run("bad\nid")).rejects.toMatchObject({ code: "usage" });
    const agents = new RemoteStore(api.url, agentToken(api.project).value, 10_000);
    await expect(agents.saveRun(saved)).rejects.toMatchObject({ code: "store_unavailable" });
    expect((await agents.run("run-remote"))?.status).toBe("paused");
  });

  it("RemoteStore takes the next server listed when one cannot be reached, and names each when none can", async () => {
    const gone = `http://127.0.0.1:${await freePort()}`;
    const switched: string[] = [];
    const fleet = new RemoteStore(`${gone}, ${api.url}`, api.token, 5_000, {
      onAnswer: (s) => switched.push(s),
    });
    const event: ReinsEvent = { kind: "session.started", at: 1, scope: "session:fleet-store", agent: "sdk" };
    const result = await fleet.append(event.scope, [event], defaultPolicy);
    expect(result.answers).toHaveLength(1);
    expect(fleet.location).toBe(api.url);
    expect(switched).toEqual([api.url]);
    // Told which answered last, a store goes there first, and hears of no switch.
    const next = new RemoteStore(`${gone},${api.url}`, api.token, 5_000, {
      first: api.url,
      onAnswer: (s) => switched.push(s),
    });
    expect((await next.state("session:fleet-store"))?.seq).toBe(1);
    expect(switched).toEqual([api.url]);

    const none = new RemoteStore(`${gone}, http://127.0.0.1:${await freePort()}`, api.token, 2_000);
    const error = await none.state("session:fleet-store").catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "store_unavailable" });
    expect((error as Error).message).toMatch(
      /^reins servers unreachable: http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\), http/,
    );
    expect((error as Error).message).not.toContain("\n");
    const nameless = await new RemoteStore(" , ", api.token)
      .state("session:fleet-store")
      .catch((e: unknown) => e);
    expect(nameless).toMatchObject({ code: "store_unavailable" });
    expect((nameless as Error).message).toMatch(/names no usable server .*: skipped 2 empty entries$/);
  });

  it("refuses custom guards through RemoteStore: the server decides with its own, so it says so in one line", async () => {
    const remote = new RemoteStore(api.url, api.token, 10_000);
    const event: ReinsEvent = { kind: "session.started", at: 1, scope: "session:own-guards", agent: "sdk" };
    const error = await remote
      .append(event.scope, [event], defaultPolicy, pipeline(defaultGuards))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "usage" });
    expect((error as Error).message).toMatch(/decides with its own guards/);
    expect((error as Error).message).not.toContain("\n");
    // Nothing was recorded.
    expect(await remote.state("session:own-guards")).toBeNull();
  });
});
