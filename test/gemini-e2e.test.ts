import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { e2eProject, npmTestPackage, recorded, removeE2eProject } from "#test/e2e-project.js";
import {
  lastFunctionResponses,
  shellCommand,
  startFakeGemini,
  type FakeGemini,
  type Script,
  type ScriptedUsage,
} from "#test/fake-gemini.js";
import { geminiUnavailableReason, runGemini, type GeminiRun } from "#test/gemini-cli.js";
import { cleanEnv, runReins } from "#test/processes.js";

/**
 * The real Gemini CLI, headless and offline against a scripted Gemini API, with reins' hooks installed by
 * `reins init gemini` and nothing else: no GEMINI_CLI_TRUST_WORKSPACE, so the hooks run only because init
 * trusted the project in the HOME's `~/.gemini/trustedFolders.json`. Assertions are on what the client did
 * (the requests the fake model received, the stream-json events), then on what reins recorded.
 */

let root: string;
let project: string;
let home: string;
let fake: FakeGemini | undefined;

beforeEach(() => {
  ({ root, project, home } = e2eProject("gemini", {
    "package.json": npmTestPackage(),
    "test.js": "console.log('Tests: 1 passed, 1 total');\n",
  }));
  // The defaults: the client to the user's hook daemon, whose socket is in this test's own HOME.
  const init = runReins(["init", "gemini"], { cwd: project, env: cleanEnv(home) });
  expect(init.status, init.stderr).toBe(0);
});

afterEach(async () => {
  await fake?.close();
  fake = undefined;
  await removeE2eProject(root);
});

async function drive(script: Script): Promise<GeminiRun> {
  fake = await startFakeGemini(script);
  const result = await runGemini({
    cwd: project,
    home,
    prompt: "Do the task.",
    baseUrl: fake.url,
    timeoutMs: 60_000,
  });
  expect(result.timedOut, result.stderr).toBe(false);
  expect(result.code, result.stderr).toBe(0);
  expect(fake.errors).toEqual([]);
  // Nothing but the scripted turns: no router, no side calls, no endpoint the fake does not know.
  expect(fake.requests.filter((r) => r.kind !== "main").map((r) => r.path)).toEqual([]);
  expect(result.sessionId).toBeDefined();
  return result;
}

