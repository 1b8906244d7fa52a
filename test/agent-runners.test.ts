import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { claudeRunner } from "../src/drive/agents/claude.js";
import { codexRunner } from "../src/drive/agents/codex.js";
import { geminiRunner } from "../src/drive/agents/gemini.js";
import type { AgentRequest, AgentResult } from "../src/drive/agents/runner.js";
import { claudeBinary, claudeUnavailableReason } from "./support/claude-code.js";
import { codexBinary, codexConfigArgs, codexUnavailableReason } from "./support/codex-cli.js";
import { e2eProject, removeE2eProject } from "./support/e2e-project.js";
import { startFakeAnthropic, userTexts } from "./support/fake-anthropic.js";
import { startFakeGemini, shellCommand } from "./support/fake-gemini.js";
import { execCommand, startFakeOpenAi } from "./support/fake-openai.js";
import type { FakeModel } from "./support/fake-model.js";
import { geminiBinary, geminiUnavailableReason, writeSettings } from "./support/gemini-cli.js";
import { cleanEnv } from "./support/processes.js";

/**
 * The agent runners of `reins run` driving the real CLIs offline, each against its scripted model API on
 * 127.0.0.1 for one short iteration: one shell command that writes a file, then a text answer. Assertions
 * are on what the runner parsed (outcome, turns, tokens, session), on the file the tool wrote, and on the
 * prompt reaching the model through stdin.
 */

const PROMPT = "-- Write hi into out.txt, then say so.";
let root: string;
let project: string;
let home: string;
let fake: FakeModel<unknown> | undefined;

beforeEach(() => {
  ({ root, project, home } = e2eProject("agent-runner"));
});

afterEach(async () => {
  await fake?.close();
  fake = undefined;
  await removeE2eProject(root);
});

const request = (): AgentRequest => ({
  run: "run-1",
  task: "T1",
  attempt: 1,
  mode: "implement",
  prompt: PROMPT,
  cwd: project,
  env: {},
  timeoutMs: 25_000,
});

/** What every runner must have done in the project: the tool call ran for real. */
function expectWrote(result: AgentResult): void {
  expect(result.exitCode, result.stderr).toBe(0);
  expect(readFileSync(join(project, "out.txt"), "utf8")).toBe("hi\n");
}

describe.skipIf(claudeUnavailableReason() !== null)("the Claude Code runner", () => {
  it(
    "runs one tool call then text, and parses turns, tokens, cost and session",
    { timeout: 30_000 },
    async () => {
      const anthropic = await startFakeAnthropic([
        { toolUses: [{ name: "Bash", input: { command: "echo hi > out.txt" } }] },
        { text: "Wrote out.txt." },
      ]);
      fake = anthropic;
      const runner = claudeRunner({
        bin: claudeBinary,
        maxTurns: 4,
        baseEnv: cleanEnv(home, {
          ANTHROPIC_BASE_URL: anthropic.url,
          ANTHROPIC_API_KEY: "test",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        }),
      });
      const result = await runner.run(request());

      expectWrote(result);
      // The fake's default usage per reply: 10 input, 5 output.
      expect(result).toMatchObject({ outcome: "ok", turns: 2, tokens: 30, summary: "Wrote out.txt." });
      expect(result.costUsd).toBeGreaterThan(0);
      expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(userTexts(anthropic.mainRequests()[0]!).join("\n")).toContain(PROMPT);
      expect(runner.parse(result.raw, result.exitCode, result.stderr)).toEqual({
        outcome: result.outcome,
        turns: result.turns,
        tokens: result.tokens,
        costUsd: result.costUsd,
        summary: result.summary,
        sessionId: result.sessionId,
      });
    },
  );
});

describe.skipIf(codexUnavailableReason() !== null)("the Codex runner", () => {
  it(
    "runs one shell command then text in its workspace-write sandbox, and parses the usage",
    { timeout: 30_000 },
    async () => {
      const openai = await startFakeOpenAi([execCommand("echo hi > out.txt"), { text: "Wrote out.txt." }]);
      fake = openai;
      mkdirSync(join(home, ".codex"));
      const runner = codexRunner({
        bin: codexBinary,
        args: codexConfigArgs({ baseUrl: openai.url, model: "fake-model" }),
        baseEnv: cleanEnv(home, { CODEX_HOME: join(home, ".codex"), REINS_FAKE_OPENAI_KEY: "test" }),
      });
      const result = await runner.run(request());

      expectWrote(result);
      expect(result).toMatchObject({
        outcome: "ok",
        turns: 2,
        tokens: 30,
        costUsd: 0,
        summary: "Wrote out.txt.",
      });
      expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(JSON.stringify(openai.mainRequests()[0]!.body?.input)).toContain(PROMPT);
    },
  );
});

describe.skipIf(geminiUnavailableReason() !== null)("the Gemini CLI runner", () => {
  it("runs one shell command then text in yolo mode, and parses the usage", { timeout: 30_000 }, async () => {
    const gemini = await startFakeGemini([shellCommand("echo hi > out.txt"), { text: "Wrote out.txt." }]);
    fake = gemini;
    writeSettings(home, false);
    const runner = geminiRunner({
      bin: geminiBinary,
      model: "gemini-2.5-flash",
      baseEnv: cleanEnv(home, { GOOGLE_GEMINI_BASE_URL: gemini.url, GEMINI_API_KEY: "test" }),
    });
    const result = await runner.run(request());

    expectWrote(result);
    // The fake's default usage per reply: 100 prompt, 10 candidates.
    expect(result).toMatchObject({
      outcome: "ok",
      turns: 2,
      tokens: 220,
      costUsd: 0,
      summary: "Wrote out.txt.",
    });
    expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.stringify(gemini.mainRequests()[0]!.body?.contents)).toContain(PROMPT);
    // Nothing but the scripted turns (no router call: the model was fixed).
    expect(gemini.requests.filter((r) => r.kind !== "main")).toEqual([]);
  });
});
