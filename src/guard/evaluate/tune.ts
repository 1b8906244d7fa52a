/**
 * `reins tune`: a policy fitted to the user's own runs. Loop and breaker thresholds are chosen against the
 * runaways made from those runs (metamorphic stuck and cycle runs) and the denies they give the productive
 * ones; budgets are fitted to what the successful runs spent. Pure and seeded: the same runs, outcomes and
 * seed give the same policy.
 */
import { resolvePolicy, type Policy } from "../../base/core/policy.js";
import { isToolHook, type LoggedRun } from "../logs/run.js";
import { evaluate, verdictOf, type Outcomes } from "./evaluate.js";
import { mutate, mutantVerdict, STUCK_BOUND, type Mutant } from "./metamorphic.js";
import { replayRun, type ReplayedRun } from "./replay.js";
import { sweepPolicies } from "./sweep.js";
import { seeded } from "../../base/core/seeded.js";

/** A threshold `reins tune` fits, and the values it tries. */
export interface Knob {
  field: string;
  values: number[];
}

/** The loop and breaker thresholds reins tune fits, each tried at these values (the default among them). */
export const KNOBS: readonly Knob[] = [
  { field: "circuit.duplicateThreshold", values: [3, 5, 8] },
  { field: "loops.errorRepeatBlock", values: [3, 5, 8] },
  { field: "circuit.failedVerificationThreshold", values: [2, 3, 5] },
];

/** How many runaways a tuning judges at most (a seeded sample): each is replayed once per value tried. */
export const RUNAWAYS = 200;

/** What a tuning tries: the knobs and their values, and how many runaways it samples. */
export interface TuneOptions {
  knobs?: readonly Knob[];
  runaways?: number;
}

/** How much more than the costliest good run a budget allows before it asks. */
export const BUDGET_MARGIN = 1.25;

/** What one policy does on the user's runs and on the runaways made from them. */
export interface TunePoint {
  /** Productive runs (successful, or all without outcomes) stopped, and denied (first intervention). */
  productive: { runs: number; stopped: number; denied: number };
  /** Runaways made, and those stopped within STUCK_BOUND (or before the repetition began). */
  runaways: { runs: number; inBound: number };
}

/** One knob's evidence: each value tried, and the value chosen. */
export interface KnobEvidence {
  field: string;
  default: number;
  chosen: number;
  points: { value: number; point: TunePoint }[];
}

/** A fitted budget: the spend of the productive runs and the limit chosen (null: nothing to fit). */
export interface BudgetFit {
  field: string;
  runs: number;
  median: number;
  max: number;
  limit: number | null;
}

export interface Tuning {
  /** The policy fields tune sets (what the policy file holds). */
  policy: Record<string, unknown>;
  assumed: string | null;
  knobs: KnobEvidence[];
  budgets: BudgetFit[];
  before: TunePoint;
  after: TunePoint;
  seed: number;
}

/** The runs a tuning is judged on: the logged ones with their outcomes, and the runaways made from them. */
export interface TuneSet {
  runs: { run: LoggedRun; productive: boolean }[];
  runaways: Mutant[];
}

/**
 * A runaway cut just past the bound: whether it is stopped within STUCK_BOUND is decided by then, and
 * replaying the rest of its repetitions would only cost time.
 */
function cut(mutant: Mutant): Mutant {
  const last = mutant.from + STUCK_BOUND.calls;
  let step = 0;
  const end = mutant.run.calls.findIndex((c) => isToolHook(c.input.hook_event_name) && ++step > last);
  return end < 0 ? mutant : { ...mutant, run: { ...mutant.run, calls: mutant.run.calls.slice(0, end) } };
}

/**
 * The set to tune on: each run productive when its outcome says it succeeded (every run, without
 * outcomes), and the stuck and cycle runs made from every run at `seed` (what reins saw of it under `base`).
 */
