import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { parseCodex } from "../src/run/agents/codex.js";
import { parseGemini } from "../src/run/agents/gemini.js";
import type { AgentParse } from "../src/run/agents/runner.js";
import { readRunTrace } from "../src/run/drive/run-trace.js";
import { SqliteStore } from "../src/base/store/sqlite.js";
import { codexTestEnv, codexBinary, codexConfigArgs, codexUnavailableReason } from "#test/codex-cli.js";
import { e2eEach, recorded } from "#test/e2e-project.js";
import {
  execCommand,
  functionCallOutputs,
  lastFunctionCallOutputs,
  startFakeOpenAi,
  type FakeOpenAi,
} from "#test/fake-openai.js";
import {
  functionResponses,
  lastFunctionResponses,
  shellCommand,
  startFakeGemini,
  type FakeGemini,
} from "#test/fake-gemini.js";
import { geminiBinary, geminiUnavailableReason, writeSettings } from "#test/gemini-cli.js";
import { cleanEnv, reinsBin, runBounded } from "#test/processes.js";
import { git, gitProject } from "#test/run-project.js";

/**
 * `reins run --agent codex` and `--agent gemini` end to end: the real Codex CLI and the real Gemini CLI,
 * offline against their scripted model APIs on 127.0.0.1, each drive a one-task plan. reins' hooks run
 * inside the iteration from the run's own agent home (`.reins/run-hooks/codex-home`, `gemini-home`), never
 * from the user's files or the project's: the model first tries to approve its own work (`reins approve`),
 * which reins' self-protection guard denies before it runs, then writes the code, tests it and says so. The
 * session's spend reaches the project's pool once: through the hooks, not again through the run.
 */

const e2e = e2eEach<FakeOpenAi | FakeGemini>("run-hooks");

const FILES: Record<string, string> = {
  ".gitignore": ".reins/\n",
  "reins.config.json": `${JSON.stringify({ pools: { team: {} } })}\n`,
  "package.json": `${JSON.stringify({ name: "calc", private: true, type: "module" })}\n`,
  "test/add.test.js": `import { test } from "node:test";
import assert from "node:assert/strict";
import { add } from "../src/add.js";

test("add adds two numbers", () => {
  assert.equal(add(2, 3), 5);
});
`,
  "reins.plan.yaml": `version: 1
name: calc
checks:
  add: { command: "node --test test/add.test.js", tier: medium }
settings:
  maxAttempts: 1
tasks:
  - id: add
    title: Implement add
    checks: [add]
    acceptance: src/add.js exports add(a, b)
`,
};

/** The model's shell calls, in order: approve its own work (denied), write the code, run its test. */
const STEPS = [
  `node "${reinsBin}" approve --task add --reason "I checked it myself"`,
  "echo 'export const add = (a, b) => a + b;' > src/add.js",
  "node --test test/add.test.js",
];
const DONE = "Done: add is implemented and its test passes.";

beforeEach(() => {
  gitProject(e2e.project, FILES);
  mkdirSync(join(e2e.project, "src"));
});

/** Every file under `dir` (links not followed) with its content, to tell that nothing was written there. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name);
      out[path] = readFileSync(path, "utf8");
    }
  return out;
}

/** `reins run` in the project with `env`, bounded; the run's id once it ended proven. */
async function runPlan(agent: string, env: Record<string, string>): Promise<string> {
  const ran = await runBounded(
    process.execPath,
    [reinsBin, "run", "--agent", agent, "--max-iterations", "2", "--agent-timeout", "1"],
    { cwd: e2e.project, env, timeoutMs: 90_000 },
  );
  expect(ran.timedOut).toBe(false);
  expect(e2e.fake?.errors).toEqual([]);
  // A driven agent CLI works without a box yet (its hooks reach the store in .reins/): said at once.
  expect(ran.stderr).toBe(
    `reins: not contained: the hooks and MCP tools of ${agent} reach the run's store in .reins/, which a box around it would hide, so it runs without one; reins cannot keep the agent ${agent} from switching it off (--require-contained refuses to run it)\n`,
  );
  expect(ran.code, ran.stdout).toBe(0);
  expect(ran.stdout).toMatch(/\nproven: every task.s checks witnessed its change/);
  const run = /^run (\S+): 1 of 1 task\(s\) done/m.exec(ran.stdout)?.[1];
  if (run === undefined) throw new Error(`no run line in ${ran.stdout}`);
  expect(readFileSync(join(e2e.project, "src", "add.js"), "utf8")).toBe(
    "export const add = (a, b) => a + b;\n",
  );
  return run;
}

/** The agent iterations the run's trace recorded, parsed as the run parsed them. */
function iterations(run: string, parse: (raw: string, code: number | null, err: string) => AgentParse) {
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
      return parse(raw, exitCode, stderr);
    });
}

/**
 * What the hooks recorded: the session's events, the denied approval among them, and the spend counted
 * once: the session charged the pool as it went, and the run recorded the same spend without charging it.
 */
