import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { claudeUnavailableReason, runClaude, type ClaudeRun } from "#test/claude-code.js";
import {
  e2eProject,
  failJs,
  initReins,
  npmTestPackage,
  recorded,
  removeE2eProject,
} from "#test/e2e-project.js";
import { listDaemons } from "../src/guard/daemon/list.js";
import {
  lastToolResults,
  lastUserTexts,
  startFakeAnthropic,
  type FakeAnthropic,
  type Script,
} from "#test/fake-anthropic.js";

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
  ({ root, project, home } = e2eProject("claude", {
    "package.json": npmTestPackage(),
    "test.js": "console.log('1 passed');\n",
    "fail.js": failJs,
  }));
  await initReins({ project, home }, ["claude", "--in-process"]);
});

afterEach(async () => {
  await fake?.close();
  fake = undefined;
  await removeE2eProject(root);
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

const bash = (command: string, usage?: { input_tokens: number; output_tokens: number }) => ({
  toolUses: [{ name: "Bash", input: { command, description: "run" } }],
  ...(usage !== undefined ? { usage } : {}),
});

/**
 * Six `echo` calls, then a stop, every reply reporting `usage`; the tool results the model received and the
 * index of the first one a hook denied, which must be a later call than the first.
 */
async function spendUntilDenied(usage: { input_tokens: number; output_tokens: number }) {
  const script: Script = (_request, turn) =>
    turn < 6 ? bash(`echo step ${turn}`, usage) : { text: "Stopping.", usage };
  const result = await drive(script, 10);
  const texts = fake!.mainRequests().map((r) => lastToolResults(r)[0]?.text ?? "");
  const denied = texts.findIndex((t) => t.startsWith("PreToolUse:Bash hook error"));
  expect(denied).toBeGreaterThan(0);
  return { result, texts, denied };
}

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

    const { state } = await recorded(project, result.json!.session_id);
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

    const { log } = await recorded(project, result.json!.session_id);
    const claims = log.filter((r) => r.event.kind === "completion.claimed").map((r) => r.decision.verdict);
    expect(claims).toEqual(["block", "allow"]);
    expect(
      log.some((r) => r.event.kind === "verification.ran" && r.event.name === "tests" && r.event.passed),
    ).toBe(true);
  }, 120_000);

  it("pauses a session whose usage crosses its budget", async () => {
    policy({ budget: { session: { tokens: 3_000 } } });
    const { result, texts, denied } = await spendUntilDenied({ input_tokens: 1_000, output_tokens: 100 });
    expect(texts[denied]).toContain("budget is paused");
    expect(texts.slice(1, denied).every((t) => t.startsWith("step "))).toBe(true);

    const { state, log } = await recorded(project, result.json!.session_id);
    expect(state?.budget.session.paused).toBe("tokens");
    expect(state?.budget.session.spent.tokens).toBeGreaterThanOrEqual(3_000);
    expect(log.some((r) => r.decision.alerts.some((a) => a.kind === "budget_paused"))).toBe(true);
  }, 120_000);

  it("pauses a USD budget for the model Claude Code reports, which the price table does not list", async () => {
    // Claude Code 2.1.330 reports its default model as claude-opus-5-5: priced as Opus, never as free.
    policy({ budget: { session: { usd: 1, tokens: null } } });
    const { result, texts, denied } = await spendUntilDenied({ input_tokens: 150_000, output_tokens: 100 });
    expect(texts[denied]).toMatch(/The session budget is paused: \$2\.\d\d used of \$1\.00/);
    const { state, log } = await recorded(project, result.json!.session_id);
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
    const { log } = await recorded(project, result.json!.session_id);
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
    const { log } = await recorded(project, result.json!.session_id);
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

  it("answers through the user's hook daemon with the default install: no Node process per tool call, same guard", async () => {
    // The daemon the first hook starts here (in this test's HOME) is stopped by afterEach.
    await initReins({ project, home }, ["claude", "--uninstall"]);
    await initReins({ project, home }, ["claude"]);
    const script: Script = (_request, turn) => (turn < 6 ? bash("node fail.js") : { text: "Stopping." });
    const result = await drive(script, 10);
    const results = fake!.mainRequests().map((r) => lastToolResults(r)[0]);
    expect(results[4]?.text).toContain("ECONNREFUSED");
    expect(results[5]?.text).toMatch(
      /^PreToolUse:Bash hook error: reins: The same Bash call `node fail\.js` was made 5 times/,
    );
    // The first hook found no daemon, answered in-process and started it; the later calls went to it.
    const daemons = await listDaemons({ HOME: home });
    expect(daemons).toHaveLength(1);
    const daemon = daemons[0]!;
    expect(daemon.running && daemon.status.projects.map((p) => p.root)).toEqual([project]);
    expect(daemon.running && daemon.status.calls).toBeGreaterThan(6);
    const { log } = await recorded(project, result.json!.session_id);
    expect(log.filter((r) => r.event.kind === "tool.requested")).toHaveLength(6);
  }, 120_000);
});
