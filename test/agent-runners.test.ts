import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { claudeRunner } from "../src/run/agents/claude.js";
import { codexRunner } from "../src/run/agents/codex.js";
import { codexRunArgs, geminiRunEnv } from "../src/install/driven-hooks.js";
import { geminiRunner } from "../src/run/agents/gemini.js";
import type { AgentRequest, AgentResult } from "../src/run/agents/runner.js";
import { claudeBinary, claudeUnavailableReason } from "#test/claude-code.js";
import { codexTestEnv, codexBinary, codexConfigArgs, codexUnavailableReason } from "#test/codex-cli.js";
import { e2eEach } from "#test/e2e-project.js";
import { startFakeAnthropic, userTexts } from "#test/fake-anthropic.js";
import { startFakeGemini, shellCommand } from "#test/fake-gemini.js";
import { execCommand, startFakeOpenAi } from "#test/fake-openai.js";
import type { FakeModel } from "#test/fake-model.js";
import { geminiBinary, geminiUnavailableReason, writeSettings } from "#test/gemini-cli.js";
import { cleanEnv, reinsBin } from "#test/processes.js";

/**
 * The agent runners of `reins run` driving the real CLIs offline, each against its scripted model API on
 * 127.0.0.1 for one short iteration: one shell command that writes a file, then a text answer. Assertions
 * are on what the runner parsed (outcome, turns, tokens, session), on the file the tool wrote, and on the
 * prompt reaching the model through stdin.
 */

const PROMPT = "-- Write hi into out.txt, then say so.";
const e2e = e2eEach<FakeModel<unknown>>("agent-runner");

const request = (): AgentRequest => ({
  run: "run-1",
  task: "T1",
  attempt: 1,
  mode: "implement",
  prompt: PROMPT,
  cwd: e2e.project,
  env: {},
  timeoutMs: 25_000,
});

/**
 * What every runner must have done: the tool call ran for real in the project, and the run parsed as the
 * two turns of the script (tool call, then text), ended ok, with `tokens` and a session id.
 */
function expectRanTheScript(result: AgentResult, tokens: number): void {
  expect(result.exitCode, result.stderr).toBe(0);
  expect(readFileSync(join(e2e.project, "out.txt"), "utf8")).toBe("hi\n");
  expect(result).toMatchObject({ outcome: "ok", turns: 2, tokens, summary: "Wrote out.txt." });
  expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
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
      e2e.fake = anthropic;
      const runner = claudeRunner({
        bin: claudeBinary,
        maxTurns: 4,
        baseEnv: cleanEnv(e2e.home, {
          ANTHROPIC_BASE_URL: anthropic.url,
          ANTHROPIC_API_KEY: "test",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        }),
      });
      const result = await runner.run(request());

      // The fake's default usage per reply: 10 input, 5 output.
      expectRanTheScript(result, 30);
      expect(result.costUsd).toBeGreaterThan(0);
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
      e2e.fake = openai;
      mkdirSync(join(e2e.home, ".codex"));
      const runner = codexRunner({
        bin: codexBinary,
        args: codexConfigArgs({ baseUrl: openai.url, model: "fake-model" }),
        baseEnv: codexTestEnv(e2e.home, {
          CODEX_HOME: join(e2e.home, ".codex"),
          REINS_FAKE_OPENAI_KEY: "test",
        }),
      });
      const result = await runner.run(request());

      expectRanTheScript(result, 30);
      expect(result.costUsd).toBe(0);
      expect(JSON.stringify(openai.mainRequests()[0]!.body?.input)).toContain(PROMPT);
    },
  );
  it(
    "hands a driven Codex reins' MCP tools (reins run's -c overrides), in its first request",
    { timeout: 30_000 },
    async () => {
      const openai = await startFakeOpenAi([{ text: "Nothing to do." }]);
      e2e.fake = openai;
      mkdirSync(join(e2e.home, ".codex"));
      const runner = codexRunner({
        bin: codexBinary,
        args: [...codexConfigArgs({ baseUrl: openai.url, model: "fake-model" }), ...codexRunArgs(reinsBin)],
        baseEnv: codexTestEnv(e2e.home, {
          CODEX_HOME: join(e2e.home, ".codex"),
          REINS_FAKE_OPENAI_KEY: "test",
        }),
      });
      const result = await runner.run(request());
      expect(result.outcome).toBe("ok");
      const tools = JSON.stringify(openai.mainRequests()[0]!.body?.tools);
      for (const tool of ["verify_task_completion", "update_task_status", "read_spec"])
        expect(tools).toContain(tool);
    },
  );
});

describe.skipIf(geminiUnavailableReason() !== null)("the Gemini CLI runner", () => {
  it("runs one shell command then text in yolo mode, and parses the usage", { timeout: 30_000 }, async () => {
    const gemini = await startFakeGemini([shellCommand("echo hi > out.txt"), { text: "Wrote out.txt." }]);
    e2e.fake = gemini;
    writeSettings(e2e.home, false);
    const runner = geminiRunner({
      bin: geminiBinary,
      model: "gemini-2.5-flash",
      baseEnv: cleanEnv(e2e.home, { GOOGLE_GEMINI_BASE_URL: gemini.url, GEMINI_API_KEY: "test" }),
    });
    const result = await runner.run(request());

    // The fake's default usage per reply: 100 prompt, 10 candidates.
    expectRanTheScript(result, 220);
    expect(result.costUsd).toBe(0);
    expect(JSON.stringify(gemini.mainRequests()[0]!.body?.contents)).toContain(PROMPT);
    // Nothing but the scripted turns (no router call: the model was fixed).
    expect(gemini.requests.filter((r) => r.kind !== "main")).toEqual([]);
  });

  it(
    "hands a driven Gemini CLI reins' MCP tools (reins run's own Gemini home), in its first request",
    { timeout: 30_000 },
    async () => {
      const gemini = await startFakeGemini([{ text: "Nothing to do." }]);
      e2e.fake = gemini;
      writeSettings(e2e.home, false);
      const userSettings = readFileSync(join(e2e.home, ".gemini", "settings.json"), "utf8");
      const runner = geminiRunner({
        bin: geminiBinary,
        model: "gemini-2.5-flash",
        baseEnv: cleanEnv(e2e.home, { GOOGLE_GEMINI_BASE_URL: gemini.url, GEMINI_API_KEY: "test" }),
        env: geminiRunEnv(e2e.project, reinsBin, undefined, e2e.home),
      });
      const result = await runner.run(request());
      expect(result.outcome, result.stderr).toBe("ok");
      const tools = JSON.stringify(gemini.mainRequests()[0]!.body?.tools);
      for (const tool of ["verify_task_completion", "update_task_status", "read_spec"])
        expect(tools).toContain(tool);
      // The user's settings are as they were; the run's copy lives under .reins.
      expect(readFileSync(join(e2e.home, ".gemini", "settings.json"), "utf8")).toBe(userSettings);
    },
  );
});
