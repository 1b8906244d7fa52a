import { readFileSync } from "node:fs";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scripted, startApi, type ApiServer } from "#test/api-server.js";

/**
 * docs/grafana/reins.json queries only what a live reins server exposes: every metric name in every
 * panel's PromQL (and in the dashboard's variables) is on /metrics after some traffic, with the labels the
 * query reads.
 */

const DASHBOARD = "docs/grafana/reins.json";

/** Labels Prometheus adds to every series when it scrapes, and a histogram bucket's bound. */
const SCRAPE_LABELS = new Set(["instance", "job", "le"]);

/** Words of PromQL that are not metric names where they stand between the parts stripped below. */
const KEYWORDS = new Set([
  "and",
  "or",
  "unless",
  "bool",
  "offset",
  "inf",
  "nan",
  "group_left",
  "group_right",
]);

/** What one PromQL expression reads: the metric names and the label names it matches or groups by. */
function promqlNames(expr: string): { metrics: string[]; labels: string[] } {
  const labels = new Set<string>();
  let rest = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
  // Label matchers: `{verdict!="allow", instance=~"$instance"}`.
  rest = rest.replace(/\{([^}]*)\}/g, (_all, inner: string) => {
    for (const m of inner.matchAll(/([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)/g)) labels.add(m[1]!);
    return " ";
  });
  // Grouping and matching clauses: `by (le)`, `without (instance)`, `on (job) group_left (agent)`.
  rest = rest.replace(
    /\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g,
    (_all, _k, inner: string) => {
      for (const name of inner.split(",")) if (name.trim() !== "") labels.add(name.trim());
      return " ";
    },
  );
  rest = rest
    .replace(/\[[^\]]*\]/g, " ") // ranges and subqueries: [5m], [$__rate_interval], [1h:1m]
    .replace(/\boffset\s+\S+/g, " ")
    .replace(/\$\{?\w+\}?/g, " "); // Grafana variables outside matchers
  const metrics = [...rest.matchAll(/(?<![\w.:$])([A-Za-z_:][A-Za-z0-9_:]*)(?![\w:])(?!\s*\()/g)]
    .map((m) => m[1]!)
    .filter((name) => !KEYWORDS.has(name.toLowerCase()));
  return { metrics: [...new Set(metrics)], labels: [...labels] };
}

interface Panel {
  title?: string;
  type: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}

/** Every PromQL query in the dashboard, named by where it is: panels (rows' too) and query variables. */
function queries(dashboard: {
  panels: Panel[];
  templating: { list: { name: string; type: string; definition?: string }[] };
}): { where: string; expr: string }[] {
  const found: { where: string; expr: string }[] = [];
  const walk = (panels: Panel[]) => {
    for (const panel of panels) {
      for (const target of panel.targets ?? [])
        if (target.expr !== undefined) found.push({ where: `panel "${panel.title}"`, expr: target.expr });
      walk(panel.panels ?? []);
    }
  };
  walk(dashboard.panels);
  for (const variable of dashboard.templating.list) {
    const match =
      variable.type === "query" ? /label_values\((.*),\s*\w+\)/.exec(variable.definition ?? "") : null;
    if (match !== null) found.push({ where: `variable $${variable.name}`, expr: match[1]! });
  }
  return found;
}

/** Every sample name on /metrics (a histogram's `_bucket`, `_sum`, `_count`) with the label names of its series. */
function exposed(text: string): Map<string, Set<string>> {
  const names = new Map<string, Set<string>>();
  for (const family of parsePrometheusTextFormat(text)) {
    if (family.metrics.length === 0) continue;
    const labels = new Set(family.metrics.flatMap((m) => Object.keys(m.labels ?? {})));
    const suffixes =
      family.type === "HISTOGRAM"
        ? ["_bucket", "_sum", "_count"]
        : family.type === "SUMMARY"
          ? ["", "_sum", "_count"]
          : [""];
    for (const suffix of suffixes) names.set(family.name + suffix, labels);
  }
  return names;
}

/** Where a query reads a metric or label that is not on /metrics; empty when it reads only what is there. */
function missing(expr: string, metrics: Map<string, Set<string>>): string[] {
  const names = promqlNames(expr);
  if (names.metrics.length === 0) return ["no metric name found"];
  const problems = names.metrics.filter((m) => !metrics.has(m)).map((m) => `metric ${m}`);
  if (problems.length > 0) return problems;
  const labels = new Set(names.metrics.flatMap((m) => [...(metrics.get(m) ?? [])]));
  for (const label of names.labels)
    if (!SCRAPE_LABELS.has(label) && !labels.has(label)) problems.push(`label ${label}`);
  return problems;
}

