import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultPolicy } from "../../base/core/policy.js";
import { logFiles, readLog } from "../logs/load.js";
import { isToolHook, type LoggedRun } from "../logs/run.js";
import {
  judgeMetamorphosis,
  MIN_REPEATS,
  mutate,
  mutantVerdict,
  STUCK_BOUND,
  type Metamorphosis,
} from "./metamorphic.js";
import { replayRun } from "./replay.js";

/**
 * The metamorphic suite: runaways and productive twins made from real runs. The fixtures are small real
 * logs of each agent; the sample of ../shared/corpus (when this checkout has it) is the suite `npm run
 * bench -- efficacy --corpus` runs in full.
 */

const SEED = 1;
const fixture = (name: string) => readLog(join("test", "fixtures", "logs", name));
const made = (run: LoggedRun, kind: Metamorphosis, seed = SEED) => {
  const mutant = mutate(run, replayRun(run, defaultPolicy), kind, seed);
  if (mutant === null) throw new Error(`${run.id}: nothing to make a ${kind} run of (seed ${seed})`);
  return mutant;
};
const verdict = (run: LoggedRun, kind: Metamorphosis) => {
  const mutant = made(run, kind);
  return mutantVerdict(mutant, replayRun(mutant.run, defaultPolicy), replayRun(run, defaultPolicy), false);
};
const toolIds = (run: LoggedRun) =>
  run.calls.filter((c) => isToolHook(c.input.hook_event_name)).map((c) => c.input.tool_use_id);

describe("a stuck run made from a real one", () => {
  const real = fixture("mini-swe-agent.traj.json");

  it("keeps the real run up to a failing call, then repeats that call to the run's end and past it", () => {
    const mutant = made(real, "stuck");
    const head = mutant.run.calls.slice(0, mutant.run.calls.length - 2 * MIN_REPEATS);
    expect(real.calls.slice(0, head.length)).toEqual(head);
    const failing = head.at(-1)!;
    expect(failing.input.hook_event_name).toBe("PostToolUseFailure");
    const repeats = mutant.run.calls.slice(head.length);
    expect(repeats).toHaveLength(2 * MIN_REPEATS);
    for (const call of repeats) expect(call.input.tool_input).toEqual(failing.input.tool_input);
    expect(mutant.from).toBe(toolIds(mutant.run).length - MIN_REPEATS + 1);
  });

  it("gives every repeat its own call id, and time that never goes back", () => {
    const run = made(real, "stuck").run;
    expect(new Set(toolIds(run)).size).toBe(toolIds(run).length);
    const times = run.calls.map((c) => c.at);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it("is the same run for the same seed", () => {
    expect(made(real, "stuck", 7)).toEqual(made(real, "stuck", 7));
  });

  it.each(["mini-swe-agent.traj.json", "claude-code-2.1.330.jsonl", "swe-agent-1.traj"])(
    "is stopped within the bound (%s)",
    (name) => {
      const v = verdict(fixture(name), "stuck");
      expect(v.stop, `seed ${SEED}`).not.toBeNull();
      expect(v.callsToStop!).toBeLessThanOrEqual(STUCK_BOUND.calls);
      expect(v.tokensToStop!).toBeLessThanOrEqual(STUCK_BOUND.tokens);
    },
  );
});

describe("an edit-and-check cycle made from a real run", () => {
  it("repeats the edit before a check and the check, both as they were, and is stopped within the bound", () => {
    const real = fixture("swe-agent-1.traj");
    const mutant = made(real, "cycle");
    const tools = mutant.run.calls
      .slice(-4)
      .filter((c) => isToolHook(c.input.hook_event_name))
      .map((c) => c.input.tool_name);
    expect(tools).toEqual(["Edit", "Bash"]);
    const v = verdict(real, "cycle");
    expect(v.stop?.guard, `seed ${SEED}`).toMatch(/^circuit-breaker/);
    expect(v.callsToStop!).toBeLessThanOrEqual(STUCK_BOUND.calls);
  });
});

describe("a productive twin of a real run", () => {
  const real = fixture("claude-code-2.1.330.jsonl");

  it("keeps every real call in order, with the run's own tests after each edit and another edit of the file", () => {
    const twin = made(real, "productive").run;
    const ids = toolIds(twin);
    expect(ids.filter((id) => !String(id).startsWith("reins-made-"))).toEqual(toolIds(real));
    expect(ids.length).toBeGreaterThan(toolIds(real).length);
    const times = twin.calls.map((c) => c.at);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it("is never stopped", () => {
    expect(verdict(real, "productive").stop, `seed ${SEED}`).toBeNull();
  });
});

/** The real runs of ../shared/corpus (third-party data, never copied here), when this checkout has them. */
const corpus = join(
  import.meta.dirname,
  "..",
  "..",
  "..",
  "..",
  "shared",
  "corpus",
  "mini-swe-agent-gemini-3-pro",
);

describe.skipIf(!existsSync(corpus))("the metamorphic suite on a sample of the real corpus", () => {
  // Every 20th run: 25 of 500. The benchmark runs all of them.
  const sample = () =>
    logFiles(corpus)
      .filter((f) => f.endsWith(".traj.json.gz"))
      .filter((_, i) => i % 20 === 0)
      .map(readLog);

  it("stops every runaway made from them within the bound, and no productive twin they did not already have stopped", () => {
    const runs = sample();
    for (const kind of ["stuck", "cycle", "productive"] as const) {
      const summary = judgeMetamorphosis(runs, kind, SEED, defaultPolicy);
      expect(summary.broken, `${kind}, seed ${SEED}`).toEqual([]);
      expect(summary.runs, `${kind}: runs made`).toBeGreaterThan(runs.length / 2);
      if (kind !== "productive") expect(summary.withinBound + summary.stoppedEarlier).toBe(summary.runs);
    }
  }, 60_000);
});