export function tuneSet(
  runs: readonly LoggedRun[],
  outcomes: Outcomes | null,
  base: Policy,
  seed: number,
  sample = RUNAWAYS,
): TuneSet {
  const set: TuneSet = { runs: [], runaways: [] };
  for (const run of runs) {
    const outcome = outcomes === null ? true : outcomes.get(run.id);
    if (outcome !== undefined) set.runs.push({ run, productive: outcome });
    const replayed = replayRun(run, base);
    for (const kind of ["stuck", "cycle"] as const) {
      const mutant = mutate(run, replayed, kind, seed);
      if (mutant !== null) set.runaways.push(cut(mutant));
    }
  }
  // A seeded sample, in the order the runs came: the same runs and seed give the same runaways.
  if (set.runaways.length > sample) {
    const random = seeded(seed);
    const keyed = set.runaways.map((m, i) => ({ m, i, key: random() }));
    const kept = keyed.sort((a, b) => a.key - b.key).slice(0, sample);
    set.runaways = kept.sort((a, b) => a.i - b.i).map((k) => k.m);
  }
  return set;
}

/** What `policy` does on a tune set. */
export function judgeTunePoint(set: TuneSet, policy: Policy): TunePoint {
  const verdicts = set.runs
    .filter((r) => r.productive)
    .map(({ run }) => verdictOf(replayRun(run, policy), true));
  const productive = evaluate(verdicts).successful;
  let inBound = 0;
  for (const mutant of set.runaways) {
    const replayed = replayRun(mutant.run, policy);
    const v = mutantVerdict(mutant, replayed, replayed, policy.budget.countCacheReads);
    const earlier = v.stop !== null && v.stop.step < mutant.from;
    const bound =
      v.callsToStop !== null &&
      v.callsToStop <= STUCK_BOUND.calls &&
      (v.tokensToStop ?? 0) <= STUCK_BOUND.tokens;
    if (earlier || bound) inBound += 1;
  }
  return {
    productive: { runs: productive.runs, stopped: productive.stopped, denied: productive.denied },
    runaways: { runs: set.runaways.length, inBound },
  };
}

/** Whether `a` is a better point than `b`: no more stops or denies on productive runs, more runaways caught. */
function better(a: TunePoint, b: TunePoint): boolean {
  if (a.productive.stopped !== b.productive.stopped) return a.productive.stopped < b.productive.stopped;
  if (a.runaways.inBound !== b.runaways.inBound) return a.runaways.inBound > b.runaways.inBound;
  return a.productive.denied < b.productive.denied;
}

/**
 * The value of one knob: the one that stops no productive run (or the fewest), denies none more than the
 * default, and catches the most runaways in bound; among equals the fewest denies, then the most lenient
 * value (a higher threshold leaves the user's future runs more room).
 */
function fitKnob(set: TuneSet, base: Policy, knob: Knob): KnobEvidence {
  const path = knob.field.split(".");
  const current = path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], base);
  const values = [...new Set([...knob.values, current as number])].sort((a, b) => a - b);
  const points = sweepPolicies(base, `${knob.field}=${values.join(",")}`).map(({ value, policy }) => ({
    value: value as number,
    point: judgeTunePoint(set, policy),
  }));
  const fallback = points.find((p) => p.value === current)!;
  let chosen = fallback;
  for (const p of points) {
    if (p.point.productive.denied > fallback.point.productive.denied) continue;
    if (better(p.point, chosen.point) || (!better(chosen.point, p.point) && p.value > chosen.value))
      chosen = p;
  }
  return { field: knob.field, default: current as number, chosen: chosen.value, points };
}

/** A limit a little above `max` that reads well: two significant figures, rounded up. */
function roundUp(value: number): number {
  if (value <= 0) return 0;
  const scale = 10 ** (Math.floor(Math.log10(value)) - 1);
  return Math.ceil(value / scale) * scale;
}

function fit(field: string, spends: number[], askAt: number, integer: boolean): BudgetFit {
  const sorted = spends.filter((s) => s > 0).sort((a, b) => a - b);
  const max = sorted[sorted.length - 1] ?? 0;
  const median = sorted[Math.floor((sorted.length - 1) / 2)] ?? 0;
  // Asked at `askAt` of the limit: that must lie past the costliest good run, by the margin.
  const raw = (max * BUDGET_MARGIN) / askAt;
  const limit = sorted.length === 0 ? null : integer ? Math.ceil(roundUp(raw)) : roundUp(raw);
  return { field, runs: sorted.length, median, max, limit };
}

