import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteStore } from "../src/base/store/sqlite.js";
import { reinsBin } from "#test/processes.js";
import { git, gitProject, reinsIn } from "#test/run-project.js";

/**
 * `reins mcp` through the real MCP client of the SDK over stdio: `node bin/reins.js mcp` (built by
 * `npm test`'s pretest) in a small git project with a plan (a module, a component, two tasks) and a spec.
 */

const PLAN = `version: 1
name: calc
checks:
  syntax: { command: 'for f in src/*.js; do node --check "$f" || exit 1; done', tier: fast }
  add: { command: "node --test test/add.test.js", tier: medium }
  mul: { command: "node --test test/mul.test.js", tier: medium }
  all: { command: "node --test", tier: slow }
modules:
  - id: math
    title: Arithmetic
    components:
      - id: ops
        title: Operations
        checks: [all]
        tasks:
          - id: add
            title: Implement add
            checks: [add]
            acceptance: src/add.js exports add(a, b), their sum
            spec: { file: SPEC.md, sections: [Adding] }
          - id: mul
            title: Implement mul
            checks: [mul]
            acceptance: ["src/mul.js exports mul(a, b)", "mul(0, x) is 0"]
            spec: { file: SPEC.md, sections: [Multiplying] }
`;

const SPEC = `# Calc

Two operations.

## Adding

add(a, b) returns a + b.

\`\`\`md
# Not a heading: it is inside a code fence
\`\`\`

## Multiplying

mul(a, b) returns a * b.
`;

const test = (name: string) => `import { test } from "node:test";
import assert from "node:assert/strict";
import { ${name} } from "../src/${name}.js";
test("${name} works", () => assert.equal(${name}(2, 3), ${name === "add" ? 5 : 6}));
`;

const GOOD_ADD = "export const add = (a, b) => a + b;\n";
const WRONG_ADD = "export const add = (a, b) => a - b;\n";
const MUL = "export const mul = (a, b) => a * b;\n";

let project: string;
let clients: Client[];

beforeEach(() => {
  project = realpathSync(mkdtempSync(join(tmpdir(), "reins-mcp-")));
  const files: Record<string, string> = {
    ".gitignore": ".reins/\n",
    "package.json": `${JSON.stringify({ name: "calc", private: true, type: "module" })}\n`,
    "reins.plan.yaml": PLAN,
    "SPEC.md": SPEC,
    "src/version.js": 'export const version = "0.1.0";\n',
    "test/add.test.js": test("add"),
    "test/mul.test.js": test("mul"),
  };
  gitProject(project, files);
  clients = [];
});

afterEach(async () => {
  await Promise.all(clients.map((c) => c.close()));
  rmSync(project, { recursive: true, force: true });
});

