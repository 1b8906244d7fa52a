import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { afterAll, describe, expect, it } from "vitest";
import { scripted, startApi, type ApiServer } from "#test/api-server.js";

/** `/metrics`, parsed with a Prometheus text-format parser, after known events and after a restart. */

const events = [
  ...scripted("session:m1", (t) =>
    t
      .started("claude")
      .usage({ inputTokens: 100, outputTokens: 20, cacheReadTokens: 5, cacheWriteTokens: 3, costUsd: 0.25 })
      .bash("ls")
      .read("a.ts"),
  ),
  ...scripted("session:m2", (t) => t.started("codex").usage({ inputTokens: 1_000, costUsd: 1.5 })),
  ...scripted("session:m3", (t) => {
    t.started("claude");
    for (let i = 0; i < 8; i++) t.bash("npm test", { ok: false, exitCode: 1, output: "1 failed" });
  }),
];

type Families = ReturnType<typeof parsePrometheusTextFormat>;

async function scrape(api: ApiServer): Promise<Families> {
  const r = await api.call("GET", "/metrics");
  expect(r.status).toBe(200);
  return parsePrometheusTextFormat(r.text);
}

/** The value of one series, or undefined when it is not there. */
function value(families: Families, name: string, labels: Record<string, string> = {}): number | undefined {
  const family = families.find((f) => f.name === name);
  const sample = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  if (sample === undefined) return undefined;
  return Number(sample.value ?? sample.count);
}

const servers: ApiServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close().catch(() => undefined);
});

describe("/metrics", () => {
  let first: Families;
  let project: string;

  it("counts tokens, cost, pauses, trips, breaker states, tool calls and decisions from known events", async () => {
    const api = await startApi({ config: { budget: { session: { tokens: 1_000 } } } });
    servers.push(api);
    project = api.project;
    expect((await api.call("POST", "/api/events", { events })).status).toBe(200);
    first = await scrape(api);
    const tokens = (agent: string, type: string) =>
      value(first, "reins_tokens_used_total", { agent, budget_type: "session", token_type: type });
    expect(tokens("claude", "input")).toBe(100);
    expect(tokens("claude", "output")).toBe(20);
    expect(tokens("claude", "cacheRead")).toBe(5);
    expect(tokens("claude", "cacheWrite")).toBe(3);
    expect(tokens("codex", "input")).toBe(1_000);
    expect(value(first, "reins_cost_usd_total", { agent: "codex", budget_type: "session" })).toBe(1.5);
    expect(value(first, "reins_cost_usd_total", { agent: "claude", budget_type: "session" })).toBe(0.25);
    expect(value(first, "reins_budget_utilization_ratio", { agent: "codex", budget_type: "session" })).toBe(
      1,
    );
    expect(value(first, "reins_budget_pauses_total")).toBe(1);
    expect(value(first, "reins_budget_alerts_total", { alert_type: "budget_paused" })).toBe(1);
    expect(value(first, "reins_circuit_trips_total", { trip_reason: "duplicate_calls" })).toBe(1);
    expect(value(first, "reins_circuit_state", { state: "open" })).toBe(1);
    expect(value(first, "reins_circuit_state", { state: "closed" })).toBe(2);
    expect(value(first, "reins_circuit_state", { state: "half_open" })).toBe(0);
    expect(value(first, "reins_tool_calls_total", { tool: "Bash" })).toBe(9);
    expect(value(first, "reins_tool_calls_total", { tool: "Read" })).toBe(1);
    expect(
      value(first, "reins_decisions_total", { verdict: "block", guard: "circuit-breaker" }),
    ).toBeGreaterThan(0);
    const decisions = first.find((f) => f.name === "reins_decisions_total")!.metrics;
    const total = decisions.reduce((sum, m) => sum + Number(m.value), 0);
    expect(total).toBe(events.length);
    // One observation per recorded batch: the ingest wrote three scopes.
    expect(value(first, "reins_decision_duration_seconds")).toBe(3);
  });

  it("gives the same totals after a restart (they come from the store, not the process)", async () => {
    await servers[0]!.close();
    const again = await startApi({ project });
    servers.push(again);
    const second = await scrape(again);
    for (const family of first) {
      if (!family.name.startsWith("reins_") || family.type === "HISTOGRAM") continue;
      for (const sample of family.metrics)
        expect(
          value(second, family.name, sample.labels ?? {}),
          `${family.name} ${JSON.stringify(sample.labels)}`,
        ).toBe(Number(sample.value));
    }
    expect(value(second, "reins_decision_duration_seconds")).toBe(0);
  });

  it("keeps label sets bounded: no session id ever becomes a label", async () => {
    const api = await startApi();
    servers.push(api);
    const many = [];
    for (let i = 0; i < 60; i++)
      many.push(
        ...scripted(`session:s${i}`, (t) =>
          t.started(`agent-${i % 3}`).call(`mcp__tool_${i}`, { i }, {}, null),
        ),
      );
    expect((await api.call("POST", "/api/events", { events: many })).status).toBe(200);
    const families = await scrape(api);
    for (const family of families)
      for (const sample of family.metrics)
        for (const label of Object.values(sample.labels ?? {})) expect(label).not.toMatch(/^session:/);
    // Agents outside the known ones are summed as `other`.
    const agents = new Set(
      families.find((f) => f.name === "reins_cost_usd_total")!.metrics.map((m) => m.labels?.agent),
    );
    expect([...agents]).toEqual(["other"]);
    // 60 distinct tools are summed into 50 names and `other`.
    const tools = families.find((f) => f.name === "reins_tool_calls_total")!.metrics;
    expect(tools.length).toBe(51);
    expect(value(families, "reins_tool_calls_total", { tool: "other" })).toBe(10);
  });
});
