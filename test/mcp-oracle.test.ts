import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeAnthropic, type FakeAnthropic, type ScriptedReply } from "#test/fake-anthropic.js";
import { reinsBin } from "#test/processes.js";
import { gitProject } from "#test/run-project.js";

/**
 * The oracle in `reins mcp`, through the SDK's MCP client over stdio (`node bin/reins.js mcp`, built by
 * `npm test`'s pretest): a reviewer on a scripted Anthropic-compatible endpoint may veto a verify whose checks
 * passed, and so keep `complete` refused; it never passes a verify whose checks failed.
 */

const PLAN = `version: 1
name: calc
checks:
  add: { command: "node --test test/add.test.js", tier: medium }
modules:
  - id: math
    title: Arithmetic
    components:
      - id: ops
        title: Operations
        tasks:
          - id: add
            title: Implement add
            checks: [add]
            acceptance: src/add.js exports add(a, b), their sum
`;

const ADD_TEST = `import { test } from "node:test";
import assert from "node:assert/strict";
import { add } from "../src/add.js";
test("add works", () => assert.equal(add(2, 3), 5));
`;

const GOOD_ADD = "export const add = (a, b) => a + b;\n";
const WRONG_ADD = "export const add = (a, b) => a - b;\n";

const verdict = (veto: boolean, findings: string[] = []): ScriptedReply => ({
  text: JSON.stringify({ veto, confidence: 0.9, findings, summary: veto ? "not done" : "done" }),
});

let project: string;
let clients: Client[];
let fake: FakeAnthropic | undefined;

beforeEach(() => {
  project = realpathSync(mkdtempSync(join(tmpdir(), "reins-mcp-oracle-")));
  const files: Record<string, string> = {
    ".gitignore": ".reins/\n",
    "package.json": `${JSON.stringify({ name: "calc", private: true, type: "module" })}\n`,
    "reins.plan.yaml": PLAN,
    "test/add.test.js": ADD_TEST,
  };
  gitProject(project, files);
  mkdirSync(join(project, "src"));
  clients = [];
});

afterEach(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await fake?.close();
  fake = undefined;
  rmSync(project, { recursive: true, force: true });
});

/** Starts the reviewer's endpoint with `script`, enables the oracle on it, and connects `reins mcp`. */
async function connect(script: ScriptedReply[]): Promise<Client> {
  fake = await startFakeAnthropic(script, { isMain: () => true });
  // Written after the first commit, and ignored by nobody: the verify's diff shows it, which is harmless.
  writeFileSync(
    join(project, "reins.config.json"),
    JSON.stringify({
      oracle: {
        enabled: true,
        via: "anthropic",
        url: fake.url,
        model: "fake-haiku",
        apiKeyEnv: "ORACLE_KEY",
      },
    }),
  );
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [reinsBin, "mcp"],
    cwd: project,
    env: { ...getDefaultEnvironment(), ORACLE_KEY: "sk-test" },
    stderr: "pipe",
  });
  const client = new Client({ name: "reins-test", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

interface Verdict {
  passed: boolean;
  confidence: number;
  findings: { check: string | null; message: string }[];
  summary: string;
  oracle: { reviewer: string; outcome: string; confidence: number | null; summary: string } | null;
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
  return { result, text, data: result.structuredContent as Record<string, unknown> | undefined };
}

async function verify(client: Client): Promise<Verdict> {
  const { result, data } = await call(client, "verify_task_completion", { task: "add" });
  expect(result.isError).toBeFalsy();
  return data as unknown as Verdict;
}

const complete = (client: Client) => call(client, "update_task_status", { task: "add", status: "complete" });

describe("the oracle in reins mcp", () => {
  it("a veto keeps complete refused; a verify it does not veto lets complete through", async () => {
    writeFileSync(join(project, "src/add.js"), GOOD_ADD);
    const client = await connect([verdict(true, ["add has no test for negative numbers"]), verdict(false)]);

    const vetoed = await verify(client);
    expect(vetoed.passed).toBe(false);
    expect(vetoed.confidence).toBe(0.9);
    expect(vetoed.findings).toEqual([
      expect.objectContaining({
        check: "oracle",
        message: "oracle anthropic:fake-haiku vetoed: add has no test for negative numbers",
      }),
    ]);
    expect(vetoed.oracle).toEqual({
      reviewer: "anthropic:fake-haiku",
      outcome: "vetoed",
      confidence: 0.9,
      summary: "not done",
    });
    const refused = await complete(client);
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(
      /rejected: add cannot be complete: the last verify_task_completion\(add\) failed/,
    );

    // The reviewer saw the acceptance criteria and the diff.
    const prompt = JSON.stringify(fake?.mainRequests()[0]?.body?.messages);
    expect(prompt).toContain("src/add.js exports add(a, b), their sum");
    expect(prompt).toContain("a + b");

    const approved = await verify(client);
    expect(approved.passed).toBe(true);
    expect(approved.findings).toEqual([]);
    expect(approved.oracle?.outcome).toBe("approved");
    expect(approved.summary).toContain("did not veto");
    const accepted = await complete(client);
    expect(accepted.result.isError).toBeFalsy();
    expect(accepted.data?.status).toBe("complete");
  });

  it("an approving model cannot pass red checks: it is not even asked", async () => {
    writeFileSync(join(project, "src/add.js"), WRONG_ADD);
    const client = await connect([verdict(false), verdict(false)]);
    const red = await verify(client);
    expect(red.passed).toBe(false);
    expect(red.oracle).toBeNull();
    expect(red.findings.map((f) => f.check)).toEqual(["add"]);
    expect(fake?.mainRequests()).toHaveLength(0);
    expect((await complete(client)).result.isError).toBe(true);
  });

  it("a review that fails is reported and does not block: the checks decide", async () => {
    writeFileSync(join(project, "src/add.js"), GOOD_ADD);
    const client = await connect([
      { error: { status: 400, type: "invalid_request_error", message: "no such model" } },
    ]);
    const green = await verify(client);
    expect(green.passed).toBe(true);
    expect(green.oracle).toMatchObject({ outcome: "failed", confidence: null });
    expect(green.findings).toEqual([
      expect.objectContaining({
        check: "oracle",
        message: expect.stringMatching(
          /^oracle anthropic:fake-haiku could not review, so the checks alone decide: .*HTTP 400.*no such model/,
        ),
      }),
    ]);
    expect((await complete(client)).result.isError).toBeFalsy();
  });
});