describe("reading metric names out of PromQL", () => {
  it.each([
    [
      'sum(rate(reins_decisions_total{instance=~"$instance"}[$__rate_interval])) * 60',
      ["reins_decisions_total"],
      ["instance"],
    ],
    [
      'histogram_quantile(0.99, sum by (le) (rate(reins_x_seconds_bucket{a="b{c}"}[5m:1m] offset 1h)))',
      ["reins_x_seconds_bucket"],
      ["a", "le"],
    ],
    [
      "sum(rate(a_sum[5m])) / on (job) group_left (agent) sum without (tool) (rate(a_count[5m]))",
      ["a_sum", "a_count"],
      ["job", "agent", "tool"],
    ],
    ["topk(10, x) > bool 1e3 and y unless z or max by(state)(w)", ["x", "y", "z", "w"], ["state"]],
  ])("%s", (expr, metrics, labels) => {
    const names = promqlNames(expr);
    expect(names.metrics).toEqual(metrics);
    expect(names.labels.sort()).toEqual(labels.sort());
  });
});

describe(`the Grafana dashboard (${DASHBOARD})`, () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as Parameters<typeof queries>[0] & {
    panels: Panel[];
  };
  let api: ApiServer;
  let metrics: Map<string, Set<string>>;

  beforeAll(async () => {
    api = await startApi({ config: { budget: { session: { tokens: 1_000 } } } });
    // Traffic that makes every reins_* series: usage and cost, a paused budget, a tripped breaker, warnings.
    const events = [
      ...scripted("session:g1", (t) =>
        t
          .started("claude")
          .usage({
            inputTokens: 100,
            outputTokens: 20,
            cacheReadTokens: 5,
            cacheWriteTokens: 3,
            costUsd: 0.25,
          })
          .read("a.ts")
          .read("a.ts")
          .read("a.ts")
          .read("a.ts"),
      ),
      ...scripted("session:g2", (t) => t.started("codex").usage({ inputTokens: 1_000, costUsd: 1.5 })),
      ...scripted("session:g3", (t) => {
        t.started("gemini");
        for (let i = 0; i < 8; i++) t.bash("npm test", { ok: false, exitCode: 1, output: "1 failed" });
      }),
    ];
    expect((await api.call("POST", "/api/events", { events })).status).toBe(200);
    const scrape = await api.call("GET", "/metrics");
    expect(scrape.status).toBe(200);
    metrics = exposed(scrape.text);
  });
  afterAll(async () => {
    await api?.close();
  });

  it("has panels of decisions, spend, budgets, the breaker, alerts and latency, each with a query", () => {
    const all = queries(dashboard);
    expect(all.length).toBeGreaterThanOrEqual(20);
    const read = new Set(all.flatMap((q) => promqlNames(q.expr).metrics));
    for (const metric of [
      "reins_decisions_total",
      "reins_tokens_used_total",
      "reins_cost_usd_total",
      "reins_budget_utilization_ratio",
      "reins_budget_pauses_total",
      "reins_budget_alerts_total",
      "reins_circuit_trips_total",
      "reins_circuit_state",
      "reins_tool_calls_total",
      "reins_decision_duration_seconds_bucket",
    ])
      expect(read, metric).toContain(metric);
  });

  it("queries only metrics and labels that are on a live /metrics", () => {
    const problems = queries(dashboard).flatMap(({ where, expr }) =>
      missing(expr, metrics).map((problem) => `${where}: ${problem} in ${expr}`),
    );
    expect(problems).toEqual([]);
  });

  it("would notice a metric or label that is not there", () => {
    expect(missing('sum(rate(reins_decisions_totl{verdict="block"}[5m]))', metrics)).toEqual([
      "metric reins_decisions_totl",
    ]);
    expect(missing("sum by (verdicts) (rate(reins_decisions_total[5m]))", metrics)).toEqual([
      "label verdicts",
    ]);
    expect(missing("rate(reins_decision_duration_seconds[5m])", metrics)).toEqual([
      "metric reins_decision_duration_seconds",
    ]);
  });
});