/** Budgets fitted to the productive runs' spend: tokens and USD, per session and per task. */
function fitBudgets(set: TuneSet, base: Policy): BudgetFit[] {
  const replayed: ReplayedRun[] = set.runs.filter((r) => r.productive).map((r) => replayRun(r.run, base));
  const sessions = replayed.flatMap((r) => (r.state === null ? [] : [r.state.budget.session.spent]));
  const tasks = replayed.flatMap((r) =>
    r.state === null ? [] : Object.values(r.state.budget.tasks).map((t) => t.spent),
  );
  const askAt = base.budget.askAt;
  return [
    fit(
      "budget.session.tokens",
      sessions.map((s) => s.tokens),
      askAt,
      true,
    ),
    fit(
      "budget.session.usd",
      sessions.map((s) => s.usd),
      askAt,
      false,
    ),
    fit(
      "budget.task.tokens",
      tasks.map((s) => s.tokens),
      askAt,
      true,
    ),
    fit(
      "budget.task.usd",
      tasks.map((s) => s.usd),
      askAt,
      false,
    ),
  ];
}

/** Sets `field` (a dotted path) to `value` in a nested object, making the objects on the way. */
function setField(target: Record<string, unknown>, field: string, value: unknown): void {
  const path = field.split(".");
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = (node[key] ??= {}) as Record<string, unknown>;
    node = next;
  }
  node[path[path.length - 1]!] = value;
}

/**
 * Tunes a policy on `runs`: thresholds fitted one at a time from `base` against the runaways made at
 * `seed`, then budgets fitted to the productive runs' spend. Without outcomes every run is taken as
 * productive, and `assumed` says so.
 */
export function tune(
  runs: readonly LoggedRun[],
  outcomes: Outcomes | null,
  base: Policy,
  seed: number,
  options: TuneOptions = {},
): Tuning {
  const set = tuneSet(runs, outcomes, base, seed, options.runaways);
  const assumed =
    outcomes === null
      ? "no outcomes given: every run is taken as productive (no stop may land on any), and budgets fit them all"
      : null;
  const knobs = (options.knobs ?? KNOBS).map((knob) => fitKnob(set, base, knob));
  const budgets = fitBudgets(set, base);
  const policy: Record<string, unknown> = {};
  for (const k of knobs) if (k.chosen !== k.default) setField(policy, k.field, k.chosen);
  for (const b of budgets) if (b.limit !== null) setField(policy, b.field, b.limit);
  const before = judgeTunePoint(set, base);
  let tuned = applyTuning(base, policy);
  let after = judgeTunePoint(set, tuned);
  // Knobs fitted one at a time may not add up: when together they do worse, only the budgets are kept.
  if (better(before, after) || after.productive.denied > before.productive.denied) {
    for (const k of knobs) {
      k.chosen = k.default;
      const [head, ...rest] = k.field.split(".");
      const section = policy[head!] as Record<string, unknown> | undefined;
      if (section !== undefined) delete section[rest.join(".")];
    }
    tuned = applyTuning(base, policy);
    after = judgeTunePoint(set, tuned);
  }
  return { policy, assumed, knobs, budgets, before, after, seed };
}

/** `base` with a tuning's fields set: what loading its policy file over the same defaults gives. */
export function applyTuning(base: Policy, fields: Record<string, unknown>): Policy {
  const copy = structuredClone(base) as unknown as Record<string, unknown>;
  const walk = (prefix: string, value: unknown) => {
    if (value !== null && typeof value === "object" && !Array.isArray(value))
      for (const [k, v] of Object.entries(value)) walk(prefix === "" ? k : `${prefix}.${k}`, v);
    else setField(copy, prefix, value);
  };
  walk("", fields);
  return resolvePolicy(copy, "tuned policy");
}

/** A whole-number count and its share. */
const share = (n: number, of: number) => `${n} (${of === 0 ? "-" : ((100 * n) / of).toFixed(1)}%)`;

/** One point as table cells: productive stops, denies, runaways caught within the bound. */
export function pointCells(p: TunePoint): string[] {
  return [
    share(p.productive.stopped, p.productive.runs),
    share(p.productive.denied, p.productive.runs),
    share(p.runaways.inBound, p.runaways.runs),
  ];
}
