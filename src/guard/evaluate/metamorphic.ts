/**
 * Runaways and productive runs made from real runs: each transformation takes a logged run and what reins saw
 * in it, and writes the run an agent would have made had it got stuck at a real failure, or had it worked in
 * the habits reins must leave alone. Pure and seeded: the same run and seed give the same mutant.
 *
 * - `stuck`: after a real failing call, the same call again with the same result, until the run's end (and at
 *   least `MIN_REPEATS` times, as a runaway goes on);
 * - `cycle`: after a real check that followed an edit (a test run, or a call that failed, such as a
 *   reproduction script), the edit and the check again, both with the same content and result, as long;
 * - `productive`: the real run, with its own test command run after each real edit (the failing count falling
 *   by one each time, then green) and each real edit followed by another edit of the same file that changes
 *   its content.
 */
import type { UsageRecord } from "../../base/vocabulary/usage.js";
import { isToolHook, type LoggedCall, type LoggedRun } from "../logs/run.js";
import type { Policy } from "../../base/core/policy.js";
import { seeded } from "../../base/core/seeded.js";
import { replayRun, type ReplayedRun } from "./replay.js";

/** The transformations. */
export const METAMORPHOSES = ["stuck", "cycle", "productive"] as const;
export type Metamorphosis = (typeof METAMORPHOSES)[number];

/** How long a made-up runaway goes on at least: more than any bound reins states. */
export const MIN_REPEATS = 30;

/**
 * The bound reins keeps on every runaway made from a real run: it stops the agent (a person must act) within
 * this many tool calls after the repetition starts, and within this many tokens spent after it.
 */
export const STUCK_BOUND = { calls: 10, tokens: 250_000 } as const;

/** A transformed run, with the tool call (1-based) its repetition starts at (0 for a productive run). */
export interface Mutant {
  kind: Metamorphosis;
  run: LoggedRun;
  from: number;
}

/** One tool call of a run: its request and its result, by index into the run's calls. */
interface Pair {
  pre: number;
  post: number | null;
  /** 1-based. */
  step: number;
  failed: boolean;
  writes: string[];
  /** Whether reins read it as a test run. */
  test: boolean;
}

const POST_HOOKS = new Set(["PostToolUse", "PostToolUseFailure", "AfterTool"]);

/** The tool calls of a replayed run, each with what reins saw of it. */
function pairsOf(run: LoggedRun, replayed: ReplayedRun): Pair[] {
  const pairs: Pair[] = [];
  run.calls.forEach((call, index) => {
    const hook = call.input.hook_event_name;
    const events = replayed.calls[index]?.records.map((r) => r.event) ?? [];
    if (isToolHook(hook)) {
      const requested = events.find((e) => e.kind === "tool.requested");
      pairs.push({
        pre: index,
        post: null,
        step: pairs.length + 1,
        failed: false,
        writes: requested?.kind === "tool.requested" ? [...(requested.writes ?? [])] : [],
        test: false,
      });
      return;
    }
    const open = pairs[pairs.length - 1];
    if (!POST_HOOKS.has(String(hook)) || open === undefined || open.post !== null) return;
    open.post = index;
    open.failed = events.some((e) => e.kind === "tool.completed" && e.outcome !== "success");
    open.test = events.some((e) => e.kind === "verification.ran" && e.name === "tests");
  });
  return pairs;
}

