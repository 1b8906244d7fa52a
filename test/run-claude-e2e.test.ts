import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { defaultPolicy } from "../src/base/core/policy.js";
import { parseClaude } from "../src/run/agents/claude.js";
import { readRunTrace } from "../src/run/drive/run-trace.js";
import { SqliteStore } from "../src/base/store/sqlite.js";
import { claudeBinary, claudeUnavailableReason } from "#test/claude-code.js";
import { e2eEach, recorded } from "#test/e2e-project.js";
import {
  lastUserTexts,
  startFakeAnthropic,
  userTexts,
  type FakeAnthropic,
  type RecordedRequest,
  type ScriptedReply,
} from "#test/fake-anthropic.js";
import { cleanEnv, reinsBin, runBounded } from "#test/processes.js";
import { git, gitProject } from "#test/run-project.js";

/**
 * `reins run --agent claude` end to end: the real Claude Code CLI, offline against a scripted Messages API on
 * 127.0.0.1, drives a three-task plan over a tiny Node package (node:test, no npm install). `sum` depends on
 * `add` and comes first in the plan; `add` goes red first (the model writes `a - b` and claims done without
 * testing), then gets a fix-only iteration carrying the failing check's output. reins' hooks run inside every
 * iteration (installed through `--settings`), so its Stop gate refuses the untested claim.
 */

const e2e = e2eEach<FakeAnthropic>("run-claude");

/** What a driven Claude Code run says at once: it works without a box yet (docs/driven-boundary.md). */
const NOT_CONTAINED =
  "reins: not contained: the hooks and MCP tools of claude reach the run's store in .reins/, which a box around it would hide, so it runs without one; reins cannot keep the agent claude from switching it off (--require-contained refuses to run it)\n";

const FILES: Record<string, string> = {
  ".gitignore": ".reins/\n",
  // A pool every session of the project charges: the run's spend must reach it once.
  "reins.config.json": `${JSON.stringify({ pools: { team: {} } })}\n`,
  "package.json": `${JSON.stringify({ name: "calc", private: true, type: "module", scripts: { test: "node --test" } })}\n`,
  "src/version.js": 'export const version = "0.1.0";\n',
  "test/add.test.js": `import { test } from "node:test";
import assert from "node:assert/strict";
import { add } from "../src/add.js";

test("add adds two numbers", () => {
  assert.equal(add(2, 3), 5);
});
`,
  "test/mul.test.js": `import { test } from "node:test";
import assert from "node:assert/strict";
import { mul } from "../src/mul.js";

test("mul multiplies two numbers", () => {
  assert.equal(mul(4, 3), 12);
});
`,
  "test/sum.test.js": `import { test } from "node:test";
import assert from "node:assert/strict";
import { sum } from "../src/sum.js";

test("sum adds up a list", () => {
  assert.equal(sum([1, 2, 3, 4]), 10);
});
`,
  // The fast check runs after every iteration, so it must pass while only some tasks are done: syntax only.
  "reins.plan.yaml": `version: 1
name: calc
checks:
  syntax: { command: 'for f in src/*.js; do node --check "$f" || exit 1; done', tier: fast }
  add: { command: "node --test test/add.test.js", tier: medium }
  mul: { command: "node --test test/mul.test.js", tier: medium }
  sum: { command: "node --test test/sum.test.js", tier: medium }
settings:
  maxAttempts: 3
tasks:
  - id: sum
    title: Implement sum with add
    deps: [add]
    checks: [sum]
    acceptance: src/sum.js exports sum(list), the total of the list, computed with add from src/add.js
  - id: add
    title: Implement add
    checks: [add]
    acceptance: src/add.js exports add(a, b)
  - id: mul
    title: Implement mul
    checks: [mul]
    acceptance: src/mul.js exports mul(a, b)
`,
};

const CODE: Record<string, string> = {
  add: "export const add = (a, b) => a + b;\n",
  mul: "export const mul = (a, b) => a * b;\n",
  sum: 'import { add } from "./add.js";\n\nexport const sum = (list) => list.reduce(add, 0);\n',
};
const WRONG_ADD = "export const add = (a, b) => a - b;\n";
/** A test that passes whatever the version is: it sees no change. */
const VACUOUS_TEST = `import { test } from "node:test";
import assert from "node:assert/strict";
import { version } from "../src/version.js";

test("version is a string", () => {
  assert.equal(typeof version, "string");
});
`;

