/** Tests of replaying logged runs through the hooks, the benchmark's sessions, and evaluation. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultPolicy, resolvePolicy } from "../../base/core/policy.js";
import { jsonLines, readLog } from "../logs/load.js";
import type { LoggedRun } from "../logs/run.js";
import { evaluate, LIVE_ONLY, parseOutcomes, verdictOf } from "./evaluate.js";
import { runProjectChecks } from "./run-project.js";
import { replayRun } from "./replay.js";
import { scenarios } from "./scenarios.js";
import { SessionScript } from "./script.js";

const fixtures = join(import.meta.dirname, "..", "..", "..", "test", "fixtures", "logs");

/** What an event says of the agent's work, without the ids and times that differ between two readings. */
const gist = (run: LoggedRun) =>
  replayRun(run, defaultPolicy)
    .calls.flatMap((c) => c.records)
    .filter((r) => r.event.kind !== "usage.recorded")
    .map(({ event }) => {
      const { at: _at, id: _id, ...rest } = event;
      return rest;
    });

describe("replaying a logged run", () => {
  it("gives the events the live hooks gave: the transcript read back equals the hook inputs it came from", () => {
    const transcript = readLog(join(fixtures, "claude-code-2.1.330.jsonl"));
    const inputs = jsonLines(readFileSync(join(fixtures, "claude-code-2.1.330.hooks.jsonl"), "utf8"));
    const live: LoggedRun = {
      ...transcript,
      calls: inputs.filter((i) => i.hook_event_name !== "SessionEnd").map((input, n) => ({ at: n, input })),
    };
    expect(gist(transcript)).toEqual(gist(live));
    expect(gist(live).map((e) => e.kind)).toEqual(
      expect.arrayContaining([
        "session.started",
        "task.started",
        "tool.requested",
        "tool.completed",
        "verification.ran",
        "completion.claimed",
      ]),
    );
  });

  it("decides the same every time (event ids come from the run, not from randomness)", () => {
    const run = readLog(join(fixtures, "codex-0.169.0.jsonl"));
    expect(JSON.stringify(replayRun(run, defaultPolicy).calls)).toBe(
      JSON.stringify(replayRun(run, defaultPolicy).calls),
    );
  });

  it("counts a model call's usage once however often it is read, priced by the agent's own figure", () => {
    const s = new SessionScript("usage");
    s.spend(1_000).bash("ls", "a");
    const run = s.run();
    const post = run.calls.find((c) => c.input.hook_event_name === "PostToolUse");
    run.calls.push({ ...post!, at: post!.at + 5 }); // the same transcript lines read again
    const replayed = replayRun(run, defaultPolicy);
    expect(replayed.state?.budget.session.spent.tokens).toBe(1_100);
  });

  it("answers a bad hook input as the live hook does: allowed, with why", () => {
    const s = new SessionScript("bad");
    const run = s.run();
    run.calls.push({ at: 1, input: { hook_event_name: "PreToolUse", session_id: "" } });
    const last = replayRun(run, defaultPolicy).calls.at(-1);
    expect(last).toMatchObject({ grade: "allow", invalid: expect.stringMatching(/.+/) as unknown });
  });

  it("grades each call and names the guard: a stop, the denies after it, what the agent was told", () => {
    const s = new SessionScript("stuck");
    for (let i = 0; i < 4; i++) s.bash(`node fail.js --try ${i}`, "Error: connect ECONNREFUSED", 1);
    s.bash("node other.js", "Error: connect ECONNREFUSED", 1).bash(
      "node fail.js",
      "Error: connect ECONNREFUSED",
      1,
    );
    const replayed = replayRun(s.run(), defaultPolicy);
    expect(replayed.stop).toMatchObject({
      step: 5,
      hook: "PostToolUseFailure",
      guard: "circuit-breaker:repeated_error",
    });
    expect(replayed.stop?.told).toMatch(/^reins: The same error came back 5 times in a row/);
    expect(replayed.deny).toMatchObject({ step: 6, hook: "PreToolUse", grade: "stop" });
    expect(replayed.deny?.told).toMatch(/^reins: The circuit breaker is open/);
    expect(verdictOf(replayed, false)).toMatchObject({ steps: 6, saved: 1 });
  });
});

describe("the scripted sessions of the efficacy benchmark", () => {
  const all = scenarios();
  it("has sessions to replay", () => {
    expect(all.length).toBeGreaterThan(0);
  });

  for (const scenario of all) {
    it(`${scenario.stuck ? "stops or denies" : "leaves alone"} ${scenario.name}: ${scenario.what}`, () => {
      const replayed = replayRun(scenario.run, defaultPolicy);
      const caught = replayed.stop !== null || replayed.deny !== null || replayed.refusedDone > 0;
      expect(
        caught,
        JSON.stringify(
          replayed.calls.filter((c) => c.grade !== "allow").map((c) => [c.step, c.grade, c.guard]),
        ),
      ).toBe(scenario.stuck);
    });
  }
});

