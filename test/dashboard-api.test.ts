import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SPEND_POINTS, SPEND_SCOPES } from "../src/server/web.js";
import { scripted, startApi, type ApiServer } from "#test/api-server.js";
import { pausedRun } from "#test/runs.js";

/**
 * What `reins serve` adds for the dashboard: the built app at `/` (public, even off loopback, while /api
 * and /metrics keep needing the token) and its bounded read-only endpoints, /api/overview, /api/spend and
 * /api/runs/:id/view.
 */

let api: ApiServer;
const start = Date.UTC(2026, 5, 1, 12);
const seed = [
  ...scripted(
    "session:a",
    (t) => t.started("claude").usage({ inputTokens: 100, outputTokens: 10 }).usage({ inputTokens: 200 }),
    start,
  ),
  ...scripted("session:b", (t) => t.started("codex").usage({ inputTokens: 1_000, costUsd: 0.5 }), start),
  ...scripted(
    "session:stuck",
    (t) => {
      t.started("claude");
      for (let i = 0; i < 8; i++) t.bash("npm test", { ok: false, exitCode: 1, output: "1 failed" });
    },
    start,
  ),
];

beforeAll(async () => {
  // Off loopback: every read of the API needs the token, so the exemption of the app's files shows.
  api = await startApi({ host: "0.0.0.0", config: { budget: { session: { tokens: 1_000 } } } });
  expect((await api.call("POST", "/api/events", { events: seed })).status).toBe(200);
});

afterAll(async () => {
  await api.close();
});

describe("the app's files", () => {
  it("GET / serves the built page without a token, with a content security policy", async () => {
    const r = await fetch(`${api.url}/`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/html");
    expect(r.headers.get("content-security-policy")).toContain("script-src 'self'");
    const html = await r.text();
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const js = await fetch(`${api.url}/${script}`, { headers: { "accept-encoding": "gzip" } });
    expect(js.status).toBe(200);
    expect(js.headers.get("cache-control")).toContain("immutable");
  });

  it("off loopback the API, its spellings and /metrics still need the token", async () => {
    for (const path of [
      "/api/sessions",
      "/api/overview",
      "/api/spend?scope=session:a",
      "/metrics",
      "/api/openapi.json",
    ])
      expect((await api.call("GET", path, undefined, { token: null })).status, path).toBe(401);
    const sneaky = await api.call("GET", "/%61pi/sessions", undefined, { token: null });
    expect(sneaky.json?.items).toBeUndefined();
    expect((await api.call("POST", "/index.html", {}, { token: null })).status).toBe(401);
    expect((await api.call("GET", "/api/sessions")).status).toBe(200);
  });
});

describe("GET /api/overview", () => {
  it("counts sessions, budgets, breakers, open alerts and the spend since a time", async () => {
    const r = await api.call("GET", `/api/overview?since=${start - 1}`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      sessions: { total: 3, active: 3 },
      breakers: { closed: 2, half_open: 0, open: 1 },
      spend: { since: start - 1, tokens: 1_310, usd: 0.5 },
    });
    expect(r.json.budgets.paused).toBe(1); // session:b spent its 1,000 tokens
    expect(r.json.alerts.open).toBeGreaterThan(0);
    const later = await api.call("GET", `/api/overview?since=${start + 3_600_000}`);
    expect(later.json).toMatchObject({ sessions: { total: 3, active: 0 }, spend: { tokens: 0, usd: 0 } });
  });

  it("rejects a bad since with a 400 naming the field", async () => {
    const r = await api.call("GET", "/api/overview?since=yesterday");
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: "bad_request" });
    expect(r.json.message).toContain("since");
  });
});

