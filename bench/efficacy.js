// Efficacy: does reins stop the stuck and leave the productive alone? reins' default policy beside three
// baselines implemented here on the same replayed tool calls: a Gemini-CLI-like rule (5 identical calls in a
// row), an OpenHands-StuckDetector-like one (4 identical action/observation pairs, 3 identical
// action/error pairs, A-B-A-B over 6 steps), and plain step caps of 30 and 100 calls.
// `npm run bench -- efficacy` runs the bundled scripted sessions; add `--corpus <dir> --outcomes <file>` to
// run a real corpus of agent logs with known outcomes instead.
import { defaultPolicy } from "../dist/base/core/policy.js";
import { evaluate, parseOutcomes, verdictOf } from "../dist/guard/evaluate/evaluate.js";
import { replayRun } from "../dist/guard/evaluate/replay.js";
import { scenarios } from "../dist/guard/evaluate/scenarios.js";
import { judgeMetamorphosis, METAMORPHOSES, STUCK_BOUND } from "../dist/guard/evaluate/metamorphic.js";
import { sweepPolicies } from "../dist/guard/evaluate/sweep.js";
import { logFiles, readLog } from "../dist/guard/logs/load.js";
import { readFileSync } from "node:fs";

/** The run's tool calls in order: what was asked (action) and what came back (observation). */
function toolCalls(replayed) {
  const calls = [];
  const byId = new Map();
  for (const call of replayed.calls) {
    for (const { event } of call.records) {
      if (event.kind === "tool.requested") {
        const entry = { action: `${event.tool}#${event.inputHash}`, observation: null, error: null };
        calls.push(entry);
        if (event.callId !== undefined) byId.set(event.callId, entry);
      } else if (event.kind === "tool.completed") {
        const entry = (event.callId !== undefined ? byId.get(event.callId) : undefined) ?? calls.at(-1);
        if (entry === undefined) continue;
        entry.observation = event.outputHash ?? "";
        entry.error = event.outcome === "success" ? null : (event.errorHash ?? event.outputHash ?? "error");
      }
    }
  }
  return calls;
}

/** The 1-based call a baseline stops at, or null. */
const baselines = {
  "gemini-cli-like (5 identical calls)": (calls) => {
    let streak = 0;
    for (let i = 0; i < calls.length; i++) {
      streak = i > 0 && calls[i].action === calls[i - 1].action ? streak + 1 : 1;
      if (streak >= 5) return i + 1;
    }
    return null;
  },
  "openhands-like (stuck detector)": (calls) => {
    for (let i = 0; i < calls.length; i++) {
      const last = (n) => calls.slice(i - n + 1, i + 1);
      const same = (xs, key) => xs.every((x) => x[key] === xs[0][key]);
      // The observation of call i is known once it ran: the detector looks after each step.
      if (i >= 3 && same(last(4), "action") && same(last(4), "observation")) return i + 1;
      if (
        i >= 2 &&
        same(last(3), "action") &&
        last(3).every((c) => c.error !== null) &&
        same(last(3), "error")
      )
        return i + 1;
      if (i >= 5) {
        const six = last(6);
        const alternates = (key) =>
          six[0][key] === six[2][key] &&
          six[2][key] === six[4][key] &&
          six[1][key] === six[3][key] &&
          six[3][key] === six[5][key];
        if (six[0].action !== six[1].action && alternates("action") && alternates("observation"))
          return i + 1;
      }
    }
    return null;
  },
  "max 30 calls": (calls) => (calls.length > 30 ? 31 : null),
  "max 100 calls": (calls) => (calls.length > 100 ? 101 : null),
};

/** A baseline's verdict in the form reins' evaluation counts. */
function baselineVerdict(replayed, stopAt, outcome) {
  const steps = replayed.steps;
  return {
    id: replayed.run.id,
    outcome,
    steps,
    stop: stopAt === null ? null : { step: stopAt, hook: "PostToolUse", guard: "baseline", told: "" },
    deny: null,
    advised: false,
    refusedDone: 0,
    saved: stopAt === null ? 0 : steps - stopAt,
  };
}

const pct = (n, of) => (of === 0 ? "-" : `${n}/${of} (${((100 * n) / of).toFixed(1)}%)`);

function row(name, e) {
  const held = e.runs.filter(
    (v) => v.outcome === false && (v.stop !== null || v.deny !== null || v.refusedDone > 0),
  ).length;
  return {
    name,
    held: pct(held, e.failed.runs),
    falseStops: pct(e.successful.stopped, e.successful.runs),
    anyDeny: pct(e.successful.denied, e.successful.runs),
    caught: pct(e.failed.stopped, e.failed.runs),
    precision: e.precision === null ? "-" : `${(100 * e.precision).toFixed(1)}%`,
    saved: pct(e.failed.saved, e.failed.steps),
  };
}

