import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { memoryIo } from "../src/cli/io.js";
import { run } from "../src/cli/run.js";
import { SqliteStore } from "../src/store/sqlite.js";
import { claudeUnavailableReason, runClaude, type ClaudeRun } from "./support/claude-code.js";
import { freePort } from "./support/redis-server.js";
import {
  lastToolResults,
  lastUserTexts,
  startFakeAnthropic,
  type FakeAnthropic,
  type Script,
} from "./support/fake-anthropic.js";

/**
 * The real Claude Code CLI, offline against a scripted Messages API, with reins' hooks installed by
 * `reins init claude`. Assertions are on what the client did: the requests the fake model received and
 * the final result, then on what reins recorded.
 */

let root: string;
let project: string;
let home: string;
let fake: FakeAnthropic | undefined;

beforeEach(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "reins-claude-e2e-")));
  project = join(root, "project");
  home = join(root, "home");
  mkdirSync(project);
  mkdirSync(home);
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "demo", private: true, scripts: { test: "node test.js" } }),
  );
  writeFileSync(join(project, "test.js"), "console.log('1 passed');\n");
  writeFileSync(
    join(project, "fail.js"),
    "console.error('Error: connect ECONNREFUSED 127.0.0.1:5432'); process.exit(1);\n",
  );
  const io = memoryIo({ cwd: project, env: { HOME: home } });
  writeFileSync(join(project, "reins.config.json"), JSON.stringify({}));
  expect(await run(["init", "claude", "--in-process"], io), io.err.join("")).toBe(0);
});

afterEach(async () => {
  await fake?.close();
  fake = undefined;
  rmSync(root, { recursive: true, force: true });
});

function policy(value: object): void {
  writeFileSync(join(project, "reins.config.json"), JSON.stringify(value));
}

async function drive(script: Script, maxTurns: number): Promise<ClaudeRun> {
  fake = await startFakeAnthropic(script);
  const result = await runClaude({
    cwd: project,
    home,
    prompt: "Do the task.",
    baseUrl: fake.url,
    maxTurns,
    timeoutMs: 90_000,
  });
  expect(result.timedOut, result.stderr).toBe(false);
  expect(fake.errors).toEqual([]);
  return result;
}

async function decisions(sessionId: string) {
  const store = new SqliteStore(join(project, ".reins", "reins.db"));
  try {
    return {
      log: await store.events(`session:${sessionId}`),
      state: await store.state(`session:${sessionId}`),
    };
  } finally {
    await store.close();
  }
}

const bash = (command: string, usage?: { input_tokens: number; output_tokens: number }) => ({
  toolUses: [{ name: "Bash", input: { command, description: "run" } }],
  ...(usage !== undefined ? { usage } : {}),
});