/** `reins <args> --json` in the project, parsed. */
function reinsJson(args: readonly string[]): unknown {
  const out = runReins([...args, "--json"], { cwd: project, env: cleanEnv(home) });
  expect(out.status, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as unknown;
}

describe.skipIf(geminiUnavailableReason() !== null)("reins guarding the real Gemini CLI", () => {
  it("runs after only `reins init gemini` and denies the 5th identical failing shell call; the model reads why", async () => {
    const trust = readFileSync(join(home, ".gemini", "trustedFolders.json"), "utf8");
    expect(JSON.parse(trust)).toEqual({ [project]: "TRUST_FOLDER" });

    const usage = (turn: number) => ({ promptTokenCount: 100 + turn, candidatesTokenCount: 10 });
    const script: Script = (_request, turn) =>
      turn < 7
        ? shellCommand("ls /nonexistent-dir", usage(turn))
        : { text: "I am stuck.", usage: usage(turn) };
    const result = await drive(script);

    const main = fake!.mainRequests();
    expect(main).toHaveLength(8);
    const answers = main.map((r) => lastFunctionResponses(r)[0]);
    // Calls 1-4 ran and failed for real; the 5th was denied by reins' BeforeTool hook before it ran.
    for (let i = 1; i <= 4; i++) {
      expect(answers[i]?.output).toContain("No such file or directory");
      expect(answers[i]?.output).toMatch(/Exit Code: [1-9]/);
    }
    // Before the breaker, reins' AfterTool note reached the model with the 4th result.
    expect(answers[4]?.output).toMatch(/<hook_context>reins: The same error came back 4 times in a row/);
    expect(answers[5]?.output).toBeUndefined();
    expect(answers[5]?.error).toMatch(
      /reins: The same \S+ call `ls \/nonexistent-dir` was made 5 times in a row/,
    );
    expect(answers[6]?.error).toMatch(/reins: The circuit breaker is open/);
    expect(answers[7]?.error).toMatch(/reins: The circuit breaker is open/);
    expect(result.events.filter((e) => e.type === "tool_use")).toHaveLength(7);

    // What reins recorded, through its CLI and its store.
    const status = reinsJson(["status", `session:${result.sessionId}`]) as {
      agent: string;
      breaker: { status: string; reason: string };
      budget: { resource: string; used: number }[];
    }[];
    expect(status).toHaveLength(1);
    expect(status[0]).toMatchObject({
      agent: "gemini",
      breaker: { status: "open", reason: "duplicate_calls" },
    });
    const { log } = await recorded(project, result.sessionId!);
    const kinds = log.map((r) => r.event.kind);
    expect(kinds[0]).toBe("session.started");
    expect(kinds.filter((k) => k === "tool.requested")).toHaveLength(7);
    expect(kinds.filter((k) => k === "tool.completed")).toHaveLength(4);
    expect(kinds.filter((k) => k === "usage.recorded")).toHaveLength(8);
    expect(status[0]?.budget.find((b) => b.resource === "tokens")?.used).toBe(8 * 110 + 28);
    expect(kinds).toContain("completion.claimed");

    // `reins doctor` finds the hooks, the folder trust and the daemon the SessionStart hook started.
    const doctor = reinsJson(["doctor"]) as { checks: { subject: string; check: string; status: string }[] };
    const statusOf = (subject: string, check: string) =>
      doctor.checks.find((c) => c.subject === subject && c.check === check)?.status;
    expect(statusOf("gemini", "hooks")).toBe("ok");
    expect(statusOf("gemini", "folder trust")).toBe("ok");
    expect(statusOf("daemon", "running")).toBe("ok");
    // Gemini CLI is not contained (reins sets no sandbox for it): said by doctor and at the session's start.
    expect(statusOf("gemini", "contained")).toBe("warn");
    expect(JSON.stringify(fake!.requests)).toContain(
      "reins: not contained: reins cannot keep this agent from switching it off",
    );
    // The trust is reins' own doing, not the harness's: the file is what init wrote, unchanged.
    expect(readFileSync(join(home, ".gemini", "trustedFolders.json"), "utf8")).toBe(trust);
  }, 90_000);

  it("counts every model call's tokens exactly once: the sum of the usageMetadata the API sent", async () => {
    // The three tool turns report the same usage: reins must not take them for one call (Gemini's AfterModel
    // input has no response id). Text replies are streamed in two chunks that both carry usageMetadata: only
    // the final one counts. The last reply also has thinking tokens, which only totalTokenCount includes.
    const same: ScriptedUsage = { promptTokenCount: 1_000, candidatesTokenCount: 40 };
    const script: Script = [
      { text: "Looking around.", ...shellCommand("ls", same) },
      shellCommand("cat test.js", same),
      { text: "Running the tests.", ...shellCommand("npm test", same) },
      {
        text: "All tests pass.",
        usage: { promptTokenCount: 1_300, candidatesTokenCount: 25, thoughtsTokenCount: 7 },
      },
    ];
    const result = await drive(script);

    const main = fake!.mainRequests();
    expect(main).toHaveLength(4);
    for (const request of main.slice(1)) expect(lastFunctionResponses(request)[0]?.error).toBeUndefined();
    expect(lastFunctionResponses(main[3]!)[0]?.output).toContain("Tests: 1 passed");

    const sent = fake!.usageSent;
    expect(sent).toHaveLength(4);
    const total = sent.reduce((sum, u) => sum + u.totalTokenCount, 0);
    expect(total).toBe(3 * 1_040 + 1_332);
    // Gemini CLI's own count agrees: the figures are what the client saw.
    expect(result.result?.stats?.total_tokens).toBe(total);

    const { log, state } = await recorded(project, result.sessionId!);
    const usage = log.flatMap((r) => (r.event.kind === "usage.recorded" ? [r.event] : []));
    expect(usage.map((e) => [e.inputTokens, e.outputTokens])).toEqual([
      [1_000, 40],
      [1_000, 40],
      [1_000, 40],
      [1_300, 32],
    ]);
    expect(state?.budget.session.spent.tokens).toBe(total);
    const status = reinsJson(["status", `session:${result.sessionId}`]) as {
      budget: { resource: string; used: number }[];
    }[];
    expect(status[0]?.budget.find((b) => b.resource === "tokens")?.used).toBe(total);
    // A healthy session: nothing denied, and "done" accepted after the passing tests.
    expect(log.filter((r) => r.decision.verdict === "block")).toEqual([]);
    expect(state?.breaker.status).toBe("closed");
  }, 90_000);
});
