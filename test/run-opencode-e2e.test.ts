import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseOpencode } from "../src/run/agents/opencode.js";
import type { AgentParse } from "../src/run/agents/runner.js";
import { readRunTrace } from "../src/run/drive/run-trace.js";
import { SqliteStore } from "../src/base/store/sqlite.js";
import { e2eEach } from "#test/e2e-project.js";
import {
  startFakeChat,
  toolResults,
  userTexts,
  type ChatReply,
  type ChatRequest,
  type FakeChat,
} from "#test/fake-chat.js";
import { fakeProviderConfig, OPENCODE_BINARIES, opencodeUnavailableReason } from "#test/opencode-cli.js";
import { cleanEnv, reinsBin, runBounded } from "#test/processes.js";
import { git, gitProject, PYTHON_ADD } from "#test/run-project.js";

/**
 * `reins run --agent opencode` end to end: the real opencode (`opencode run --format json`), offline against
 * a scripted Chat Completions API, drives a small Python project whose check is pytest. The first iteration
 * writes a wrong `add`; its check is red, so the second is a FIX ONLY iteration, which fixes it; the run ends
 * proven. reins' plugin runs inside each iteration from the run's own opencode config folder
 * (`.reins/run-hooks/opencode-config`), and the spend is charged once: the plugin charges the sessions and
 * the pool, the run records it without charging.
 */

const e2e = e2eEach<FakeChat>("run-opencode");

const { FILES, WRONG, RIGHT, TEST } = PYTHON_ADD;

const bash = (command: string): ChatReply => ({
  toolCalls: [{ name: "bash", arguments: { command, description: "step" } }],
  usage: { prompt: 900, completion: 30 },
});

/** The iteration's script: the first writes a wrong add and claims done; a FIX ONLY one fixes and tests it. */
function script(request: ChatRequest): ChatReply {
  const fix = userTexts(request).some((t) => t.includes("FIX ONLY."));
  const calls = toolResults(request).length;
  const steps = fix ? [RIGHT, TEST] : [WRONG];
  return calls < steps.length
    ? bash(steps[calls] ?? "")
    : { text: fix ? "Fixed: the test passes." : "Done.", usage: { prompt: 1_000, completion: 8 } };
}

describe.skipIf(opencodeUnavailableReason("opencode")() !== null)(
  "reins run driving the real opencode",
  () => {
    it(
      "drives a Python project to proven through one FIX ONLY round, the spend charged once",
      { timeout: 300_000 },
      async () => {
        gitProject(e2e.project, FILES);
        const fake = await startFakeChat(script);
        e2e.fake = fake;
        // The user's opencode configuration: the fake as its only provider.
        const config = join(e2e.home, ".config", "opencode");
        mkdirSync(config, { recursive: true });
        writeFileSync(join(config, "opencode.json"), JSON.stringify(fakeProviderConfig(fake.url)));
        const env = cleanEnv(e2e.home, {
          OPENCODE_DISABLE_AUTOUPDATE: "1",
          // No models.dev catalogue to fetch offline: without it each run waits 30 s for it.
          OPENCODE_DISABLE_MODELS_FETCH: "1",
          REINS_OPENCODE_BIN: OPENCODE_BINARIES.opencode,
        });
        const ran = await runBounded(
          process.execPath,
          [reinsBin, "run", "--agent", "opencode", "--max-iterations", "3", "--agent-timeout", "3"],
          { cwd: e2e.project, env, timeoutMs: 240_000 },
        );
        expect(ran.timedOut).toBe(false);
        expect(fake.errors).toEqual([]);
        expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
        expect(ran.stdout).toMatch(/\nproven: every task.s checks witnessed its change/);
        expect(readFileSync(join(e2e.project, "calc.py"), "utf8")).toBe("def add(a, b):\n    return a + b\n");
        const run = /^run (\S+): 1 of 1 task\(s\) done/m.exec(ran.stdout)?.[1] ?? "";

        // Two iterations, the second a FIX ONLY one carrying the failing check's output.
        const iterations = agentIterations(run);
        expect(iterations.map((i) => i.outcome)).toEqual(["ok", "ok"]);
        const firsts = fake
          .mainRequests()
          .filter((r) => (r.body?.messages ?? []).every((m) => m.role !== "assistant"));
        expect(firsts).toHaveLength(2);
        const fixPrompt = userTexts(firsts[1]!).join("\n");
        expect(fixPrompt).toContain('FIX ONLY. The checks of task "add"');
        expect(fixPrompt).toMatch(/assert -1 == 5|assert add\(2, 3\) == 5/);

        // `--title` names each session: opencode made no title request, whose tokens no plugin event reports.
        expect(fake.sideSent).toEqual({ input: 0, output: 0 });
        const sent = fake.sent.input + fake.sent.output;
        expect(sent).toBeGreaterThan(0);
        // Every token the fake sent: in the iterations' own output, in the sessions' plugin, once in the pool.
        expect(iterations.reduce((n, i) => n + i.tokens, 0)).toBe(sent);
        const store = new SqliteStore(join(e2e.project, ".reins", "reins.db"));
        try {
          const tokensOf = async (scope: string) =>
            (await store.state(scope))?.budget.session.spent.tokens ?? 0;
          const sessions = (await store.scopes()).filter((s) => s.startsWith("session:"));
          expect(sessions.sort()).toEqual(iterations.map((i) => `session:${i.sessionId}`).sort());
          let hooked = 0;
          for (const s of sessions) hooked += await tokensOf(s);
          expect(hooked).toBe(sent);
          expect(await tokensOf("pool:team")).toBe(sent);
        } finally {
          await store.close();
        }
        // The plugin came from the run's own config folder; nothing of the project's or the user's was written.
        expect(
          existsSync(join(e2e.project, ".reins", "run-hooks", "opencode-config", "plugins", "reins.js")),
        ).toBe(true);
        expect(existsSync(join(e2e.project, ".opencode", "plugins", "reins.js"))).toBe(false);
        expect(existsSync(join(config, "plugins", "reins.js"))).toBe(false);
        expect(git(e2e.project, "status", "--porcelain")).toBe("");

        // The recorded run replays with no model server and no agent.
        await fake.close();
        e2e.fake = undefined;
        const replay = await runBounded(
          process.execPath,
          [reinsBin, "run", "--replay", join(e2e.project, ".reins", "runs", run, "trace.jsonl")],
          {
            cwd: e2e.project,
            env: { ...env, REINS_OPENCODE_BIN: join(e2e.root, "no-opencode-here") },
            timeoutMs: 30_000,
          },
        );
        expect(replay.code, replay.stderr).toBe(0);
        expect(replay.stdout).toMatch(
          new RegExp(`^replayed run ${run}: \\d+ steps, every event, decision and action as recorded`),
        );
      },
    );
  },
);

/** The agent iterations the run's trace recorded, parsed as the run parsed them. */
function agentIterations(run: string): AgentParse[] {
  const trace = readRunTrace(join(e2e.project, ".reins", "runs", run, "trace.jsonl"));
  return [...trace.io.values()]
    .flat()
    .filter((line) => line.op === "agent")
    .map((line) => {
      const { raw, exitCode, stderr } = line.result as {
        raw: string;
        exitCode: number | null;
        stderr: string;
      };
      return parseOpencode(raw, exitCode, stderr);
    });
}