describe.skipIf(claudeUnavailableReason() !== null)("reins guarding the real Claude Code CLI", () => {
  it("denies the 5th identical failing Bash call, and the model reads why", async () => {
    const script: Script = (_request, turn) =>
      turn < 7 ? bash("node fail.js") : { text: "I am stuck; stopping." };
    const result = await drive(script, 10);

    const main = fake!.mainRequests();
    const results = main.map((r) => lastToolResults(r)[0]);
    // Calls 1-4 ran and failed for real; the 5th was denied by reins before it ran.
    for (let i = 1; i <= 4; i++) {
      expect(results[i]?.text).toContain("ECONNREFUSED");
      expect(results[i]?.text).not.toContain("hook error");
    }
    expect(results[5]?.isError).toBe(true);
    expect(results[5]?.text).toMatch(
      /^PreToolUse:Bash hook error: reins: The same Bash call `node fail\.js` was made 5 times in a row/,
    );
    expect(results[6]?.text).toContain("The circuit breaker is open");
    expect(result.json?.subtype).toBe("success");

    const { state } = await decisions(result.json!.session_id);
    expect(state?.breaker).toMatchObject({ status: "open", reason: "duplicate_calls" });
  }, 120_000);

  it("blocks a stop after an edit without tests, then lets the agent stop once they pass", async () => {
    const script: Script = [
      {
        toolUses: [
          {
            name: "Write",
            input: {
              file_path: join(project, "slug.js"),
              content: "export const slug = (s) => s.toLowerCase();\n",
            },
          },
        ],
      },
      { text: "Done." },
      bash("npm test"),
      { text: "Done: the tests pass." },
    ];
    const result = await drive(script, 8);

    const main = fake!.mainRequests();
    expect(main).toHaveLength(4);
    const feedback = lastUserTexts(main[2]!).join("\n");
    expect(feedback).toContain("Stop hook feedback:");
    expect(feedback).toContain("reins: Not done yet: tests has not run (run `npm test`)");
    expect(lastToolResults(main[3]!)[0]?.text).toContain("1 passed");
    expect(result.json).toMatchObject({ subtype: "success", result: "Done: the tests pass." });

    const { log } = await decisions(result.json!.session_id);
    const claims = log.filter((r) => r.event.kind === "completion.claimed").map((r) => r.decision.verdict);
    expect(claims).toEqual(["block", "allow"]);
    expect(
      log.some((r) => r.event.kind === "verification.ran" && r.event.name === "tests" && r.event.passed),
    ).toBe(true);
  }, 120_000);

  it("pauses a session whose usage crosses its budget", async () => {
    policy({ budget: { session: { tokens: 3_000 } } });
    const usage = { input_tokens: 1_000, output_tokens: 100 };
    const script: Script = (_request, turn) =>
      turn < 6 ? bash(`echo step ${turn}`, usage) : { text: "Stopping.", usage };
    const result = await drive(script, 10);

    const texts = fake!.mainRequests().map((r) => lastToolResults(r)[0]?.text ?? "");
    const denied = texts.findIndex((t) => t.startsWith("PreToolUse:Bash hook error"));
    expect(denied).toBeGreaterThan(0);
    expect(texts[denied]).toContain("budget is paused");
    expect(texts.slice(1, denied).every((t) => t.startsWith("step "))).toBe(true);

    const { state, log } = await decisions(result.json!.session_id);
    expect(state?.budget.session.paused).toBe("tokens");
    expect(state?.budget.session.spent.tokens).toBeGreaterThanOrEqual(3_000);
    expect(log.some((r) => r.decision.alerts.some((a) => a.kind === "budget_paused"))).toBe(true);
  }, 120_000);

  it("pauses a USD budget for the model Claude Code reports, which the price table does not list", async () => {
    // Claude Code 2.1.330 reports its default model as claude-opus-5-5: priced as Opus, never as free.
    policy({ budget: { session: { usd: 1, tokens: null } } });
    const usage = { input_tokens: 150_000, output_tokens: 100 };
    const script: Script = (_request, turn) =>
      turn < 6 ? bash(`echo step ${turn}`, usage) : { text: "Stopping.", usage };
    const result = await drive(script, 10);

    const texts = fake!.mainRequests().map((r) => lastToolResults(r)[0]?.text ?? "");
    const denied = texts.findIndex((t) => t.startsWith("PreToolUse:Bash hook error"));
    expect(denied).toBeGreaterThan(0);
    expect(texts[denied]).toMatch(/The session budget is paused: \$2\.\d\d used of \$1\.00/);
    const { state, log } = await decisions(result.json!.session_id);
    expect(state?.budget.session.paused).toBe("usd");
    expect(state?.budget.session.spent.usd).toBeGreaterThan(1);
    const told = log.flatMap((r) => r.decision.instructions).join("\n");
    expect(told).toContain("USD spend of `claude-opus-5-5` is estimated as `claude-opus-4`");
  }, 120_000);

  it("denies the agent's removing reins' own files or extending its own budget, and the model reads why", async () => {
    const script: Script = [
      bash("rm -rf .reins"),
      bash("npx reins budget extend session:me 1000000 --reason 'I need more'"),
      { text: "Understood." },
    ];
    const result = await drive(script, 6);
    const texts = fake!.mainRequests().map((r) => lastToolResults(r)[0]?.text ?? "");
    expect(texts[1]).toMatch(/^PreToolUse:Bash hook error: reins: `\.reins` belongs to reins/);
    expect(texts[2]).toMatch(
      /^PreToolUse:Bash hook error: reins: `npx reins budget extend .*` acts as a person/,
    );
    expect(existsSync(join(project, ".reins", "reins.db"))).toBe(true);
    const { log } = await decisions(result.json!.session_id);
    expect(log.filter((r) => r.event.kind === "tool.completed")).toEqual([]);
  }, 120_000);

  it("never blocks a healthy session", async () => {
    const script: Script = [
      { toolUses: [{ name: "Read", input: { file_path: join(project, "test.js") } }] },
      {
        toolUses: [
          {
            name: "Write",
            input: { file_path: join(project, "add.js"), content: "export const add = (a, b) => a + b;\n" },
          },
        ],
      },
      bash("npm test"),
      { text: "Added add.js; the tests pass." },
    ];
    const result = await drive(script, 8);

    const main = fake!.mainRequests();
    expect(main).toHaveLength(4);
    for (const request of main) {
      for (const r of lastToolResults(request)) expect(r.text).not.toContain("hook error");
      expect(lastUserTexts(request).join("\n")).not.toContain("Stop hook feedback");
    }
    expect(result.json).toMatchObject({ subtype: "success", result: "Added add.js; the tests pass." });
    const { log } = await decisions(result.json!.session_id);
    expect(log.filter((r) => r.decision.verdict === "block")).toEqual([]);
    expect(log.map((r) => r.event.kind)).toEqual(
      expect.arrayContaining([
        "session.started",
        "tool.requested",
        "tool.completed",
        "verification.ran",
        "completion.claimed",
      ]),
    );
  }, 120_000);

  it("answers through the daemon with the default install (http hooks): no process per tool call, same guard", async () => {
    const port = await freePort();
    const io = memoryIo({ cwd: project, env: { HOME: home } });
    expect(await run(["init", "claude", "--uninstall"], io)).toBe(0);
    expect(await run(["init", "claude", "--port", String(port)], io)).toBe(0);
    try {
      const script: Script = (_request, turn) => (turn < 6 ? bash("node fail.js") : { text: "Stopping." });
      const result = await drive(script, 10);
      const results = fake!.mainRequests().map((r) => lastToolResults(r)[0]);
      expect(results[4]?.text).toContain("ECONNREFUSED");
      expect(results[5]?.text).toMatch(
        /^PreToolUse:Bash hook error: reins: The same Bash call `node fail\.js` was made 5 times/,
      );
      // The SessionStart command hook started the daemon; every tool call went to it over HTTP.
      expect(existsSync(join(project, ".reins", "serve.pid"))).toBe(true);
      const { log } = await decisions(result.json!.session_id);
      expect(log.filter((r) => r.event.kind === "tool.requested")).toHaveLength(6);
    } finally {
      const pidFile = join(project, ".reins", "serve.pid");
      if (existsSync(pidFile)) process.kill(Number(readFileSync(pidFile, "utf8")), "SIGTERM");
    }
  }, 120_000);
});