describe("GET /api/spend", () => {
  it("gives each session's cumulative tokens and USD over time", async () => {
    const r = await api.call("GET", "/api/spend?scope=session:a&scope=session:b&scope=session:none");
    expect(r.status).toBe(200);
    const [a, b, none] = r.json.series as { scope: string; points: number[][] }[];
    expect(a?.scope).toBe("session:a");
    expect(a?.points.map((p) => p[1])).toEqual([110, 310]);
    expect(b?.points).toEqual([[expect.any(Number), 1_000, 0.5]]);
    expect(none?.points).toEqual([]);
  });

  it("picks up new usage from where it left off, once however many ask at once", async () => {
    const at = start + 60_000;
    await api.call("POST", "/api/events", {
      events: [{ kind: "usage.recorded", scope: "session:a", at, inputTokens: 90, id: "spend-more" }],
    });
    const r = await api.call("GET", "/api/spend?scope=session:a");
    const [series] = r.json.series as { points: number[][] }[];
    expect(series?.points.at(-1)).toEqual([at, 400, 0]);
    // Requests for the same session at once count each event once.
    await api.call("POST", "/api/events", {
      events: [
        { kind: "usage.recorded", scope: "session:a", at: at + 1, inputTokens: 100, id: "spend-again" },
      ],
    });
    const together = await Promise.all(
      Array.from({ length: 5 }, () => api.call("GET", "/api/spend?scope=session:a")),
    );
    for (const t of together) {
      const [one] = t.json.series as { points: number[][] }[];
      expect(one?.points.at(-1)).toEqual([at + 1, 500, 0]);
    }
  });

  it("is bounded: at most 20 sessions a request and 200 points a series", async () => {
    const many = Array.from({ length: SPEND_SCOPES + 1 }, (_, i) => `scope=session:s${i}`).join("&");
    expect((await api.call("GET", `/api/spend?${many}`)).status).toBe(400);
    expect((await api.call("GET", "/api/spend")).status).toBe(400);
    const long = scripted(
      "session:long",
      (t) => {
        for (let i = 0; i < 1_000; i++) t.usage({ inputTokens: 1 });
      },
      start,
    );
    await api.call("POST", "/api/events", { events: long });
    const r = await api.call("GET", "/api/spend?scope=session:long");
    const points = r.json.series[0].points as number[][];
    expect(points.length).toBe(SPEND_POINTS);
    expect(points.at(-1)?.[1]).toBe(1_000);
    expect(points[0]?.[1]).toBe(1);
  });
});

describe("GET /api/runs/:id/view", () => {
  it("builds a run's tree, checks and proof from a checkpoint saved through the API, __proto__ ids included", async () => {
    const run = pausedRun(start);
    const saved = await api.call("PUT", "/api/runs/run-paused", undefined, {
      raw: JSON.stringify({ ...run, id: undefined }),
    });
    expect(saved.status).toBe(200);
    const r = await api.call("GET", "/api/runs/run-paused/view");
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: "run-paused", status: "paused", problem: null });
    expect((r.json.nodes as { id: string }[]).map((n) => n.id)).toEqual([
      "m-web",
      "t-list",
      "__proto__",
      "t-drop",
    ]);
    expect(r.json.proof.holds).toBe(false);
    // No guard scope yet: only the resume. Once its budget is over, the extend comes first.
    expect(r.json.paused.commands).toEqual(["reins run --resume run-paused"]);
    await api.call("POST", "/api/events", {
      events: scripted("run:run-paused", (t) => t.started("claude").usage({ inputTokens: 2_000 }), start),
    });
    const after = await api.call("GET", "/api/runs/run-paused/view");
    expect(after.json.paused.commands).toEqual([
      'reins budget extend run:run-paused <tokens> --reason "..."',
      "reins run --resume run-paused",
    ]);
  });

  it("needs the token off loopback, names a bad id, and says when there is no such run", async () => {
    expect((await api.call("GET", "/api/runs/run-paused/view", undefined, { token: null })).status).toBe(401);
    const bad = await api.call("GET", `/api/runs/${encodeURIComponent("a b")}/view`);
    expect(bad.status).toBe(400);
    expect(bad.json.message).toContain("params.id");
    const none = await api.call("GET", "/api/runs/run-none/view");
    expect(none.status).toBe(404);
    expect(none.json).toMatchObject({ error: "not_found" });
  });
});

describe("npm start (reins demo --serve)", () => {
  it("runs the demo into the project's SQLite store, prints the dashboard's URL and serves it until stopped", async () => {
    const project = mkdtempSync(join(tmpdir(), "reins-start-"));
    writeFileSync(join(project, "reins.config.json"), "{}");
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const bin = join(import.meta.dirname, "..", "bin", "reins.js");
    const child = spawn(process.execPath, [bin, "demo", "--serve", "--port", String(port)], {
      cwd: project,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    let out = "";
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("reins serving")) resolve();
      });
      void closed.then((code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    try {
      expect(out).toContain(`the dashboard: http://127.0.0.1:${port}/`);
      const page = await fetch(`http://127.0.0.1:${port}/`);
      expect(await page.text()).toContain("reins dashboard");
      const sessions = (await (await fetch(`http://127.0.0.1:${port}/api/sessions`)).json()) as {
        total: number;
      };
      expect(sessions.total).toBe(6);
    } finally {
      child.kill("SIGTERM");
      expect(await closed).toBe(0);
    }
  });
});
