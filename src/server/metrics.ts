/** The Prometheus metrics at /metrics, derived from the store's states at scrape time. */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Policy } from "../base/core/policy.js";
import type { State } from "../base/core/state.js";
import type { Store, StoreUsage } from "../base/core/store.js";
import type { StateScan } from "./scan.js";
import { tallyOf } from "../base/core/tally.js";
import { SDK_AGENT_NAMES } from "../guard/adapters/names.js";
import { AGENT_NAMES, type AgentName } from "../guard/hooks/agent-adapter.js";
import { currentSummary } from "../guard/people/scope-view.js";

/** At most this many tool names become label values; the rest are summed under `other`. */
const MAX_TOOL_LABELS = 50;

/** Agents named in labels; any other name is `other`, so a client cannot grow the label set. */
const AGENTS = new Set<string>([...AGENT_NAMES, ...SDK_AGENT_NAMES, "scripted"]);

/** The names reins' hooks once wrote in `session.started`, still found in stored sessions. */
const FORMER_NAMES: Readonly<Record<string, AgentName>> = { "claude-code": "claude", "gemini-cli": "gemini" };

/** The `agent` label of a session's recorded agent: its one name, `unknown` when unsaid, else `other`. */
export function agentLabel(recorded: string): string {
  if (recorded === "") return "unknown";
  const name = Object.hasOwn(FORMER_NAMES, recorded) ? FORMER_NAMES[recorded]! : recorded;
  return AGENTS.has(name) ? name : "other";
}

type Labels = Record<string, string>;

/** Sums keyed by a label set, turned into series at scrape time. */
class Sums {
  readonly #values = new Map<string, { labels: Labels; value: number }>();
  add(labels: Labels, value: number): void {
    const key = JSON.stringify(labels);
    const entry = this.#values.get(key);
    if (entry === undefined) this.#values.set(key, { labels, value });
    else entry.value += value;
  }
  max(labels: Labels, value: number): void {
    const key = JSON.stringify(labels);
    const entry = this.#values.get(key);
    if (entry === undefined) this.#values.set(key, { labels, value });
    else entry.value = Math.max(entry.value, value);
  }
  entries() {
    return this.#values.values();
  }
}

/** What one scrape reads from the store, summed over every scope. */
interface Snapshot {
  tokens: Sums;
  cost: Sums;
  utilization: Sums;
  alerts: Sums;
  pauses: number;
  trips: Sums;
  circuits: Sums;
  tools: Sums;
  decisions: Sums;
}

/** `session`, `pool` or `scope` (anything else): the budget_type label of a scope. */
function budgetType(scope: string): string {
  if (scope.startsWith("session:")) return "session";
  if (scope.startsWith("pool:")) return "pool";
  return "scope";
}

function snapshotOf(states: State[], policy: Policy, now: number): Snapshot {
  const s: Snapshot = {
    tokens: new Sums(),
    cost: new Sums(),
    utilization: new Sums(),
    alerts: new Sums(),
    pauses: 0,
    trips: new Sums(),
    circuits: new Sums(),
    tools: new Sums(),
    decisions: new Sums(),
  };
  for (const status of ["closed", "open", "half_open"]) s.circuits.add({ state: status }, 0);
  const tools = new Map<string, number>();
  for (const state of states) {
    const t = tallyOf(state);
    const type = budgetType(state.scope);
    const agent = type === "pool" ? "pool" : agentLabel(t.agent);
    for (const [tokenType, n] of Object.entries(t.tokens))
      s.tokens.add({ agent, budget_type: type, token_type: tokenType }, n);
    s.cost.add({ agent, budget_type: type }, t.usd);
    if (!state.ended) {
      const summary = currentSummary(state, policy, now);
      const ratio = Math.max(0, ...summary.budget.map((b) => b.ratio));
      s.utilization.max({ agent, budget_type: type }, ratio);
    }
    for (const [kind, n] of Object.entries(t.alerts)) s.alerts.add({ alert_type: kind }, n);
    s.pauses += t.alerts.budget_paused ?? 0;
    // A pool is charged with its sessions' calls: counting its calls and decisions again would double them.
    if (type === "pool") continue;
    s.circuits.add({ state: state.breaker.status }, 1);
    for (const [reason, n] of Object.entries(t.trips)) s.trips.add({ trip_reason: reason }, n);
    for (const [tool, n] of Object.entries(t.tools)) tools.set(tool, (tools.get(tool) ?? 0) + n);
    for (const [key, n] of Object.entries(t.decisions)) {
      const [verdict = "", guard = ""] = key.split(" ");
      s.decisions.add({ verdict, guard }, n);
    }
  }
  const ranked = [...tools].sort((a, b) => b[1] - a[1]);
  ranked.forEach(([tool, n], i) => s.tools.add({ tool: i < MAX_TOOL_LABELS ? tool : "other" }, n));
  return s;
}

