import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseCopilot } from "../src/run/agents/copilot.js";
import type { AgentParse } from "../src/run/agents/runner.js";
import { readRunTrace } from "../src/run/drive/run-trace.js";
import { SqliteStore } from "../src/base/store/sqlite.js";
import { copilotBinary, copilotEnv, copilotUnavailableReason } from "#test/copilot-cli.js";
import { e2eEach } from "#test/e2e-project.js";
import {
  bashCall,
  startFakeChatStream,
  textsOf,
  type ChatReply,
  type ChatStreamRequest,
  type FakeChatStream,
} from "#test/fake-chat-stream.js";
import { reinsBin, runBounded } from "#test/processes.js";
import { git, gitProject, PYTHON_ADD } from "#test/run-project.js";

/**
 * `reins run --agent copilot` end to end: the real Copilot CLI, offline against a scripted streaming Chat
 * Completions API, drives a small Python project whose check is pytest. The first iteration writes a wrong
 * `add`; its check is red, so the second is a FIX ONLY iteration, which fixes it; the run ends proven.
 * reins' hooks run inside each iteration from the run's own Copilot home (`.reins/run-hooks/copilot-home`),
 * and the spend is charged once: the sessions' hooks charge the pool, the run records it without charging.
 */

const e2e = e2eEach<FakeChatStream>("run-copilot");

const { FILES, WRONG, RIGHT, TEST } = PYTHON_ADD;

/** The iteration's script: the first writes a wrong add and claims done; a FIX ONLY one fixes and tests it. */
function script(request: ChatStreamRequest): ChatReply {
  const texts = textsOf(request);
  const fix = texts.some((t) => t.includes("FIX ONLY."));
  const calls = (request.body?.messages ?? []).filter((m) => m.role === "tool").length;
  const steps = fix ? [RIGHT, TEST] : [WRONG];
  return calls < steps.length
    ? bashCall(steps[calls] ?? "")
    : { text: fix ? "Fixed: the test passes." : "Done." };
}

describe.skipIf(copilotUnavailableReason() !== null)("reins run driving the real Copilot CLI", () => {
  it(
    "drives a Python project to proven through one FIX ONLY round, the spend charged once",
    { timeout: 240_000 },
    async () => {
      gitProject(e2e.project, FILES);
      const fake = await startFakeChatStream(script);
      e2e.fake = fake;
      const env = { ...copilotEnv(e2e.home, fake.url), REINS_COPILOT_BIN: copilotBinary };
      const ran = await runBounded(
        process.execPath,
        [reinsBin, "run", "--agent", "copilot", "--max-iterations", "3", "--agent-timeout", "2"],
        { cwd: e2e.project, env, timeoutMs: 200_000 },
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
      const fixPrompt = textsOf(firsts[1]!).join("\n");
      expect(fixPrompt).toContain('FIX ONLY. The checks of task "add"');
      expect(fixPrompt).toMatch(/assert -1 == 5|assert add\(2, 3\) == 5/);

      // Every token the fake sent: in the iterations' own reports, in the sessions' hooks, once in the pool.
      expect(iterations.reduce((n, i) => n + i.tokens, 0)).toBe(fake.sent.tokens);
      const store = new SqliteStore(join(e2e.project, ".reins", "reins.db"));
      try {
        const tokensOf = async (scope: string) =>
          (await store.state(scope))?.budget.session.spent.tokens ?? 0;
        const sessions = (await store.scopes()).filter((s) => s.startsWith("session:"));
        expect(sessions.sort()).toEqual(iterations.map((i) => `session:${i.sessionId}`).sort());
        let hooked = 0;
        for (const s of sessions) hooked += await tokensOf(s);
        expect(hooked).toBe(fake.sent.tokens);
        expect(await tokensOf("pool:team")).toBe(fake.sent.tokens);
      } finally {
        await store.close();
      }
      // The hooks came from the run's own Copilot home; nothing of the project's was written for them.
      expect(
        existsSync(join(e2e.project, ".reins", "run-hooks", "copilot-home", "hooks", "reins.json")),
      ).toBe(true);
      expect(existsSync(join(e2e.project, ".github"))).toBe(false);
      expect(existsSync(join(e2e.home, ".copilot", "hooks", "reins.json"))).toBe(false);
      expect(git(e2e.project, "status", "--porcelain")).toBe("");

      // The recorded run replays with no model server and no agent.
      await fake.close();
      e2e.fake = undefined;
      const replay = await runBounded(
        process.execPath,
        [reinsBin, "run", "--replay", join(e2e.project, ".reins", "runs", run, "trace.jsonl")],
        {
          cwd: e2e.project,
          env: { ...env, REINS_COPILOT_BIN: join(e2e.root, "no-copilot-here") },
          timeoutMs: 30_000,
        },
      );
      expect(replay.code, replay.stderr).toBe(0);
      expect(replay.stdout).toMatch(
        new RegExp(`^replayed run ${run}: \\d+ steps, every event, decision and action as recorded`),
      );
    },
  );
});

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
      return parseCopilot(raw, exitCode, stderr);
    });
}
