import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { memoryIo } from "../src/cli/io.js";
import { run } from "../src/cli/run.js";
import { replayRun } from "../src/guard/evaluate/replay.js";
import { readLog } from "../src/guard/logs/load.js";
import { loadPolicy } from "../src/base/config/load-policy.js";
import { claudeUnavailableReason, findTranscript, runClaude } from "#test/claude-code.js";
import { e2eEach, failJs, initReins, npmTestPackage, recorded } from "#test/e2e-project.js";
import {
  lastToolResults,
  startFakeAnthropic,
  type FakeAnthropic,
  type Script,
  type ScriptedReply,
} from "#test/fake-anthropic.js";

/**
 * reins' judgement with the real Claude Code CLI, installed the default way (`reins init claude`: native
 * http hooks to the daemon): a productive session that re-runs the tests after each real change is never
 * stopped; a loop of one failing command with only noise changed is denied by the 6th call, and the model
 * reads why. The transcript each session leaves is read back by `reins replay`'s importer and gives the
 * events the live hooks recorded. With REINS_RECORD_TRACES=1 the sessions are written as golden traces
 * to test/traces/ (see test/unit/traces.test.ts).
 */

const e2e = e2eEach<FakeAnthropic>("judgement", {
  "package.json": npmTestPackage({ name: "calc", type: "module" }),
  // Three bugs; the test prints Jest's summary line and exits 1 while any case fails.
  "calc.js":
    "export const add = (a, b) => a - b;\nexport const mul = (a, b) => a + b;\nexport const neg = (a) => a;\n",
  "test.js": [
    'import { add, mul, neg } from "./calc.js";',
    "const cases = [[add(2, 3), 5], [mul(2, 3), 6], [neg(4), -4]];",
    "const failed = cases.filter(([got, want]) => got !== want).length;",
    "console.log(`Tests: ${failed} failed, ${cases.length - failed} passed, ${cases.length} total`);",
    "process.exit(failed > 0 ? 1 : 0);",
    "",
  ].join("\n"),
  "fail.js": failJs,
});

beforeEach(async () => {
  await initReins(e2e, ["claude"]);
});

async function drive(script: Script, maxTurns: number) {
  const fake = await startFakeAnthropic(script);
  e2e.fake = fake;
  const result = await runClaude({
    cwd: e2e.project,
    home: e2e.home,
    prompt: "Fix the calculator.",
    baseUrl: fake.url,
    maxTurns,
    timeoutMs: 90_000,
  });
  expect(result.timedOut, result.stderr).toBe(false);
  expect(fake.errors).toEqual([]);
  const sessionId = result.json?.session_id ?? "";
  return { result, sessionId, ...(await recorded(e2e.project, sessionId)) };
}

const bash = (command: string): ScriptedReply => ({
  toolUses: [{ name: "Bash", input: { command, description: "run" } }],
});
const edit = (file: string, from: string, to: string): ScriptedReply => ({
  toolUses: [
    { name: "Edit", input: { file_path: join(e2e.project, file), old_string: from, new_string: to } },
  ],
});

/** The session's trace, as `reins export` writes it; kept under test/traces/ when asked to record. */
async function keepTrace(sessionId: string, name: string): Promise<string> {
  const out = join(e2e.root, `${name}.jsonl`);
  const io = memoryIo({ cwd: e2e.project, env: { HOME: e2e.home } });
  expect(await run(["export", `session:${sessionId}`, "--out", out], io), io.err.join("")).toBe(0);
  const check = memoryIo({ cwd: e2e.project, env: { HOME: e2e.home } });
  expect(await run(["check", out], check), check.out.join("")).toBe(0);
  if (process.env.REINS_RECORD_TRACES === "1") {
    const traces = join(import.meta.dirname, "traces");
    mkdirSync(traces, { recursive: true });
    writeFileSync(join(traces, `${name}.jsonl`), readFileSync(out, "utf8"));
  }
  return out;
}