/**
 * reins' Prometheus metrics. Totals are derived from the store's states at scrape time (each state
 * keeps a bounded tally), so they are right after a restart and count the work of every process that
 * shares the store; only the decision latency histogram is this process's own.
 */
export function createMetrics(scan: StateScan, policy: Policy, store?: Pick<Store, "kind" | "usage">) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  let snapshot: Snapshot = snapshotOf([], policy, 0);
  let usage: StoreUsage | null = null;

  const fill = (metric: Counter<string> | Gauge<string>, sums: Sums) => {
    metric.reset();
    for (const { labels, value } of sums.entries()) metric.inc(labels, value);
  };
  const counter = (name: string, help: string, labelNames: string[], pick: (s: Snapshot) => Sums) =>
    new Counter({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        fill(this, pick(snapshot));
      },
    });
  const gauge = (name: string, help: string, labelNames: string[], pick: (s: Snapshot) => Sums) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        for (const { labels, value } of pick(snapshot).entries()) this.set(labels, value);
      },
    });

  counter(
    "reins_tokens_used_total",
    "Tokens recorded, by agent, budget type and token type.",
    ["agent", "budget_type", "token_type"],
    (s) => s.tokens,
  );
  counter(
    "reins_cost_usd_total",
    "Cost recorded in US dollars, by agent and budget type.",
    ["agent", "budget_type"],
    (s) => s.cost,
  );
  gauge(
    "reins_budget_utilization_ratio",
    "The highest budget utilisation (0..1+) among live scopes, by agent and budget type.",
    ["agent", "budget_type"],
    (s) => s.utilization,
  );
  counter("reins_budget_alerts_total", "Alerts raised, by type.", ["alert_type"], (s) => s.alerts);
  new Counter({
    name: "reins_budget_pauses_total",
    help: "Budgets paused at 100%.",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(snapshot.pauses);
    },
  });
  counter("reins_circuit_trips_total", "Circuit breaker trips, by reason.", ["trip_reason"], (s) => s.trips);
  gauge(
    "reins_circuit_state",
    "Sessions whose circuit breaker is in each state.",
    ["state"],
    (s) => s.circuits,
  );
  counter("reins_tool_calls_total", "Tool calls requested, by tool.", ["tool"], (s) => s.tools);
  counter(
    "reins_decisions_total",
    "Decisions, by verdict and the guard that gave it (none for allow).",
    ["verdict", "guard"],
    (s) => s.decisions,
  );
  // How much the store holds, counted at scrape time only (a count of two tables on SQLite).
  const held = (name: string, help: string, pick: (u: StoreUsage) => number | null) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        const value = usage === null ? null : pick(usage);
        if (value !== null) this.set(value);
      },
    });
  // Only where the store can say: a gauge left unset would read 0.
  if (store?.usage !== undefined) {
    held("reins_store_scopes", "Scopes the store holds.", (u) => u.scopes);
    held(
      "reins_store_events",
      "Log records (events with their decisions) the store holds.",
      (u) => u.records,
    );
  }
  if (store?.kind === "sqlite")
    held("reins_store_bytes", "Size of the store's file (page_count * page_size).", (u) => u.bytes);
  const duration = new Histogram({
    name: "reins_decision_duration_seconds",
    help: "Time to record a batch of events and decide on it through the store, in this process.",
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });

  return {
    registry,
    /** Observes one decision's duration in seconds. */
    observe: (seconds: number) => duration.observe(seconds),
    /** The exposition text, after reading every scope's state from the store. */
    async text(now: number): Promise<string> {
      snapshot = snapshotOf(await scan.states(), policy, now);
      usage = store?.usage === undefined ? null : await store.usage();
      return registry.metrics();
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
