/**
 * `reins tune` holds on runs it never read: tuned on one half of a real corpus (SWE-bench runs with known
 * outcomes, ../shared/corpus when present), the tuned policy is judged on the other half against the
 * defaults. Skips with a message when the corpus is not there.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { memoryIo } from "../src/cli/io.js";
import { run } from "../src/cli/run.js";
import { defaultPolicy, resolvePolicy } from "../src/base/core/policy.js";
import { evaluate, parseOutcomes, verdictOf } from "../src/guard/evaluate/evaluate.js";
import { replayRun } from "../src/guard/evaluate/replay.js";
import { applyTuning, judgeTunePoint, tune, tuneSet, type Knob } from "../src/guard/evaluate/tune.js";
import { readLog } from "../src/guard/logs/load.js";
import type { LoggedRun } from "../src/guard/logs/run.js";
import { SessionScript } from "../src/guard/evaluate/script.js";

const corpus = join(import.meta.dirname, "..", "..", "shared", "corpus", "mini-swe-agent-gemini-3-pro");
const reportFile = join(corpus, "sb-cli-report.json");
const present = existsSync(reportFile);
if (!present) console.log(`test/tune.test.ts: no corpus at ${corpus}; the held-out tuning test is skipped`);

const SEED = 1;
/** The values tried here: each knob's default and one on either side (the full grid is the CLI's). */
const KNOBS: Knob[] = [
  { field: "circuit.duplicateThreshold", values: [3, 8] },
  { field: "loops.errorRepeatBlock", values: [3, 8] },
  { field: "circuit.failedVerificationThreshold", values: [2, 5] },
];
const RUNAWAYS = 80;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!present)("reins tune on half a real corpus, judged on the other half", () => {
  it("gives no stop on a successful run, denies at most 5% and no more than the defaults, and catches as many runaways", () => {
    const outcomes = parseOutcomes(JSON.parse(readFileSync(reportFile, "utf8")));
    const files = readdirSync(corpus)
      .filter((f) => f.endsWith(".traj.json.gz"))
      .sort();
    const runs: LoggedRun[] = files.map((f) => readLog(join(corpus, f)));
    const tuneOn = runs.filter((_, i) => i % 2 === 0);
    const judgeOn = runs.filter((_, i) => i % 2 === 1);
    const tuning = tune(tuneOn, outcomes, defaultPolicy, SEED, { knobs: KNOBS, runaways: RUNAWAYS });
    const tuned = applyTuning(defaultPolicy, tuning.policy);
    // The file it writes is a policy reins loads.
    expect(resolvePolicy(JSON.parse(JSON.stringify(tuning.policy)))).toEqual(tuned);

    const judged = (policy: typeof tuned) =>
      evaluate(judgeOn.map((r) => verdictOf(replayRun(r, policy), outcomes.get(r.id) ?? null)));
    const before = judged(defaultPolicy);
    const after = judged(tuned);
    const why = `seed ${SEED}; tuned ${JSON.stringify(tuning.policy)}`;
    expect(after.successful.stopped, why).toBe(0);
    expect(after.successful.denied / after.successful.runs, why).toBeLessThanOrEqual(0.05);
    expect(after.successful.denied, why).toBeLessThanOrEqual(before.successful.denied);

    const held = tuneSet(judgeOn, outcomes, defaultPolicy, SEED, RUNAWAYS);
    const runawaysBefore = judgeTunePoint(held, defaultPolicy).runaways;
    const runawaysAfter = judgeTunePoint(held, tuned).runaways;
    expect(runawaysAfter.runs, why).toBeGreaterThan(0);
    expect(runawaysAfter.inBound, why).toBeGreaterThanOrEqual(runawaysBefore.inBound);
    // The budgets are fitted to what the successful runs of the tuning half spent.
    expect(tuning.budgets.find((b) => b.field === "budget.session.tokens")?.limit).toBeGreaterThan(0);
  }, 900_000);
});

describe("reins tune on the command line", () => {
  it("says what it assumed without outcomes, prints its evidence and writes a policy --policy loads", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reins-tune-"));
    dirs.push(dir);
    const logs = join(dir, "logs");
    const { mkdirSync, writeFileSync } = await import("node:fs");
    mkdirSync(logs);
    // Two small Claude Code-shaped runs, as hook inputs: reins reads them as logs.
    for (const id of ["a", "b"]) {
      const s = new SessionScript(id);
      s.spend(20_000).read("src/a.ts").spend(30_000).edit("src/a.ts", "x", "y");
      s.spend(10_000).bash("npm test", "Tests: 3 passed, 3 total").done();
      writeFileSync(join(logs, `${id}.json`), JSON.stringify(scriptTrajectory(s.run())));
    }
    const out = join(dir, "tuned.json");
    const io = memoryIo({ cwd: dir });
    const code = await run(["tune", logs, "--out", out], io);
    const text = io.out.join("") + io.err.join("");
    expect(code, text).toBe(0);
    expect(text).toMatch(/assumed: no outcomes given: every run is taken as productive/);
    expect(text).toMatch(/circuit\.duplicateThreshold \(default 5, chosen \d+\)/);
    expect(text).toMatch(/budget\.session\.tokens/);
    const status = memoryIo({ cwd: dir });
    expect(await run(["--policy", out, "config", "--json"], status), status.err.join("")).toBe(0);
    const shown = JSON.parse(status.out.join("")) as {
      policy?: { budget?: { session?: { tokens?: unknown } } };
    };
    const written = JSON.parse(readFileSync(out, "utf8")) as { budget: { session: { tokens: number } } };
    expect(JSON.stringify(shown)).toContain(`"tokens":${written.budget.session.tokens}`);
  });
});

/** A scripted run as a mini-swe-agent trajectory: each Bash call a fenced command and its observation. */
function scriptTrajectory(run: LoggedRun): unknown {
  const messages: unknown[] = [
    { role: "system", content: "You are a helpful assistant." },
    { role: "user", content: "Fix the bug." },
  ];
  let n = 0;
  for (const call of run.calls) {
    const input = call.input;
    if (input.hook_event_name !== "PreToolUse") continue;
    const tool = input.tool_input as Record<string, unknown>;
    const command = input.tool_name === "Bash" ? String(tool.command) : `cat ${String(tool.file_path)}`;
    n += 1;
    messages.push({
      role: "assistant",
      content: `Step ${n}.\n\n\`\`\`bash\n${command}\n\`\`\``,
      extra: {
        response: {
          id: `r${n}`,
          created: 1_767_600_000 + n * 10,
          usage: { prompt_tokens: 20_000, completion_tokens: 500, cost: 0.05 },
        },
      },
    });
    messages.push({ role: "user", content: `<returncode>0</returncode>\n<output>\nok ${n}\n</output>` });
  }
  messages.push({
    role: "assistant",
    content: "Done.\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```",
    extra: {
      response: {
        id: "end",
        created: 1_767_600_500,
        usage: { prompt_tokens: 1_000, completion_tokens: 10, cost: 0.01 },
      },
    },
  });
  return { info: { mini_version: "1.15.0", exit_status: "Submitted" }, messages, instance_id: run.id };
}