/** A run's own seed: the suite's seed mixed with its id, so each run's choice is its own and stable. */
function seedOf(seed: number, id: string): number {
  let h = seed >>> 0;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** A copy of `call` as its `k`th repeat: its own call id and usage ids, at `at`. */
function repeatOf(call: LoggedCall, k: number, at: number): LoggedCall {
  const input = { ...call.input };
  if (typeof input.tool_use_id === "string") input.tool_use_id = `${input.tool_use_id}~${k}`;
  const usage = call.usage?.map((u): UsageRecord => ({ ...u, id: `${u.id}~${k}` }));
  return { at, input, ...(usage !== undefined && usage.length > 0 ? { usage } : {}) };
}

/** The calls of `pairs` (request and result) as the `k`th repeat, one period after `at`. */
function repeatPairs(run: LoggedRun, pairs: readonly Pair[], k: number, at: number, period: number) {
  const out: LoggedCall[] = [];
  let clock = at;
  for (const p of pairs) {
    clock += period;
    for (const index of [p.pre, p.post]) {
      const call = index === null ? undefined : run.calls[index];
      if (call !== undefined) out.push(repeatOf(call, k, clock + (index === p.pre ? 0 : 1)));
    }
  }
  return { calls: out, at: clock + 1 };
}

/**
 * The run up to and including the last of `chosen` (its real calls), then `chosen` repeated as they were, to
 * the run's end and at least MIN_REPEATS times.
 */
function repeated(
  run: LoggedRun,
  all: readonly Pair[],
  chosen: readonly Pair[],
  kind: Metamorphosis,
): Mutant {
  const end = chosen[chosen.length - 1]!;
  const lastIndex = end.post ?? end.pre;
  const head = run.calls.slice(0, lastIndex + 1);
  const rest = all.filter((p) => p.step > end.step).length;
  const times = Math.max(MIN_REPEATS, Math.ceil(rest / chosen.length));
  // Each repeat takes as long as the real call did from the one before it, at least a second.
  const before = run.calls[Math.max(0, chosen[0]!.pre - 1)]?.at ?? 0;
  const period = Math.max(1_000, Math.round(((run.calls[lastIndex]?.at ?? before) - before) / chosen.length));
  const calls = [...head];
  let at = run.calls[lastIndex]?.at ?? 0;
  for (let k = 1; k <= times; k++) {
    const next = repeatPairs(run, chosen, k, at, period);
    calls.push(...next.calls);
    at = next.at;
  }
  return { kind, run: { ...run, id: `${run.id}~${kind}`, calls }, from: end.step + 1 };
}

/** The made-up output of an interleaved test run: `failing` failures (pytest's summary), or green. */
function testOutput(failing: number, passed: number): { failed: boolean; text: string } {
  return failing > 0
    ? {
        failed: true,
        text: `FAILED tests/test_reins.py::test_case_${failing}\n${failing} failed, ${passed} passed in 0.52s`,
      }
    : { failed: false, text: `${passed} passed in 0.49s` };
}

/**
 * The productive twin of `run`: its own tests after each real edit, and each edit followed by another. The
 * calls it adds speak Claude Code's hooks, as every log reins reads but Gemini CLI's does.
 */
function productive(run: LoggedRun, all: readonly Pair[]): Mutant | null {
  const edits = all.filter((p) => p.writes.length > 0 && !p.failed && !p.test && p.post !== null);
  if (edits.length === 0) return null;
  const test = all.find((p) => p.test);
  const testCall = test === undefined ? undefined : run.calls[test.pre];
  const after = new Map(edits.map((p, i) => [p.post!, i]));
  const calls: LoggedCall[] = [];
  let shift = 0;
  let made = 0;
  run.calls.forEach((call, index) => {
    calls.push({ ...call, at: call.at + shift });
    const i = after.get(index);
    if (i === undefined) return;
    const base = call.input;
    const at = call.at + shift;
    const add = (input: Record<string, unknown>, ok: boolean, text: string, dt: number) => {
      made += 1;
      const id = `reins-made-${made}`;
      const tool = { tool_name: "Bash", tool_input: input, tool_use_id: id };
      const common = { session_id: base.session_id, cwd: base.cwd, prompt_id: base.prompt_id };
      calls.push({ at: at + dt, input: { ...common, hook_event_name: "PreToolUse", ...tool } });
      calls.push({
        at: at + dt + 1,
        input: ok
          ? {
              ...common,
              hook_event_name: "PostToolUse",
              ...tool,
              tool_response: { stdout: text, stderr: "", interrupted: false, isImage: false },
            }
          : {
              ...common,
              hook_event_name: "PostToolUseFailure",
              ...tool,
              error: `Exit code 1\n${text}`,
              is_interrupt: false,
            },
      });
    };
    // Another edit of the same file that changes its content: a value the agent tunes, new each time.
    const path = all.find((p) => p.post === index)?.writes[0] ?? "";
    const quoted = `'${path.replace(/'/g, "'\\''")}'`;
    add({ command: `sed -i 's/reins_value = ${i}$/reins_value = ${i + 1}/' ${quoted}` }, true, "", 1_000);
    shift += 1_000;
    if (testCall !== undefined && testCall.input.tool_input !== undefined) {
      const out = testOutput(edits.length - 1 - i, 10 + i);
      add(testCall.input.tool_input as Record<string, unknown>, !out.failed, out.text, 2_000);
      shift += 1_000;
    }
    shift += 1_000;
  });
  return { kind: "productive", run: { ...run, id: `${run.id}~productive`, calls }, from: 0 };
}

/**
 * `run` transformed by `kind` at `seed`, from what reins saw of it (`replayed`, under any policy: only what
 * was requested, written, failed and tested is read). Null when the run has nothing to transform: no failing
 * call (stuck), no check after an edit (cycle), no edit (productive).
 */
export function mutate(
  run: LoggedRun,
  replayed: ReplayedRun,
  kind: Metamorphosis,
  seed: number,
): Mutant | null {
  const all = pairsOf(run, replayed);
  if (kind === "productive") return productive(run, all);
  const random = seeded(seedOf(seed, run.id));
  if (kind === "stuck") {
    const failing = all.filter((p) => p.failed && p.post !== null);
    if (failing.length === 0) return null;
    return repeated(run, all, [failing[Math.floor(random() * failing.length)]!], "stuck");
  }
  // A check after an edit: a test run reins recognised, or any call that failed (a reproduction script).
  const cycles = all.flatMap((p, i) => {
    if (!(p.test || p.failed) || p.writes.length > 0 || p.post === null) return [];
    const edit = all.slice(0, i).findLast((q) => q.writes.length > 0 && !q.failed && q.post !== null);
    return edit === undefined ? [] : [[edit, p]];
  });
  if (cycles.length === 0) return null;
  return repeated(run, all, cycles[Math.floor(random() * cycles.length)]!, "cycle");
}

/** What reins did with one mutant. */
export interface MutantVerdict {
  id: string;
  kind: Metamorphosis;
  from: number;
  steps: number;
  stop: { step: number; guard: string } | null;
  deny: { step: number; guard: string } | null;
  /** Tool calls from the repetition's start to the stop, both counted (null: not stopped, or productive). */
  callsToStop: number | null;
  /** Tokens the agent spent from the repetition's start to the stop. */
  tokensToStop: number | null;
  /** Whether the run it was made from was stopped too (on its real calls, before anything was changed). */
  inherited: boolean;
}

const tokensOf = (u: UsageRecord, cacheReads: boolean) =>
  u.input + u.output + u.cacheWrite + (cacheReads ? u.cacheRead : 0);

/** The verdict on a replayed mutant; `cacheReads`: whether the policy counts cache reads as spend. */
export function mutantVerdict(
  mutant: Mutant,
  replayed: ReplayedRun,
  original: ReplayedRun,
  cacheReads: boolean,
): MutantVerdict {
  const stop = replayed.stop;
  const deny = replayed.deny;
  let callsToStop: number | null = null;
  let tokensToStop: number | null = null;
  if (stop !== null && mutant.from > 0 && stop.step >= mutant.from) {
    callsToStop = stop.step - mutant.from + 1;
    const start = replayed.calls.findIndex((c) => isToolHook(c.hook) && c.step === mutant.from);
    const end = replayed.calls.indexOf(stop);
    tokensToStop = mutant.run.calls
      .slice(start, end + 1)
      .reduce((n, c) => n + (c.usage ?? []).reduce((m, u) => m + tokensOf(u, cacheReads), 0), 0);
  }
  return {
    id: mutant.run.id,
    kind: mutant.kind,
    from: mutant.from,
    steps: replayed.steps,
    stop: stop === null ? null : { step: stop.step, guard: stop.guard ?? "?" },
    deny: deny === null ? null : { step: deny.step, guard: deny.guard ?? "?" },
    callsToStop,
    tokensToStop,
    inherited: original.stop !== null,
  };
}

/** What a transformation came to over many runs. */
export interface MetamorphicSummary {
  kind: Metamorphosis;
  /** Runs transformed, and runs with nothing to transform. */
  runs: number;
  skipped: number;
  stopped: number;
  /** Stuck kinds: stopped after the repetition started, within STUCK_BOUND. */
  withinBound: number;
  /** A stop before the repetition started (on the real part of the run). */
  stoppedEarlier: number;
  /** Productive: stops the run they were made from had too (the same stop on its real calls). */
  inherited: number;
  denied: number;
  calls: { median: number; max: number } | null;
  tokens: { median: number; max: number } | null;
  /** Ids of the runs that break the promise (first 20): stuck ones not stopped in bound, productive ones stopped. */
  broken: string[];
}

function spread(values: number[]): { median: number; max: number } | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted[Math.floor((sorted.length - 1) / 2)]!, max: sorted[sorted.length - 1]! };
}

