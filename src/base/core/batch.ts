/**
 * The one operation every store performs inside its transaction: apply a batch of a scope's events,
 * charge the project's pools, and say what to write. Pure: the store loads what `scopesFor` names,
 * passes it in, and writes what comes back.
 */
import type { Decision, DecisionAlert } from "./decision.js";
import { advance } from "./engine.js";
import { pipeline, type Pipeline } from "./pipeline.js";
import { ReinsError } from "./errors.js";
import type { ReinsEvent } from "./reins-event.js";
import { budget } from "./guards/budget.js";
import { periodLabel } from "./period.js";
import type { Policy } from "./policy.js";
import { initialState, type State } from "./state.js";

/** An event as kept in a scope's log, with the decision recorded for it. */
export interface LogRecord {
  scope: string;
  seq: number;
  event: ReinsEvent;
  decision: Decision;
}

/** An alert raised by a decision, as stored. Its id is stable: `<scope>#<seq>#<index>`. */
export interface StoredAlert extends DecisionAlert {
  id: string;
  scope: string;
  seq: number;
  at: number;
  acknowledged: boolean;
  acknowledgedBy: string | null;
}

/** What the caller gets for one event: the combined decision of the scope and its pools, or null for a duplicate. */
export type Answer = Decision | null;

export interface BatchResult {
  answers: Answer[];
  /** New states of every scope the batch changed, to write as snapshots. */
  states: Map<string, State>;
  records: LogRecord[];
  alerts: StoredAlert[];
}

/** Events a pool is charged with: they spend. */
function chargesPool(event: ReinsEvent): boolean {
  return (event.kind === "usage.recorded" || event.kind === "tool.requested") && event.pools !== false;
}

/** The scope of pool `name` for an event at `at`: `pool:team`, or `pool:team@2026-01-05` for a daily pool. */
export function poolScope(name: string, at: number, policy: Policy): string {
  const label = periodLabel(at, policy.pools[name]?.period ?? "none");
  return label === "" ? `pool:${name}` : `pool:${name}@${label}`;
}

/** Every scope a batch may read or write: the scope itself and the pools its events charge. */
export function scopesFor(scope: string, events: readonly ReinsEvent[], policy: Policy): string[] {
  const scopes = new Set([scope]);
  if (!scope.startsWith("pool:")) {
    for (const name of Object.keys(policy.pools)) {
      for (const event of events) if (chargesPool(event)) scopes.add(poolScope(name, event.at, policy));
    }
  }
  return [...scopes];
}

const poolPolicies = new WeakMap<Policy, Map<string, Policy>>();
/** Pools run only the budget guard: their events come from many sessions. */
export const poolPipeline: Pipeline = pipeline([budget]);

/** The policy a pool's own state runs under: its limits as the "session" meter, only the budget guard. */
export function poolPolicy(policy: Policy, name: string): Policy {
  let byName = poolPolicies.get(policy);
  if (byName === undefined) {
    byName = new Map();
    poolPolicies.set(policy, byName);
  }
  let derived = byName.get(name);
  if (derived === undefined) {
    const pool = policy.pools[name];
    derived = {
      ...policy,
      budget: {
        ...policy.budget,
        session: {
          tokens: pool?.tokens ?? null,
          usd: pool?.usd ?? null,
          premiumRequests: pool?.premiumRequests ?? null,
          toolCalls: pool?.toolCalls ?? null,
          wallTimeMs: null,
        },
      },
    };
    byName.set(name, derived);
  }
  return derived;
}

/** The policy a scope's decisions are made under: a pool's own, or the project's. */
export function policyFor(scope: string, policy: Policy): Policy {
  if (!scope.startsWith("pool:")) return policy;
  return poolPolicy(policy, scope.slice(5).split("@")[0] ?? "");
}

/** The worse of two decisions, keeping both's guard results, instructions and alerts. */
function combine(own: Decision, pool: Decision): Decision {
  const rank = { allow: 0, warn: 1, block: 2 } as const;
  if (pool.verdict === "allow" && pool.alerts.length === 0) return own;
  return {
    seq: own.seq,
    verdict: rank[pool.verdict] > rank[own.verdict] ? pool.verdict : own.verdict,
    needsHuman: own.needsHuman || pool.needsHuman,
    results: [...own.results, ...pool.results.filter((r) => r.verdict !== "allow")],
    instructions:
      pool.verdict === "block"
        ? [...pool.instructions, ...own.instructions]
        : [...own.instructions, ...pool.instructions],
    alerts: [...own.alerts, ...pool.alerts],
  };
}