/** The transcript read back and replayed gives the event kinds, tools and outcomes the live hooks recorded. */
function expectReplayMatches(sessionId: string, log: Awaited<ReturnType<typeof drive>>["log"]) {
  const transcript = findTranscript(e2e.home, sessionId);
  expect(transcript).toBeDefined();
  const gist = (e: { kind: string; tool?: string; outcome?: string; passed?: boolean }) =>
    `${e.kind}${e.tool !== undefined ? ` ${e.tool}` : ""}${e.outcome !== undefined ? ` ${e.outcome}` : ""}${e.passed !== undefined ? ` ${String(e.passed)}` : ""}`;
  const wanted = new Set(["tool.requested", "tool.completed", "verification.ran", "completion.claimed"]);
  const replayed = replayRun(readLog(transcript!), loadPolicy({ cwd: e2e.project }).policy);
  const events = replayed.calls.flatMap((c) => c.records.map((r) => r.event));
  expect(events.filter((e) => wanted.has(e.kind)).map(gist)).toEqual(
    log
      .map((r) => r.event)
      .filter((e) => wanted.has(e.kind))
      .map(gist),
  );
  return replayed;
}

describe.skipIf(claudeUnavailableReason() !== null)("reins' judgement with the real Claude Code CLI", () => {
  it("never stops a session that re-runs the failing tests after each real change", async () => {
    const script: Script = [
      { toolUses: [{ name: "Read", input: { file_path: join(e2e.project, "calc.js") } }] },
      bash("npm test"), // 3 failed
      edit("calc.js", "(a) => a;", "(a) => a * 1;"), // a change that fixes nothing
      bash("npm test"), // 3 failed again, after a real change
      edit("calc.js", "a - b", "a + b"),
      bash("npm test"), // 2 failed
      edit("calc.js", "(a, b) => a + b;\nexport const neg", "(a, b) => a * b;\nexport const neg"),
      bash("npm test"), // 1 failed
      edit("calc.js", "a * 1", "-a"),
      bash("npm test"), // passes
      { text: "All three cases pass now." },
    ];
    const { result, sessionId, log, state } = await drive(script, 14);

    const main = e2e.fake!.mainRequests();
    expect(main).toHaveLength(11);
    const outputs = main.map((r) => lastToolResults(r)[0]?.text ?? "");
    expect(outputs.filter((t) => t.includes("Tests: "))).toEqual([
      expect.stringContaining("Tests: 3 failed"),
      expect.stringContaining("Tests: 3 failed"),
      expect.stringContaining("Tests: 2 failed"),
      expect.stringContaining("Tests: 1 failed"),
      expect.stringContaining("Tests: 0 failed, 3 passed"),
    ]);
    for (const text of outputs) expect(text).not.toContain("hook error");
    expect(result.json).toMatchObject({ subtype: "success", result: "All three cases pass now." });

    expect(log.filter((r) => r.decision.verdict === "block")).toEqual([]);
    expect(state?.breaker.status).toBe("closed");
    const runs = log.flatMap((r) => (r.event.kind === "verification.ran" ? [r.event] : []));
    expect(runs.map((e) => [e.passed, e.failing])).toEqual([
      [false, 3],
      [false, 3],
      [false, 2],
      [false, 1],
      [true, 0],
    ]);
    expect(log.find((r) => r.event.kind === "completion.claimed")?.decision.verdict).toBe("allow");

    expectReplayMatches(sessionId, log);
    await keepTrace(sessionId, "claude-rerun-tests-after-each-change");
  }, 120_000);

  it("denies a noisy loop of one failing command by the 6th call, and the model reads why", async () => {
    const script: Script = (_request, turn) =>
      turn < 7 ? bash(`ATTEMPT=${turn + 1} node fail.js # try ${turn + 1}`) : { text: "I am stuck." };
    const { sessionId, log, state } = await drive(script, 10);

    const results = e2e.fake!.mainRequests().map((r) => lastToolResults(r)[0]);
    for (let i = 1; i <= 5; i++) expect(results[i]?.text).toContain("ECONNREFUSED");
    // The 6th call never ran: Claude Code gave the model reins' reason as the tool's result.
    expect(results[6]?.isError).toBe(true);
    expect(results[6]?.text).toMatch(
      /^PreToolUse:Bash hook error: reins: The circuit breaker is open \(the same error came back 5 times in a row/,
    );
    expect(results[6]?.text).toContain(`reins circuit ack session:${sessionId}`);
    expect(state?.breaker).toMatchObject({ status: "open", reason: "repeated_error" });
    expect(log.filter((r) => r.event.kind === "tool.requested")).toHaveLength(7);

    const replayed = expectReplayMatches(sessionId, log);
    expect(replayed.stop).toMatchObject({ step: 5, guard: "circuit-breaker:repeated_error" });
    await keepTrace(sessionId, "claude-noisy-failing-loop");
  }, 120_000);
});