/** Sums up the verdicts of one transformation. */
export function summarise(
  kind: Metamorphosis,
  verdicts: readonly MutantVerdict[],
  skipped: number,
): MetamorphicSummary {
  const inBound = (v: MutantVerdict) =>
    v.callsToStop !== null &&
    v.callsToStop <= STUCK_BOUND.calls &&
    (v.tokensToStop ?? 0) <= STUCK_BOUND.tokens;
  const earlier = (v: MutantVerdict) => v.stop !== null && v.from > 0 && v.stop.step < v.from;
  const broken =
    kind === "productive"
      ? verdicts.filter((v) => v.stop !== null && !v.inherited)
      : verdicts.filter((v) => !inBound(v) && !earlier(v));
  return {
    kind,
    runs: verdicts.length,
    skipped,
    stopped: verdicts.filter((v) => v.stop !== null).length,
    withinBound: kind === "productive" ? 0 : verdicts.filter(inBound).length,
    stoppedEarlier: verdicts.filter(earlier).length,
    inherited: kind === "productive" ? verdicts.filter((v) => v.stop !== null && v.inherited).length : 0,
    denied: verdicts.filter((v) => v.deny !== null).length,
    calls: spread(verdicts.flatMap((v) => (v.callsToStop === null ? [] : [v.callsToStop]))),
    tokens: spread(verdicts.flatMap((v) => (v.tokensToStop === null ? [] : [v.tokensToStop]))),
    broken: broken.slice(0, 20).map((v) => v.id),
  };
}

/**
 * Transforms every run by `kind` at `seed` and judges the mutants under `policy`: what `reins evaluate
 * --transform` and the efficacy benchmark print.
 */
export function judgeMetamorphosis(
  runs: readonly LoggedRun[],
  kind: Metamorphosis,
  seed: number,
  policy: Policy,
): MetamorphicSummary {
  const verdicts: MutantVerdict[] = [];
  let skipped = 0;
  for (const run of runs) {
    const original = replayRun(run, policy);
    const mutant = mutate(run, original, kind, seed);
    if (mutant === null) skipped += 1;
    else
      verdicts.push(
        mutantVerdict(mutant, replayRun(mutant.run, policy), original, policy.budget.countCacheReads),
      );
  }
  return summarise(kind, verdicts, skipped);
}