/** A new `reins mcp` process in the project, connected. */
async function connect(args: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [reinsBin, "mcp", ...args],
    cwd: project,
    env: getDefaultEnvironment(),
    stderr: "pipe",
  });
  const client = new Client({ name: "reins-test", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
  return { result, text, data: result.structuredContent as Record<string, unknown> | undefined };
}

/** Calls a tool that must fail: its one-line error text. */
async function failing(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const { result, text } = await call(client, name, args);
  expect(result.isError, `${name} ${JSON.stringify(args).slice(0, 80)} answered ${text}`).toBe(true);
  expect(result.content).toHaveLength(1);
  expect(text).not.toContain("\n");
  return text;
}

interface Verdict {
  passed: boolean;
  confidence: number;
  findings: { check: string | null; message: string; failedTests: string[]; output: string }[];
  summary: string;
  evidence: {
    scope: { level: string; id: string };
    acceptance: string[];
    checks: { name: string; tier: string; command: string; passed: boolean }[];
    base: string;
    baseFrom: string;
    filesChanged: string[];
    diff: string;
    fingerprint: string;
  };
}

async function verify(client: Client, level: string, id: string): Promise<Verdict> {
  const field = level === "task" ? "task" : level;
  const { result, data } = await call(client, `verify_${level}_completion`, { [field]: id });
  expect(result.isError).toBeFalsy();
  return data as unknown as Verdict;
}

const setStatus = (client: Client, task: string, status: string) =>
  call(client, "update_task_status", { task, status });

describe("reins mcp through the MCP client over stdio", () => {
  it("lists its tools, each with an input schema", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      "read_spec",
      "list_tasks",
      "get_task",
      "verify_task_completion",
      "verify_component_completion",
      "verify_module_completion",
      "update_task_status",
    ]);
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.update_task_status?.inputSchema.required).toEqual(["task", "status"]);
    expect(byName.verify_component_completion?.inputSchema.required).toEqual(["component"]);
    expect(byName.verify_task_completion?.outputSchema?.required).toEqual(
      expect.arrayContaining(["passed", "confidence", "findings", "summary"]),
    );
    expect(client.getInstructions()).toContain("update_task_status");
  });

  it("read_spec answers a section's text and nothing more; an unknown section names the known ones", async () => {
    const client = await connect();
    const adding = await call(client, "read_spec", { section: "adding" });
    expect(adding.result.isError).toBeFalsy();
    expect(adding.text).toBe(
      "## Adding\n\nadd(a, b) returns a + b.\n\n```md\n# Not a heading: it is inside a code fence\n```\n\n",
    );
    expect((await call(client, "read_spec", { section: " Multiplying " })).text).toBe(
      "## Multiplying\n\nmul(a, b) returns a * b.\n",
    );
    const unknown = await failing(client, "read_spec", {
      section: "Not a heading: it is inside a code fence",
    });
    expect(unknown).toBe(
      'no section "Not a heading: it is inside a code fence"; known sections: "Calc" (SPEC.md), "Adding" (SPEC.md), "Multiplying" (SPEC.md)',
    );
    expect(await failing(client, "read_spec", { section: "Adding", file: "OTHER.md" })).toBe(
      'the plan names no spec file "OTHER.md"; it names SPEC.md',
    );
  });

  it("list_tasks and get_task show the plan: statuses, acceptance, the checks a verify runs, spec sections", async () => {
    const client = await connect();
    const listed = await call(client, "list_tasks");
    expect(listed.data).toEqual({
      plan: "calc",
      tasks: [
        {
          id: "math",
          kind: "module",
          title: "Arithmetic",
          status: "pending",
          parent: null,
          deps: [],
          children: ["ops"],
        },
        {
          id: "ops",
          kind: "component",
          title: "Operations",
          status: "pending",
          parent: "math",
          deps: [],
          children: ["add", "mul"],
        },
        {
          id: "add",
          kind: "task",
          title: "Implement add",
          status: "pending",
          parent: "ops",
          deps: [],
          children: [],
        },
        {
          id: "mul",
          kind: "task",
          title: "Implement mul",
          status: "pending",
          parent: "ops",
          deps: [],
          children: [],
        },
      ],
    });
    expect(JSON.parse(listed.text)).toEqual(listed.data);

    const mul = await call(client, "get_task", { task: "mul" });
    expect(mul.data).toMatchObject({
      id: "mul",
      kind: "task",
      status: "pending",
      acceptance: ["src/mul.js exports mul(a, b)", "mul(0, x) is 0"],
      ownChecks: ["mul"],
      checks: [
        { name: "syntax", tier: "fast", command: 'for f in src/*.js; do node --check "$f" || exit 1; done' },
        { name: "mul", tier: "medium", command: "node --test test/mul.test.js" },
      ],
      verifyWith: "verify_task_completion",
      spec: { file: "SPEC.md", sections: ["Multiplying"] },
      base: null,
      lastVerify: null,
    });
    const ops = await call(client, "get_task", { task: "ops" });
    expect((ops.data?.checks as { name: string }[]).map((c) => c.name)).toEqual([
      "syntax",
      "add",
      "mul",
      "all",
    ]);
    expect(ops.data?.verifyWith).toBe("verify_component_completion");
  });

  it("gates complete: rejected before a verify and after a red one, accepted after a green one, rejected after an edit", async () => {
    const client = await connect();
    expect(await failing(client, "update_task_status", { task: "add", status: "complete" })).toBe(
      "rejected: add cannot be complete: verify_task_completion(add) has not run; run it, fix what it finds, then set complete",
    );
    const started = await setStatus(client, "add", "in_progress");
    const head = git(project, "rev-parse", "HEAD");
    expect(started.data).toMatchObject({ task: "add", status: "in_progress", previous: "pending" });

    // The agent writes a wrong add: the verify runs the checks itself and says what fails.
    writeFileSync(join(project, "src", "add.js"), WRONG_ADD);
    const red = await verify(client, "task", "add");
    expect(red.passed).toBe(false);
    expect(red.confidence).toBe(1);
    expect(red.findings).toHaveLength(1);
    expect(red.findings[0]).toMatchObject({
      check: "add",
      message: "add failed (exit 1): node --test test/add.test.js",
    });
    expect(red.findings[0]?.output).toContain("-1 !== 5");
    expect(red.evidence.checks.map((c) => [c.name, c.passed])).toEqual([
      ["syntax", true],
      ["add", false],
    ]);
    expect(red.evidence).toMatchObject({
      scope: { level: "task", id: "add" },
      acceptance: ["src/add.js exports add(a, b), their sum"],
      base: head,
      baseFrom: "task started",
      filesChanged: ["src/add.js"],
    });
    expect(red.summary).toMatch(/^task add: not passed: add failed/);
    expect(await failing(client, "update_task_status", { task: "add", status: "complete" })).toBe(
      "rejected: add cannot be complete: the last verify_task_completion(add) failed; fix what it found and run it again",
    );
    // reins' guards speak through the tools too: no new task while a check is red.
    const mul = await setStatus(client, "mul", "in_progress");
    expect(mul.data).toMatchObject({ status: "in_progress" });
    expect(mul.data?.advice).toEqual([
      expect.stringMatching(/^add, task:add are failing\. Fix them .* before starting task "mul"\.$/),
    ]);

    // Fixed: green, and complete goes through.
    writeFileSync(join(project, "src", "add.js"), GOOD_ADD);
    const green = await verify(client, "task", "add");
    expect(green).toMatchObject({ passed: true, confidence: 1, findings: [] });
    expect(green.evidence.diff).toContain("+export const add = (a, b) => a + b;");
    expect(green.summary).toMatch(
      /^task add: passed: 2 of 2 check\(s\) green on this tree; 1 file\(s\) changed/,
    );

    // An edit after the green verify: complete is refused until a verify sees the tree as it is.
    writeFileSync(join(project, "src", "add.js"), `${GOOD_ADD}// tidied\n`);
    expect(await failing(client, "update_task_status", { task: "add", status: "complete" })).toBe(
      "rejected: add cannot be complete: the working tree changed after the last passing verify_task_completion(add); run it again on the tree as it is",
    );
    const again = await verify(client, "task", "add");
    expect(again.passed).toBe(true);
    expect(again.evidence.fingerprint).not.toBe(green.evidence.fingerprint);

    // Committing the work changes no content, so the verify still stands; the diff is still from the start.
    git(project, "add", "-A");
    git(project, "commit", "-q", "-m", "add");
    const done = await setStatus(client, "add", "complete");
    expect(done.result.isError).toBeFalsy();
    expect(done.data).toMatchObject({ task: "add", status: "complete", previous: "in_progress" });
    expect(String(done.data?.note)).toMatch(/^add is complete: verify_task_completion\(add\) passed at /);
    const add = await call(client, "get_task", { task: "add" });
    expect(add.data).toMatchObject({ status: "complete", base: head, lastVerify: { passed: true } });
  });

  it("verifies with the checks it started with when the plan is edited under it (a check set to true, a task's checks emptied)", async () => {
    const client = await connect();
    writeFileSync(join(project, "src/add.js"), WRONG_ADD);
    expect((await verify(client, "task", "add")).passed).toBe(false);
    // The agent edits what judges it: add's check now always passes, mul's task has no check left.
    writeFileSync(
      join(project, "reins.plan.yaml"),
      PLAN.replace(
        'add: { command: "node --test test/add.test.js", tier: medium }',
        'add: { command: "true", tier: medium }',
      )
        .replace("checks: [mul]", "checks: []")
        .replace("title: Implement add", "title: Implement addition"),
    );
    const add = await verify(client, "task", "add");
    expect(add.passed).toBe(false);
    expect(add.evidence.checks.find((c) => c.name === "add")?.command).toBe("node --test test/add.test.js");
    expect(add.summary).toContain(
      "The plan's checks were edited since this server started (check add was changed, the checks of mul were changed): verified with the checks it started with",
    );
    expect((await setStatus(client, "add", "complete")).result.isError).toBe(true);
    // A person's edit of a task's text is seen at once.
    expect((await call(client, "get_task", { task: "add" })).text).toContain("Implement addition");
    const mul = await verify(client, "task", "mul");
    expect(mul.evidence.checks.map((c) => c.name)).toContain("mul");
  });

  it("keeps its state in the store: a second server process sees the first one's verify and status", async () => {
    const first = await connect();
    writeFileSync(join(project, "src", "mul.js"), MUL);
    await setStatus(first, "mul", "in_progress");
    expect((await verify(first, "task", "mul")).passed).toBe(true);

    const second = await connect();
    expect((await call(second, "get_task", { task: "mul" })).data).toMatchObject({
      status: "in_progress",
      lastVerify: { passed: true },
    });
    const done = await setStatus(second, "mul", "complete");
    expect(done.result.isError).toBeFalsy();
    const tasks = (await call(first, "list_tasks")).data?.tasks as { id: string; status: string }[];
    expect(tasks.find((t) => t.id === "mul")?.status).toBe("complete");
    await setStatus(second, "add", "failed");
    expect(
      ((await call(first, "list_tasks")).data?.tasks as { id: string; status: string }[]).map(
        (t) => t.status,
      ),
    ).toEqual(["pending", "pending", "failed", "complete"]);

    // What a person sees in the store: the plan's scope, each check and verdict, the claim the engine accepted.
    await Promise.all(clients.map((c) => c.close()));
    clients = [];
    const status = await reinsIn(project, [
      "--store",
      "sqlite:.reins/reins.db",
      "status",
      "plan:calc",
      "--json",
    ]);
    expect(status.code, status.err).toBe(0);
    expect(status.out).toContain("plan:calc");
    const store = new SqliteStore(join(project, ".reins", "reins.db"));
    try {
      const log = await store.events("plan:calc");
      expect(log.map((r) => [r.event.kind, "name" in r.event ? r.event.name : r.event.task])).toEqual([
        ["task.started", "mul"],
        ["verification.ran", "syntax"],
        ["verification.ran", "mul"],
        ["verification.ran", "task:mul"],
        ["completion.claimed", "mul"],
        ["task.ended", "mul"],
        ["task.ended", "add"],
      ]);
      const claim = log.find((r) => r.event.kind === "completion.claimed");
      expect(claim?.decision.verdict).toBe("allow");
      expect(claim?.decision.results.find((r) => r.guard === "completion-gate")?.verdict).toBe("allow");
      expect(log.every((r) => r.event.task === "mul" || r.event.task === "add")).toBe(true);
    } finally {
      await store.close();
    }
  });

  it("verifies a component and a module by their leaves' checks and their own slow ones", async () => {
    const client = await connect();
    writeFileSync(join(project, "src", "add.js"), GOOD_ADD);
    const ops = await verify(client, "component", "ops");
    expect(ops.evidence.checks.map((c) => c.name)).toEqual(["syntax", "add", "mul", "all"]);
    expect(ops.passed).toBe(false);
    expect(ops.findings.map((f) => f.check)).toEqual(["mul", "all"]);
    expect(ops.evidence.baseFrom).toBe("HEAD");
    expect(await failing(client, "update_task_status", { task: "ops", status: "complete" })).toBe(
      "rejected: ops cannot be complete: the last verify_component_completion(ops) failed; fix what it found and run it again",
    );

    writeFileSync(join(project, "src", "mul.js"), MUL);
    const math = await verify(client, "module", "math");
    expect(math).toMatchObject({ passed: true, evidence: { scope: { level: "module", id: "math" } } });
    expect(math.evidence.filesChanged.sort()).toEqual(["src/add.js", "src/mul.js"]);
    expect((await setStatus(client, "math", "complete")).result.isError).toBeFalsy();
    // A module's verify is not its component's.
    expect((await setStatus(client, "ops", "complete")).result.isError).toBe(true);
  });

  it("never passes a verify on a tree its checks moved, nor one with no check to run", async () => {
    writeFileSync(join(project, "src", "add.js"), GOOD_ADD);
    // A check that writes a file git sees: the tree after the checks is not the tree they started on.
    writeFileSync(
      join(project, "reins.plan.yaml"),
      PLAN.replace("checks:\n", 'checks:\n  stamp: { command: "date > stamp.txt", tier: fast }\n'),
    );
    const stamped = await connect();
    const moved = await verify(stamped, "task", "add");
    expect(moved).toMatchObject({ passed: false, confidence: 0.5 });
    expect(moved.findings.map((f) => f.message)).toEqual([
      "the working tree changed while the checks ran (stamp.txt), so they may not show the tree as it is: verify again; if the checks write these files themselves, have git ignore them",
    ]);
    writeFileSync(join(project, ".gitignore"), ".reins/\nstamp.txt\n");
    expect((await verify(stamped, "task", "add")).passed).toBe(true);

    writeFileSync(
      join(project, "reins.plan.yaml"),
      "version: 1\nname: calc\ntasks:\n  - { id: add, title: Add }\n",
    );
    // A server started on a plan without checks (one already running keeps the checks it started with).
    const bare = await connect();
    const empty = await verify(bare, "task", "add");
    expect(empty).toMatchObject({ passed: false, confidence: 0 });
    expect(empty.findings[0]?.message).toBe(
      "the plan names no check for add, so nothing shows it works: add checks to the plan",
    );
    expect((await setStatus(bare, "add", "complete")).result.isError).toBe(true);
  });

  it("answers every error as an isError result of one line, hostile and huge input included", async () => {
    const client = await connect();
    for (const id of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
      expect(await failing(client, "get_task", { task: id })).toBe(
        `no task "${id}" in plan calc; known: math, ops, add, mul`,
      );
      expect(await failing(client, "update_task_status", { task: id, status: "complete" })).toContain(
        `no task "${id}"`,
      );
      expect(await failing(client, "verify_task_completion", { task: id })).toBe(
        `no task "${id}" in plan calc; known: add, mul`,
      );
    }
    expect(await failing(client, "verify_component_completion", { component: "add" })).toBe(
      "add is a task: verify it with verify_task_completion",
    );
    expect(await failing(client, "verify_module_completion", { module: "ops" })).toBe(
      "ops is a component: verify it with verify_component_completion",
    );
    expect(await failing(client, "get_task", { task: "line\nbreak\u0000" })).toBe(
      'no task "line break " in plan calc; known: math, ops, add, mul',
    );
    const huge = "x".repeat(1_000_000);
    expect(await failing(client, "get_task", { task: huge })).toMatch(/task: too long/);
    expect(await failing(client, "read_spec", { section: huge })).toMatch(/section: too long/);
    expect(await failing(client, "update_task_status", { task: "add", status: "done" })).toMatch(
      /Invalid arguments for tool update_task_status: .*in_progress/,
    );
    expect(await failing(client, "get_task", {})).toMatch(/Invalid arguments for tool get_task/);
    expect(await failing(client, "get_task", { task: 42 })).toMatch(/Invalid arguments for tool get_task/);
    // The server is still there, and nothing was recorded for the refused calls.
    expect(
      ((await call(client, "list_tasks")).data?.tasks as { status: string }[]).map((t) => t.status),
    ).toEqual(["pending", "pending", "pending", "pending"]);
  });

  it("answers a request over its limit (20 MB) with an error for that request, and reads on", async () => {
    const client = await connect();
    await expect(
      client.callTool({ name: "get_task", arguments: { task: "x".repeat(20 * 1024 * 1024) } }),
    ).rejects.toThrow(/a request of \d+ bytes is over reins mcp's limit of 4194304 bytes/);
    expect((await call(client, "list_tasks")).result.isError).toBeFalsy();
  });

  it("takes status changes one at a time: five completes at once record one completion", async () => {
    const client = await connect();
    writeFileSync(join(project, "src/add.js"), GOOD_ADD);
    expect((await verify(client, "task", "add")).passed).toBe(true);
    const answers = await Promise.all(Array.from({ length: 5 }, () => setStatus(client, "add", "complete")));
    expect(answers.map((a) => a.result.isError ?? false)).toEqual([false, false, false, false, false]);
    expect(answers.filter((a) => a.text.includes("is already complete"))).toHaveLength(4);
    const store = new SqliteStore(join(project, ".reins", "reins.db"));
    try {
      const ended = (await store.events("plan:calc")).filter(
        (r) => r.event.kind === "task.ended" && r.event.task === "add",
      );
      expect(ended).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it("starts without a plan and says what is missing; a named plan that is not there stops it", async () => {
    rmSync(join(project, "reins.plan.yaml"));
    const client = await connect();
    expect(await failing(client, "list_tasks", {})).toMatch(/^no plan: name one, or write reins\.plan\.yaml/);
    writeFileSync(join(project, "reins.plan.yaml"), PLAN);
    expect((await call(client, "list_tasks")).result.isError).toBeFalsy();
    await expect(connect(["missing.yaml"])).rejects.toThrow();
  });
});