function compare(report, label, replayedRuns, outcomeOf) {
  const reins = evaluate(replayedRuns.map((r) => verdictOf(r, outcomeOf(r))));
  const rows = [row("reins (default policy)", reins)];
  for (const [name, rule] of Object.entries(baselines)) {
    const e = evaluate(replayedRuns.map((r) => baselineVerdict(r, rule(toolCalls(r)), outcomeOf(r))));
    rows.push(row(name, e));
  }
  for (const r of rows)
    report(`efficacy (${label}): ${r.name}`, `false stops ${r.falseStops}; stuck caught ${r.caught}`, {
      "any deny on good runs": r.anyDeny,
      "bad runs stopped, denied or refused done": r.held,
      "stops on bad runs": r.precision,
      "calls of bad runs saved": r.saved,
    });
  return reins;
}

/** The threshold each transformation's curve is drawn over: the rule that stops (or must spare) it. */
const CURVES = {
  stuck: "circuit.duplicateThreshold=3,5,8",
  cycle: "circuit.deniedRetryThreshold=1,2,3",
  productive: "wip.maxRetriesPerFailureClass=4,8,16",
};

/**
 * The metamorphic suite in full (see src/guard/evaluate/metamorphic.ts): every real run made into a runaway two
 * ways and into a productive twin, at seed 1, under the default policy, then each kind's curve over the
 * threshold that decides it.
 */
function metamorphic(report, runs) {
  const line = (s) => ({
    made: `${s.runs} of ${s.runs + s.skipped} runs (${s.skipped} with nothing to transform)`,
    stopped: pct(s.stopped, s.runs),
    ...(s.kind === "productive"
      ? { "stops their runs already had": `${s.inherited}` }
      : {
          [`in bound (<=${STUCK_BOUND.calls} calls, <=${STUCK_BOUND.tokens} tokens)`]: pct(
            s.withinBound + s.stoppedEarlier,
            s.runs,
          ),
        }),
    "calls to stop (median/max)": s.calls === null ? "-" : `${s.calls.median}/${s.calls.max}`,
    "tokens to stop (median/max)": s.tokens === null ? "-" : `${s.tokens.median}/${s.tokens.max}`,
    "any deny": pct(s.denied, s.runs),
    broken: s.broken.length === 0 ? "none" : s.broken.join(", "),
  });
  for (const kind of METAMORPHOSES) {
    const t0 = performance.now();
    const s = judgeMetamorphosis(runs, kind, 1, defaultPolicy);
    const held = s.broken.length === 0 ? "kept" : `BROKEN on ${s.broken.length}`;
    report(
      `efficacy: metamorphic ${kind}`,
      `${held} (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
      line(s),
    );
    for (const { value, policy } of sweepPolicies(defaultPolicy, CURVES[kind])) {
      const point = judgeMetamorphosis(runs, kind, 1, policy);
      report(
        `efficacy: metamorphic ${kind} at ${CURVES[kind].split("=")[0]}=${value}`,
        point.broken.length === 0 ? "kept" : `broken on ${point.broken.length}`,
        line(point),
      );
    }
  }
}

export async function efficacyBench(report, args = []) {
  const corpus = args.indexOf("--corpus");
  if (corpus >= 0) {
    const dir = args[corpus + 1];
    const outcomesAt = args.indexOf("--outcomes");
    if (dir === undefined || outcomesAt < 0 || args[outcomesAt + 1] === undefined)
      throw new Error("efficacy: --corpus <dir> needs --outcomes <file>");
    const outcomes = parseOutcomes(JSON.parse(readFileSync(args[outcomesAt + 1], "utf8")));
    const t0 = performance.now();
    const runs = [];
    for (const file of logFiles(dir)) {
      let run;
      try {
        run = readLog(file);
      } catch {
        continue; // not a log (the outcomes file, a summary): `reins evaluate` names these
      }
      runs.push(replayRun(run, defaultPolicy));
    }
    const ms = performance.now() - t0;
    compare(report, `corpus ${dir}`, runs, (r) => outcomes.get(r.run.id) ?? null);
    report("efficacy: replay speed", `${runs.length} runs in ${(ms / 1000).toFixed(1)} s`, {
      "per run": `${(ms / runs.length).toFixed(1)} ms`,
    });
    metamorphic(
      report,
      runs.map((r) => r.run),
    );
    return;
  }
  const list = scenarios();
  // A stuck session counts as "failed", a productive one as "successful": the same table as a real corpus.
  const runs = list.map((s) => replayRun(s.run, defaultPolicy));
  const stuck = new Map(list.map((s) => [s.name, s.stuck]));
  compare(report, "scripted sessions", runs, (r) => !stuck.get(r.run.id));
  for (const [i, s] of list.entries()) {
    const r = runs[i];
    const what =
      r.stop !== null
        ? `stopped at call ${r.stop.step} (${r.stop.guard})`
        : r.deny !== null
          ? `denied at call ${r.deny.step} (${r.deny.guard})`
          : r.refusedDone > 0
            ? `"done" refused ${r.refusedDone}x`
            : "left alone";
    report(`efficacy: ${s.stuck ? "stuck" : "productive"} ${s.name}`, what, { session: s.what });
  }
}