describe("evaluating runs with known outcomes", () => {
  it("reads a SWE-bench report and a plain map, and refuses anything else in one line", () => {
    expect([...parseOutcomes({ resolved_ids: ["a"], unresolved_ids: ["b"], other: 3 })]).toEqual([
      ["a", true],
      ["b", false],
    ]);
    expect([...parseOutcomes(JSON.parse('{"x": true, "__proto__": false}'))]).toEqual([
      ["x", true],
      ["__proto__", false],
    ]);
    expect(() => parseOutcomes([])).toThrow(/expected a JSON object/);
    expect(() => parseOutcomes({ x: "yes" })).toThrow(/the outcome of "x" must be true or false/);
  });

  it("counts false stops on successful runs, failed runs caught, and the calls the stops saved", () => {
    const stuck = new SessionScript("failed-stuck");
    for (let i = 0; i < 8; i++) stuck.bash("./deploy.sh", "error: missing separator", 2);
    const healthy = new SessionScript("ok")
      .read("a.ts")
      .edit("a.ts", "x", "y")
      .bash("npm test", "1 passed")
      .done();
    const outcomes = parseOutcomes({ "failed-stuck": false, ok: true });
    const e = evaluate(
      [stuck, healthy].map((s) => verdictOf(replayRun(s.run(), defaultPolicy), outcomes.get(s.id) ?? null)),
    );
    expect(e.successful).toMatchObject({ runs: 1, stopped: 0, denied: 0 });
    // The 5th identical failing call is refused before it runs: it and the three after it are saved.
    expect(e.failed).toMatchObject({ runs: 1, stopped: 1, steps: 8, saved: 4 });
    expect(e.precision).toBe(1);
    expect(e.guards).toContainEqual({
      guard: "circuit-breaker:duplicate_calls",
      grade: "stop",
      successful: 0,
      failed: 1,
      unknown: 0,
    });
  });

  it("lets a user try a policy: a looser one stops less", () => {
    const s = new SessionScript("loose");
    for (let i = 0; i < 8; i++) s.bash("./deploy.sh", "error: missing separator", 2);
    const loose = resolvePolicy({ loops: { errorRepeatBlock: 10 }, circuit: { duplicateThreshold: 10 } });
    expect(replayRun(s.run(), loose).stop).toBeNull();
  });
});

describe("honest replays: what a log can support", () => {
  it("counts only a run's first intervention: a stop after a deny is not evidence", () => {
    // Writing the same change three times is denied (circular); the agent in the log went on, and an
    // identical failing call later trips the breaker: a real agent would have acted on the deny first.
    const s = new SessionScript("deny-then-stop");
    for (let i = 0; i < 4; i++) s.edit("a.ts", "x", "y");
    for (let i = 0; i < 6; i++) s.bash("./build.sh", "error: missing separator", 2);
    const replayed = replayRun(s.run(), defaultPolicy);
    expect(replayed.stop?.guard).toMatch(/^circuit-breaker/);
    const verdict = verdictOf(replayed, true);
    expect(verdict.deny).toMatchObject({ guard: "circular" });
    expect(verdict.stop).toBeNull();
    expect(verdict.later).toBeGreaterThan(0);
    expect(evaluate([verdict]).successful).toMatchObject({ stopped: 0, denied: 1, later: 1 });
  });

  it("never counts a stop whose premise the log cannot hold (a deny the agent never saw)", () => {
    const replayed = replayRun(new SessionScript("x").bash("ls").run(), defaultPolicy);
    const call = replayed.calls.find((c) => c.hook === "PreToolUse")!;
    const faked = {
      ...replayed,
      calls: replayed.calls.map((c) =>
        c === call ? { ...c, grade: "stop" as const, guard: "circuit-breaker:ignored_denials" } : c,
      ),
    };
    const verdict = verdictOf(faked, true);
    expect(verdict).toMatchObject({ stop: null, deny: null, liveOnly: 1 });
    expect(LIVE_ONLY.has("circuit-breaker:ignored_denials")).toBe(true);
  });

  it("does not count an edit the editor refused, nor deny the edits after 20 refusals", () => {
    const scenario = scenarios().find((s) => s.name === "refused-edits-then-fix")!;
    const replayed = replayRun(scenario.run, defaultPolicy);
    expect(replayed.deny).toBeNull();
    expect(replayed.stop).toBeNull();
    expect(replayed.state?.edits.total).toBe(8);
  });

  it("counts a reproduction script run before and after edits as a check", () => {
    const scenario = scenarios().find((s) => s.name === "reproduce-script-checks")!;
    const replayed = replayRun(scenario.run, defaultPolicy);
    expect(replayed.deny).toBeNull();
    // 32 edits in all, the script run after every 8: the gate (25 edits without a check) never closes.
    expect(replayed.state?.edits.total).toBe(32);
    expect(replayed.state?.edits.sinceVerification).toBe(0);
    // Failing differently after each round of edits is a check of the change, not a retry.
    expect(replayed.calls.some((c) => /failed \d+ times in a row/.test(c.told ?? ""))).toBe(false);
  });

  it("hints the run's own Python check, whatever folder the replay runs in", () => {
    const s = new SessionScript("py", { cwd: "/testbed" });
    s.bash("ls", "README.rst\nsetup.py\nastropy\ntox.ini");
    for (let i = 0; i < 6; i++) s.edit("/testbed/astropy/units/core.py", `v${i}`, `v${i + 1}`);
    const replayed = replayRun(s.run(), defaultPolicy);
    const told = replayed.calls.map((c) => c.told ?? "").join("\n");
    expect(told).toMatch(/Run `python -m pytest` before editing more/);
    expect(told).not.toMatch(/npm test/);
    expect(replayed.policy.completion.commands.tests).toBe("python -m pytest");
    // A Django checkout runs its own runner.
    const django = new SessionScript("dj", { cwd: "/testbed" });
    django
      .bash("ls", "setup.py\ntests")
      .bash("ls tests/runtests.py", "tests/runtests.py")
      .edit("/testbed/django/db/models/query.py", "a", "b");
    expect(runProjectChecks(django.run()).tests).toBe("python tests/runtests.py");
  });
});