function alertsOf(record: LogRecord): StoredAlert[] {
  return record.decision.alerts.map((alert, i) => ({
    ...alert,
    id: `${record.scope}#${record.seq}#${i}`,
    scope: record.scope,
    seq: record.seq,
    at: record.event.at,
    acknowledged: false,
    acknowledgedBy: null,
  }));
}

/**
 * Runs the engine on one event. A fault of the engine on what the event holds refuses the batch
 * (`invalid_event`): it must never pass for a store that is down, which would spool the events and fail
 * again at every later delivery. The store's own reads (`load`, `seen`) stay outside, as the store's.
 */
function engine<T>(apply: () => T): T {
  try {
    return apply();
  } catch (error) {
    if (ReinsError.is(error)) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new ReinsError("invalid_event", `could not apply the events: ${message.split("\n")[0] ?? ""}`, {
      cause: error,
    });
  }
}

/**
 * The decision a pool already recorded for its charge of `event` (one of the batch's), or undefined when
 * the pool is still to be charged. For a store that charges pools in steps of their own before the
 * session (Redis Cluster, where one script cannot reach two scopes).
 */
export type ChargedPool = (pool: string, event: ReinsEvent) => Decision | undefined;

/**
 * The key a pool keeps a session's event under, to be charged once however often the event is delivered:
 * the session's scope and the event's id (a scope is one line, so the newline cannot occur in either).
 */
export function chargeKey(scope: string, id: string): string {
  return `${scope}\n${id}`;
}

/**
 * The session event each pool record of `records` charges, in a batch of `scope`: the pool's record
 * follows the session's record of the event it charges.
 */
export function chargeSources(scope: string, records: readonly LogRecord[]): Map<LogRecord, ReinsEvent> {
  const sources = new Map<LogRecord, ReinsEvent>();
  let source: ReinsEvent | undefined;
  for (const record of records) {
    if (record.scope === scope) source = record.event;
    else if (source !== undefined) sources.set(record, source);
  }
  return sources;
}

/**
 * Applies `events` (all of `scope`) in order. `load` returns a scope's current state (null when new);
 * `seen` says whether an event id was already applied to a scope: such events are skipped (answer null),
 * so a retried delivery is counted exactly once. Loaded states are mutated; callers pass fresh copies.
 * `guards` decide the scope's events (@default the built-in pipeline); pools are always charged by budget.
 * A pool charge `charged` knows of is not applied again: its recorded decision is combined into the answer.
 */
export function applyBatch(
  scope: string,
  events: readonly ReinsEvent[],
  policy: Policy,
  load: (scope: string) => State | null,
  seen: (scope: string, id: string) => boolean,
  guards?: Pipeline,
  charged?: ChargedPool,
): BatchResult {
  const states = new Map<string, State>();
  const stateOf = (s: string) => {
    let state = states.get(s);
    if (state === undefined) {
      state = load(s) ?? initialState(s);
      states.set(s, state);
    }
    return state;
  };
  const answers: Answer[] = [];
  const records: LogRecord[] = [];
  const ids = new Set<string>();
  const pools = scope.startsWith("pool:") ? [] : Object.keys(policy.pools);
  for (const event of events) {
    if (event.id !== undefined && (ids.has(event.id) || seen(scope, event.id))) {
      answers.push(null);
      continue;
    }
    if (event.id !== undefined) ids.add(event.id);
    const state = stateOf(scope);
    const record: LogRecord = {
      scope,
      seq: state.seq,
      event,
      decision: engine(() => advance(state, event, policy, guards)),
    };
    records.push(record);
    let answer = record.decision;
    if (chargesPool(event)) {
      for (const name of pools) {
        const target = poolScope(name, event.at, policy);
        const recorded = charged?.(target, event);
        if (recorded !== undefined) {
          answer = combine(answer, recorded);
          continue;
        }
        const poolState = stateOf(target);
        const { task: _task, id: _id, ...rest } = event;
        const charge = { ...rest, scope: target } as ReinsEvent;
        const decision = engine(() => advance(poolState, charge, poolPolicy(policy, name), poolPipeline));
        records.push({ scope: target, seq: decision.seq, event: charge, decision });
        answer = combine(answer, decision);
      }
    }
    answers.push(answer);
  }
  return { answers, states, records, alerts: records.flatMap(alertsOf) };
}