async function expectHooked(run: string, session: AgentParse): Promise<void> {
  const { log } = await recorded(e2e.project, session.sessionId ?? "");
  const kinds = log.map((r) => r.event.kind);
  expect(kinds[0]).toBe("session.started");
  expect(kinds).toContain("usage.recorded");
  const approve = log.find(
    (r) => r.event.kind === "tool.requested" && JSON.stringify(r.event).includes("approve"),
  );
  expect(approve?.decision.verdict).toBe("block");
  const store = new SqliteStore(join(e2e.project, ".reins", "reins.db"));
  try {
    const tokensOf = async (scope: string) => (await store.state(scope))?.budget.session.spent.tokens ?? 0;
    const sessions = (await store.scopes()).filter((s) => s.startsWith("session:"));
    expect(sessions).toEqual([`session:${session.sessionId}`]);
    expect(session.tokens).toBeGreaterThan(0);
    expect(await tokensOf(sessions[0] ?? "")).toBe(session.tokens);
    expect(await tokensOf(`run:${run}`)).toBe(session.tokens);
    expect(await tokensOf("pool:team")).toBe(session.tokens);
  } finally {
    await store.close();
  }
  // Nothing of the project's was written for the hooks: its tree is the run's commit, and clean.
  expect(git(e2e.project, "status", "--porcelain", "--untracked-files=all")).toBe("");
  expect(existsSync(join(e2e.project, ".codex"))).toBe(false);
  expect(existsSync(join(e2e.project, ".gemini"))).toBe(false);
}

describe.skipIf(codexUnavailableReason() !== null)("reins run driving the real Codex CLI", () => {
  it(
    "runs reins' hooks inside the iteration from the run's own Codex home, trusted, the user's left as it was",
    { timeout: 120_000 },
    async () => {
      const openai = await startFakeOpenAi((request) => {
        const step = functionCallOutputs(request).length;
        return step < STEPS.length ? execCommand(STEPS[step] ?? "") : { text: DONE };
      });
      e2e.fake = openai;
      // The user's Codex home: the fake provider in their config.toml (which the run's copy must keep),
      // their sessions folder (which the run's home links to), and no hooks or trust of reins'.
      const userHome = join(e2e.home, ".codex");
      mkdirSync(join(userHome, "sessions"), { recursive: true });
      const provider = codexConfigArgs({ baseUrl: openai.url, model: "fake-model" }).filter(
        (_, i) => i % 2 === 1,
      );
      writeFileSync(join(userHome, "config.toml"), `# the user's own\n${provider.join("\n")}\n`);
      const before = snapshot(userHome);

      const run = await runPlan(
        "codex",
        // The run's Codex home is in .reins/, under the OS temp dir in a test: Codex gets a temp dir of its own.
        codexTestEnv(e2e.home, { REINS_CODEX_BIN: codexBinary, REINS_FAKE_OPENAI_KEY: "test" }),
      );

      // The approval was denied by reins' PreToolUse hook before it ran; the model read why.
      const denied = openai.mainRequests().map((r) => lastFunctionCallOutputs(r)[0]?.text ?? "")[1] ?? "";
      expect(denied).toMatch(/^Command blocked by PreToolUse hook: reins: /);
      expect(denied).toContain("approve");
      const [session, ...more] = iterations(run, parseCodex);
      expect(more).toEqual([]);
      expect(session?.outcome).toBe("ok");
      await expectHooked(run, session!);

      // The user's Codex home: its files as they were (the session's rollout came through the link).
      const after = snapshot(userHome);
      expect(Object.keys(after).filter((p) => !p.startsWith(join(userHome, "sessions")))).toEqual(
        Object.keys(before),
      );
      for (const [path, text] of Object.entries(before)) expect(after[path]).toBe(text);
      expect(Object.keys(after).some((p) => p.startsWith(join(userHome, "sessions")))).toBe(true);
    },
  );
});

describe.skipIf(geminiUnavailableReason() !== null)("reins run driving the real Gemini CLI", () => {
  it(
    "runs reins' hooks inside the iteration from the run's own Gemini home, the user's left as it was",
    { timeout: 120_000 },
    async () => {
      const gemini = await startFakeGemini((request) => {
        const step = functionResponses(request).length;
        return step < STEPS.length ? shellCommand(STEPS[step] ?? "") : { text: DONE };
      });
      e2e.fake = gemini;
      writeSettings(e2e.home, false);
      // A fixed model: no router call asks a small model to choose one first.
      const settingsPath = join(e2e.home, ".gemini", "settings.json");
      const settings = JSON.parse(readFileSync(settingsPath, "utf8")) as { model: Record<string, unknown> };
      writeFileSync(
        settingsPath,
        JSON.stringify({ ...settings, model: { ...settings.model, name: "gemini-2.5-flash" } }),
      );
      const before = snapshot(join(e2e.home, ".gemini"));

      const run = await runPlan(
        "gemini",
        cleanEnv(e2e.home, {
          REINS_GEMINI_BIN: geminiBinary,
          GOOGLE_GEMINI_BASE_URL: gemini.url,
          GEMINI_API_KEY: "test",
        }),
      );

      // The approval was denied by reins' BeforeTool hook before it ran; the model read why.
      const denied = gemini.mainRequests().map((r) => lastFunctionResponses(r)[0]?.error ?? "")[1] ?? "";
      expect(denied).toContain("reins: ");
      expect(denied).toContain("approve");
      expect(gemini.requests.filter((r) => r.kind !== "main").map((r) => r.path)).toEqual([]);
      const [session, ...more] = iterations(run, parseGemini);
      expect(more).toEqual([]);
      expect(session?.outcome).toBe("ok");
      await expectHooked(run, session!);

      // The user's Gemini folder: its files as they were (the session's chats went through the links).
      const after = snapshot(join(e2e.home, ".gemini"));
      for (const [path, text] of Object.entries(before)) expect(after[path]).toBe(text);
    },
  );
});
