import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { claudeMcpEntry } from "../src/install/mcp.js";
import { SqliteStore } from "../src/base/store/sqlite.js";
import { claudeUnavailableReason, runClaude } from "#test/claude-code.js";
import { e2eProject, initReins, removeE2eProject } from "#test/e2e-project.js";
import {
  lastToolResults,
  startFakeAnthropic,
  type FakeAnthropic,
  type ScriptedReply,
} from "#test/fake-anthropic.js";
import { reinsBin } from "#test/processes.js";
import { gitProject } from "#test/run-project.js";

/**
 * reins' MCP tools through the real Claude Code CLI, offline against a scripted Messages API on 127.0.0.1:
 * Claude Code starts `reins mcp` from `--mcp-config` (with `alwaysLoad`, so the tools are in the first
 * request), the scripted model claims "complete" before any verify, verifies, and claims again. What reins
 * answered reaches the model in the next request each time.
 */

let root: string;
let project: string;
let home: string;
let fake: FakeAnthropic | undefined;

const PLAN = `version: 1
name: calc
checks:
  syntax: { command: 'for f in src/*.js; do node --check "$f" || exit 1; done', tier: fast }
  add: { command: "node --test test/add.test.js", tier: medium }
tasks:
  - id: add
    title: Implement add
    checks: [add]
    acceptance: src/add.js exports add(a, b), their sum
`;

const TEST = `import { test } from "node:test";
import assert from "node:assert/strict";
import { add } from "../src/add.js";
test("add adds two numbers", () => assert.equal(add(2, 3), 5));
`;

const TOOLS = ["update_task_status", "verify_task_completion"].map((t) => `mcp__reins__${t}`);

beforeEach(() => {
  ({ root, project, home } = e2eProject("mcp-claude"));
  gitProject(project, {
    ".gitignore": ".reins/\n",
    "package.json": `${JSON.stringify({ name: "calc", private: true, type: "module" })}\n`,
    "reins.plan.yaml": PLAN,
    "test/add.test.js": TEST,
  });
  mkdirSync(join(project, "src"));
  // The work the agent did before it claims done: right, but not yet verified.
  writeFileSync(join(project, "src", "add.js"), "export const add = (a, b) => a + b;\n");
});

afterEach(async () => {
  await fake?.close();
  fake = undefined;
  await removeE2eProject(root);
});

const use = (tool: string, input: Record<string, string>): ScriptedReply => ({
  toolUses: [{ name: `mcp__reins__${tool}`, input }],
});

describe.skipIf(claudeUnavailableReason() !== null)("reins mcp in the real Claude Code CLI", () => {
  it(
    "complete is rejected, verify passes, complete is accepted, and each answer reaches the model",
    { timeout: 60_000 },
    async () => {
      const anthropic = await startFakeAnthropic([
        use("update_task_status", { task: "add", status: "complete" }),
        use("verify_task_completion", { task: "add" }),
        use("update_task_status", { task: "add", status: "complete" }),
        { text: "add is verified and complete." },
      ]);
      fake = anthropic;
      const config = join(root, "mcp.json");
      writeFileSync(config, JSON.stringify({ mcpServers: { reins: claudeMcpEntry(reinsBin) } }));

      const ran = await runClaude({
        cwd: project,
        home,
        baseUrl: anthropic.url,
        prompt: "Finish task add of the plan.",
        maxTurns: 6,
        timeoutMs: 50_000,
        allowedTools: TOOLS,
        args: ["--mcp-config", config],
      });
      expect(ran.timedOut).toBe(false);
      expect(anthropic.errors).toEqual([]);
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.json?.result).toBe("add is verified and complete.");

      const requests = anthropic.mainRequests();
      expect(requests).toHaveLength(4);
      // alwaysLoad: reins' tools are in the very first request, not deferred behind a tool search.
      const first = (requests[0]?.body?.tools ?? []).map((t) => t.name);
      expect(first).toEqual(
        expect.arrayContaining([...TOOLS, "mcp__reins__read_spec", "mcp__reins__get_task"]),
      );

      const answers = requests.slice(1).map((r) => lastToolResults(r));
      expect(answers.map((a) => a.length)).toEqual([1, 1, 1]);
      const [rejected, verified, accepted] = answers.map((a) => a[0]);
      expect(rejected).toMatchObject({
        isError: true,
        text: expect.stringContaining(
          "rejected: add cannot be complete: verify_task_completion(add) has not run; run it, fix what it finds, then set complete",
        ),
      });
      // Claude Code hands the model a tool's structured content, as JSON.
      expect(verified?.isError).toBe(false);
      const verdict = JSON.parse(verified?.text ?? "") as {
        passed: boolean;
        confidence: number;
        findings: unknown[];
        summary: string;
        evidence: { checks: { name: string; passed: boolean }[]; filesChanged: string[]; diff: string };
      };
      expect(verdict).toMatchObject({ passed: true, confidence: 1, findings: [] });
      expect(verdict.summary).toMatch(/^task add: passed: 2 of 2 check\(s\) green on this tree/);
      expect(verdict.evidence.checks.map((c) => [c.name, c.passed])).toEqual([
        ["syntax", true],
        ["add", true],
      ]);
      expect(verdict.evidence.filesChanged).toEqual(["src/add.js"]);
      expect(verdict.evidence.diff).toContain("+export const add = (a, b) => a + b;");
      expect(accepted?.isError).toBe(false);
      expect(JSON.parse(accepted?.text ?? "")).toMatchObject({
        task: "add",
        status: "complete",
        previous: "pending",
        note: expect.stringMatching(/^add is complete: verify_task_completion\(add\) passed at /),
      });

      // reins recorded it in the plan's scope: the checks, the verdict, the claim and the end.
      const store = new SqliteStore(join(project, ".reins", "reins.db"));
      try {
        const log = await store.events("plan:calc");
        expect(log.map((r) => r.event.kind)).toEqual([
          "verification.ran",
          "verification.ran",
          "verification.ran",
          "completion.claimed",
          "task.ended",
        ]);
      } finally {
        await store.close();
      }
    },
  );

  it(
    "reins init claude --mcp gives Claude Code the tools from the project's .mcp.json",
    { timeout: 60_000 },
    async () => {
      await initReins({ project, home }, ["claude", "--mcp"]);
      const anthropic = await startFakeAnthropic([
        use("get_task", { task: "add" }),
        { text: "I know the task." },
      ]);
      fake = anthropic;
      const ran = await runClaude({
        cwd: project,
        home,
        baseUrl: anthropic.url,
        prompt: "What is task add?",
        timeoutMs: 50_000,
        allowedTools: ["mcp__reins__get_task"],
      });
      expect(ran.timedOut).toBe(false);
      expect(anthropic.errors).toEqual([]);
      expect(ran.code, ran.stderr).toBe(0);
      const [first, second] = anthropic.mainRequests();
      expect((first?.body?.tools ?? []).map((t) => t.name)).toContain("mcp__reins__verify_task_completion");
      const answer = second === undefined ? [] : lastToolResults(second);
      expect(answer).toHaveLength(1);
      expect(JSON.parse(answer[0]?.text ?? "")).toMatchObject({
        id: "add",
        status: "pending",
        acceptance: ["src/add.js exports add(a, b), their sum"],
        verifyWith: "verify_task_completion",
      });
    },
  );
});