/** Every scripted reply reports this usage; Claude Code sums it over the iteration's model calls. */
const USAGE = { input_tokens: 100, output_tokens: 20 };
const TOKENS_PER_CALL = USAGE.input_tokens + USAGE.output_tokens;

/** The commits on the run's branch at the first model call of each iteration, in call order. */
let seen: { task: string; fix: boolean; commits: string[] }[];

beforeEach(() => {
  gitProject(e2e.project, FILES);
  seen = [];
});

/** The model calls so far in this conversation: 0 on an iteration's first request. */
function callsBefore(request: RecordedRequest): number {
  return (request.body?.messages ?? []).filter((m) => m.role === "assistant").length;
}

/** Which task's prompt the conversation started with, and whether it is a fix-only iteration. */
function iterationOf(request: RecordedRequest): { task: string; fix: boolean } {
  const prompt = userTexts(request).find((t) => /^# Task \w+:/m.test(t));
  const task = prompt === undefined ? undefined : /^# Task (\w+):/m.exec(prompt)?.[1];
  if (prompt === undefined || task === undefined) throw new Error("no task prompt in the conversation");
  return { task, fix: prompt.startsWith("FIX ONLY") };
}

const write = (path: string, content: string): ScriptedReply => ({
  toolUses: [{ name: "Write", input: { file_path: path, content } }],
  usage: USAGE,
});
const runTest = (task: string): ScriptedReply => ({
  toolUses: [
    { name: "Bash", input: { command: `node --test test/${task}.test.js`, description: "Run the tests" } },
  ],
  usage: USAGE,
});
const say = (text: string): ScriptedReply => ({ text, usage: USAGE });

/**
 * The model, by task and by step of the iteration: write the code, run its test, say so. `add`'s first
 * iteration writes a wrong add and claims done untested, and keeps claiming when reins' Stop hook refuses;
 * its fix iteration reads the file (Claude Code's Write needs that), writes the right one and tests it.
 */
function model(request: RecordedRequest): ScriptedReply {
  const { task, fix } = iterationOf(request);
  const step = callsBefore(request);
  const file = join(e2e.project, "src", `${task}.js`);
  if (step === 0)
    seen.push({
      task,
      fix,
      commits: git(e2e.project, "log", "--format=%s", "main..HEAD").split("\n").filter(Boolean),
    });
  if (lastUserTexts(request).some((t) => t.startsWith("Stop hook feedback:")))
    return say(`Done: ${task} is implemented.`);
  if (task === "add" && !fix) return step === 0 ? write(file, WRONG_ADD) : say("Done: add is implemented.");
  const steps = [
    ...(fix ? [{ toolUses: [{ name: "Read", input: { file_path: file } }], usage: USAGE }] : []),
    write(file, CODE[task] ?? ""),
    runTest(task),
    say(`Done: ${task} is implemented and its test passes.`),
  ];
  const reply = steps[step];
  if (reply === undefined) throw new Error(`${task}: no step ${step} in the script`);
  return reply;
}

interface Report {
  status: string;
  tokens: number;
  costUsd: number;
  iterations: number;
  tasks: {
    id: string;
    status: string;
    commit: string | null;
    noop: boolean;
    evidence: string | null;
    tokens: number;
    costUsd: number;
    attempts: {
      attempt: number;
      mode: string;
      outcome: string;
      turns: number;
      tokens: number;
      costUsd: number;
      checks: { name: string; passed: boolean }[];
    }[];
  }[];
  proof: { holds: boolean; clauses: { name: string; holds: boolean; evidence: string }[] };
}

describe.skipIf(claudeUnavailableReason() !== null)("reins run driving the real Claude Code CLI", () => {
  it(
    "drives a three-task plan with a dependency and a red-first task to a proven end, one commit per task",
    { timeout: 90_000 },
    async () => {
      const anthropic = await startFakeAnthropic(model);
      e2e.fake = anthropic;
      const env = cleanEnv(e2e.home, {
        ANTHROPIC_BASE_URL: anthropic.url,
        ANTHROPIC_API_KEY: "test",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        REINS_CLAUDE_BIN: claudeBinary,
      });
      const ran = await runBounded(
        process.execPath,
        [reinsBin, "run", "--agent", "claude", "--max-turns", "10"],
        {
          cwd: e2e.project,
          env,
          timeoutMs: 70_000,
        },
      );
      expect(ran.timedOut).toBe(false);
      expect(anthropic.errors).toEqual([]);
      expect(ran.stderr).toBe(NOT_CONTAINED);
      expect(ran.code, ran.stdout).toBe(0);
      expect(ran.stdout).toMatch(/\nproven: every task.s checks witnessed its change/);
      const run = /^run (\S+): 3 of 3 task\(s\) done/m.exec(ran.stdout)?.[1];
      if (run === undefined) throw new Error(`no run line in ${ran.stdout}`);
      const dir = join(e2e.project, ".reins", "runs", run);

      // One commit per task on the run's branch, oldest first: add, then sum (which waited for it), then
      // mul; each names its task and touches only the task's file.
      expect(git(e2e.project, "rev-parse", "--abbrev-ref", "HEAD")).toBe(`reins/${run}`);
      const commits = git(e2e.project, "log", "--reverse", "--format=%H", "main..HEAD").split("\n");
      const tasks = ["add", "sum", "mul"];
      expect(commits).toHaveLength(3);
      commits.forEach((sha, i) => {
        const task = tasks[i] ?? "";
        expect(git(e2e.project, "log", "-1", "--format=%(trailers:key=Reins-Task,valueonly)", sha)).toBe(
          `${run}/${task}`,
        );
        expect(git(e2e.project, "show", "--name-only", "--format=", sha)).toBe(`src/${task}.js`);
        expect(readFileSync(join(e2e.project, "src", `${task}.js`), "utf8")).toBe(CODE[task]);
      });
      expect(git(e2e.project, "log", "-1", "--format=%B", commits[0] ?? "")).toContain(
        "Done by claude in 2 iteration(s)",
      );
      expect(git(e2e.project, "status", "--porcelain", "--untracked-files=all")).toBe("");
      expect(
        (await runBounded(process.execPath, ["--test"], { cwd: e2e.project, env, timeoutMs: 20_000 })).code,
      ).toBe(0);

      // The report: proven, every clause holding; add red then fixed, the others green at once.
      const report = JSON.parse(readFileSync(join(dir, "report.json"), "utf8")) as Report;
      expect(report.status).toBe("proven");
      expect(report.proof.holds).toBe(true);
      expect(report.proof.clauses.map((c) => [c.name, c.holds])).toEqual([
        ["no_runnable_task", true],
        ["nothing_in_flight", true],
        ["no_retry_pending", true],
        ["graph_stable", true],
        ["every_task_terminal", true],
        ["every_change_witnessed", true],
        ["judges_untouched", true],
        ["changed_judges_approved", true],
        ["every_hunk_witnessed", true],
        ["report_written", true],
      ]);
      // The real agent's change to each task's files went red with it set aside: every task is witnessed.
      expect(report.tasks.map((t) => [t.id, t.evidence])).toEqual(
        report.tasks.map((t) => [t.id, t.noop ? "already_done" : "witnessed"]),
      );
      const byId = (id: string) => report.tasks.find((t) => t.id === id);
      for (const id of tasks) expect(byId(id)).toMatchObject({ status: "done", commit: expect.any(String) });
      expect(report.tasks.map((t) => [t.id, t.attempts.map((a) => [a.mode, a.outcome])])).toEqual([
        ["sum", [["implement", "ok"]]],
        [
          "add",
          [
            ["implement", "ok"],
            ["fix", "ok"],
          ],
        ],
        ["mul", [["implement", "ok"]]],
      ]);
      expect(byId("add")?.attempts[0]?.checks).toEqual([
        expect.objectContaining({ name: "syntax", passed: true }),
        expect.objectContaining({ name: "add", passed: false }),
      ]);
      expect(byId("add")?.attempts[1]?.checks.every((c) => c.passed)).toBe(true);
      expect(report.iterations).toBe(4);

      // The iterations the model saw, in order: the dependency held sum back until add was committed, and
      // fix-only held mul back while add was red.
      expect(seen).toEqual([
        { task: "add", fix: false, commits: [] },
        { task: "add", fix: true, commits: [] },
        { task: "sum", fix: false, commits: ["add: Implement add"] },
        { task: "mul", fix: false, commits: ["sum: Implement sum with add", "add: Implement add"] },
      ]);

      // Every iteration had reins' MCP tools from its first request (`--mcp-config`, `alwaysLoad`).
      for (const request of anthropic.mainRequests().filter((r) => callsBefore(r) === 0))
        expect((request.body?.tools ?? []).map((t) => t.name)).toEqual(
          expect.arrayContaining(["mcp__reins__verify_task_completion", "mcp__reins__update_task_status"]),
        );

      // Each iteration is one Claude Code session; split the model calls by their first request.
      const sessions: RecordedRequest[][] = [];
      for (const request of anthropic.mainRequests()) {
        if (callsBefore(request) === 0) sessions.push([]);
        sessions.at(-1)?.push(request);
      }
      expect(sessions.map((s) => s.length)).toEqual([1 + 1 + defaultPolicy.completion.maxRefusals, 4, 3, 3]);

      // The fix iteration's prompt carries the failing check's own output.
      const fixPrompt =
        userTexts(sessions[1]?.[0] as RecordedRequest).find((t) => t.startsWith("FIX ONLY")) ?? "";
      expect(fixPrompt).toContain("## Failing check: add");
      expect(fixPrompt).toContain("exit code: 1");
      expect(fixPrompt).toContain("-1 !== 5");
      expect(fixPrompt).toContain("# Task add: Implement add");

      // reins' Stop hook ran inside the iterations: it refused the untested claim until its refusals ran
      // out, and let every tested claim through at once.
      const feedback = sessions.map((s) =>
        s.flatMap(lastUserTexts).filter((t) => t.startsWith("Stop hook feedback:")),
      );
      expect(feedback[0]).toHaveLength(defaultPolicy.completion.maxRefusals);
      expect(feedback[0]?.[0]).toContain("reins: Not done yet: tests has not run");
      expect(feedback.slice(1)).toEqual([[], [], []]);

      // Usage: each attempt's tokens are its model calls times the scripted usage; the run's are the sum.
      const attempts = ["add", "add", "sum", "mul"].map((id, i) => byId(id)?.attempts[id === "add" ? i : 0]);
      expect(attempts.map((a) => [a?.turns, a?.tokens])).toEqual(
        sessions.map((s) => [s.length, s.length * TOKENS_PER_CALL]),
      );
      expect(report.tokens).toBe(anthropic.mainRequests().length * TOKENS_PER_CALL);
      expect(report.costUsd).toBeGreaterThan(0);
      expect(report.costUsd).toBeCloseTo(
        attempts.reduce((sum, a) => sum + (a?.costUsd ?? 0), 0),
        10,
      );

      // The trace recorded each iteration's stream-json; the hooks recorded each session in the project's
      // store, the refused claims included.
      const trace = readRunTrace(join(dir, "trace.jsonl"));
      const outputs = [...trace.io.values()].flat().filter((line) => line.op === "agent");
      const parsed = outputs.map((line) => {
        const { raw, exitCode, stderr } = line.result as {
          raw: string;
          exitCode: number | null;
          stderr: string;
        };
        return parseClaude(raw, exitCode, stderr);
      });
      expect(parsed.map((p) => p.tokens)).toEqual(attempts.map((a) => a?.tokens));
      const redSession = parsed[0]?.sessionId ?? "";
      const { log } = await recorded(e2e.project, redSession);
      const claims = log.filter((r) => r.event.kind === "completion.claimed").map((r) => r.decision.verdict);
      expect(claims).toEqual([...Array<string>(defaultPolicy.completion.maxRefusals).fill("block"), "warn"]);

      // Spend counted once: the hooked sessions charged the pool as they went; the run recorded the same
      // spend in its own scope without charging the pool again.
      const store = new SqliteStore(join(e2e.project, ".reins", "reins.db"));
      try {
        const tokensOf = async (scope: string) =>
          (await store.state(scope))?.budget.session.spent.tokens ?? 0;
        const sessions = (await store.scopes()).filter((s) => s.startsWith("session:"));
        let sessionTokens = 0;
        for (const scope of sessions) sessionTokens += await tokensOf(scope);
        expect(sessions).toHaveLength(4);
        expect(await tokensOf(`run:${run}`)).toBe(report.tokens);
        expect(sessionTokens).toBe(report.tokens);
        expect(await tokensOf("pool:team")).toBe(sessionTokens);
      } finally {
        await store.close();
      }

      // The recorded run replays with no model server and no agent.
      await anthropic.close();
      e2e.fake = undefined;
      const replay = await runBounded(
        process.execPath,
        [reinsBin, "run", "--replay", join(dir, "trace.jsonl")],
        {
          cwd: e2e.project,
          env: cleanEnv(e2e.home, { REINS_CLAUDE_BIN: join(e2e.root, "no-claude-here") }),
          timeoutMs: 20_000,
        },
      );
      expect(replay.stderr).toBe("");
      expect(replay.code).toBe(0);
      expect(replay.stdout).toMatch(
        new RegExp(`^replayed run ${run}: \\d+ steps, every event, decision and action as recorded`),
      );
    },
  );

  it(
    "proves only what the checks witness: one task witnessed, one whose change no check sees, exit 1",
    { timeout: 60_000 },
    async () => {
      // Two tasks for the real CLI: mul (its test sees it: witnessed) and a version bump for which the
      // model writes a test that asserts nothing about the version: red before (no test), green after, and
      // green with the bump set aside too (unwitnessed). The run keeps both commits and ends not proven,
      // naming the task and why.
      writeFileSync(
        join(e2e.project, "reins.plan.yaml"),
        `version: 1
name: witness
checks:
  mul: { command: "node --test test/mul.test.js", tier: medium }
  version: { command: "node --test test/version.test.js", tier: medium }
tasks:
  - id: mul
    title: Implement mul
    checks: [mul]
  - id: bump
    title: Bump the version to 0.2.0, with a test
    checks: [version]
`,
      );
      git(e2e.project, "commit", "-qam", "the witness plan");
      const anthropic = await startFakeAnthropic((request) => {
        const { task } = iterationOf(request);
        const step = callsBefore(request);
        const steps =
          task === "mul"
            ? [
                write(join(e2e.project, "src", "mul.js"), CODE.mul ?? ""),
                runTest("mul"),
                say("Done: mul passes."),
              ]
            : [
                write(join(e2e.project, "src", "version.js"), 'export const version = "0.2.0";\n'),
                write(join(e2e.project, "test", "version.test.js"), VACUOUS_TEST),
                runTest("version"),
                say("Done: the version is 0.2.0."),
              ];
        const reply = steps[step];
        if (reply === undefined) throw new Error(`${task}: no step ${step} in the script`);
        return reply;
      });
      e2e.fake = anthropic;
      const env = cleanEnv(e2e.home, {
        ANTHROPIC_BASE_URL: anthropic.url,
        ANTHROPIC_API_KEY: "test",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        REINS_CLAUDE_BIN: claudeBinary,
      });
      const ran = await runBounded(
        process.execPath,
        [reinsBin, "run", "--agent", "claude", "--max-turns", "8"],
        {
          cwd: e2e.project,
          env,
          timeoutMs: 50_000,
        },
      );
      expect(ran.timedOut).toBe(false);
      expect(anthropic.errors).toEqual([]);
      expect(ran.stderr).toBe(NOT_CONTAINED);
      expect(ran.code, ran.stdout).toBe(1);
      expect(
        ran.stdout
          .trimEnd()
          .split("\n")
          .filter((line) => !line.startsWith("next: "))
          .at(-1),
      ).toBe("unwitnessed: task bump: its checks still pass with its change to src/version.js set aside");
      const run = /^run (\S+): 2 of 2 task\(s\) done/m.exec(ran.stdout)?.[1];
      if (run === undefined) throw new Error(`no run line in ${ran.stdout}`);
      const report = JSON.parse(
        readFileSync(join(e2e.project, ".reins", "runs", run, "report.json"), "utf8"),
      ) as {
        status: string;
        tasks: { id: string; evidence: string; witness: { setAside: string[]; red: string[] } }[];
      };
      expect(report.status).toBe("unwitnessed");
      expect(report.tasks.map((t) => [t.id, t.evidence, t.witness])).toEqual([
        ["mul", "witnessed", { setAside: ["src/mul.js"], red: ["mul"] }],
        ["bump", "unwitnessed", { setAside: ["src/version.js"], red: [] }],
      ]);
      // Both commits are kept on the run's branch, and the tree is whole: nothing left set aside.
      expect(git(e2e.project, "log", "--format=%s", "main..HEAD")).toBe(
        "bump: Bump the version to 0.2.0, with a test\nmul: Implement mul",
      );
      expect(readFileSync(join(e2e.project, "src", "version.js"), "utf8")).toContain("0.2.0");
      expect(git(e2e.project, "status", "--porcelain", "--untracked-files=all")).toBe("");
      expect(git(e2e.project, "for-each-ref", "refs/reins/")).toBe("");
    },
  );

  it(
    "does not prove a task whose model edits package.json's test script to pass: it waits for a person, naming the script",
    { timeout: 60_000 },
    async () => {
      // One task checked by `npm test`; the model leaves add wrong, sets the test script to `exit 0`, runs
      // `npm test` (green) and claims done. The proof runs the check with the script as it was: red.
      writeFileSync(
        join(e2e.project, "reins.plan.yaml"),
        `version: 1
name: judges
checks:
  unit: { command: "npm test --silent", tier: medium }
tasks:
  - id: add
    title: Implement add
    checks: [unit]
`,
      );
      writeFileSync(join(e2e.project, "src", "add.js"), WRONG_ADD);
      git(e2e.project, "add", "-A");
      git(e2e.project, "commit", "-qm", "the judges plan");
      const setScript = `node -e "const f=require('fs');const p=JSON.parse(f.readFileSync('package.json','utf8'));p.scripts.test='exit 0';f.writeFileSync('package.json',JSON.stringify(p))"`;
      const anthropic = await startFakeAnthropic((request) => {
        if (lastUserTexts(request).some((t) => t.startsWith("Stop hook feedback:")))
          return say("Done: the tests pass.");
        const steps: ScriptedReply[] = [
          {
            toolUses: [{ name: "Bash", input: { command: setScript, description: "Fix the tests" } }],
            usage: USAGE,
          },
          {
            toolUses: [
              { name: "Bash", input: { command: "npm test --silent", description: "Run the tests" } },
            ],
            usage: USAGE,
          },
          say("Done: the tests pass."),
        ];
        return steps[callsBefore(request)] ?? say("Done.");
      });
      e2e.fake = anthropic;
      const env = cleanEnv(e2e.home, {
        ANTHROPIC_BASE_URL: anthropic.url,
        ANTHROPIC_API_KEY: "test",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        REINS_CLAUDE_BIN: claudeBinary,
      });
      const ran = await runBounded(
        process.execPath,
        [reinsBin, "run", "--agent", "claude", "--max-turns", "6"],
        { cwd: e2e.project, env, timeoutMs: 50_000 },
      );
      expect(ran.timedOut).toBe(false);
      expect(anthropic.errors).toEqual([]);
      expect(ran.code, ran.stdout).toBe(1);
      expect(
        ran.stdout
          .trimEnd()
          .split("\n")
          .filter((line) => !line.startsWith("next: "))
          .at(-1),
      ).toMatch(
        /^awaiting_approval: task add: its agent changed what judges it \(package\.json scripts\.test\) and its checks pass only with that change; /,
      );
      const run = /^run (\S+): /m.exec(ran.stdout)?.[1] ?? "";
      const report = JSON.parse(
        readFileSync(join(e2e.project, ".reins", "runs", run, "report.json"), "utf8"),
      ) as { status: string; tasks: { evidence: string; judgeChanges: { diff: string } | null }[] };
      expect(report.status).toBe("awaiting_approval");
      expect(report.tasks[0]?.evidence).toBe("changed_judges");
      expect(report.tasks[0]?.judgeChanges?.diff).toContain('+    "test": "exit 0"');
      // add is still wrong, and the script the agent wrote is kept for the person to read.
      expect(readFileSync(join(e2e.project, "src", "add.js"), "utf8")).toBe(WRONG_ADD);
      expect(git(e2e.project, "for-each-ref", "refs/reins/")).toBe("");
    },
  );
});
