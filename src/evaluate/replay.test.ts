/** Tests of replaying logged runs through the hooks, the benchmark's sessions, and evaluation. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultPolicy, resolvePolicy } from "../core/policy.js";
import { jsonLines, readLog } from "../logs/load.js";
import type { LoggedRun } from "../logs/run.js";
import { evaluate, parseOutcomes, verdictOf } from "./evaluate.js";
import { replayRun } from "./replay.js";
import { scenarios } from "./scenarios.js";
import { SessionScript } from "./script.js";

const fixtures = join(import.meta.dirname, "..", "..", "test", "fixtures", "logs");

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
