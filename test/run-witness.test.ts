/**
 * "Proven" means witnessed: `reins run` with scripted agents whose changes its checks see, or do not, and
 * plans with no checks. Each run's last line names its outcome and first cause.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reinsBin } from "#test/processes.js";
import { git, reinsIn, runProject, runUntilMarked } from "#test/run-project.js";

/** A tiny calculator project: `add` is broken until the agent fixes it; the check is its test. */
const CALC = {
  "calc.js": "module.exports.add = (a, b) => a - b;\n",
  "calc.test.js":
    "const { add } = require('./calc');\nif (add(2, 3) !== 5) { console.error('add(2, 3) is ' + add(2, 3)); process.exit(1); }\nconsole.log('1 passed');\n",
};

const plan = (tasks: string, checks = '  unit: { command: "node calc.test.js", tier: medium }') => `version: 1
name: witness
checks:
${checks}
tasks:
${tasks}
`;

const fixAdd = "  - id: fix\n    title: Fix add\n    checks: [unit]";

interface Report {
  status: string;
  why: string;
  tasks: {
    id: string;
    evidence: string | null;
    witness: { setAside: string[]; red: string[] } | null;
    judgeChanges?: { files: string[]; approved: unknown } | null;
  }[];
}

const runIdOf = (out: string) => /run (\S+):/.exec(out)?.[1] ?? "";
const reportOf = (dir: string, out: string) =>
  JSON.parse(readFileSync(join(dir, ".reins", "runs", runIdOf(out), "report.json"), "utf8")) as Report;
/** The outcome line: the last before the `next:` lines that say what a person does next. */
const lastLine = (out: string) =>
  out
    .trimEnd()
    .split("\n")
    .filter((line) => !line.startsWith("next: "))
    .at(-1) ?? "";

describe("reins run proves a task only when its checks witness its change", () => {
  it("proves a fix its test sees: with the fix set aside the test goes red", async () => {
    const { dir, agent } = runProject(
      { ...CALC, "reins.plan.yaml": plan(fixAdd) },
      "sed -i 's/a - b/a + b/' calc.js",
    );
    const ran = await reinsIn(dir, ["run", "--agent", agent]);
    expect(ran.err).toBe("");
    expect(ran.code).toBe(0);
    expect(lastLine(ran.out)).toBe(
      "proven: every task's checks witnessed its change (1 witnessed, 0 already done, 0 changing no behaviour)",
    );
    const r = reportOf(dir, ran.out);
    expect(r.tasks).toEqual([
      expect.objectContaining({
        id: "fix",
        evidence: "witnessed",
        witness: { setAside: ["calc.js"], red: ["unit"] },
      }),
    ]);
    // The tree is the fix, committed; nothing was left set aside.
    expect(readFileSync(join(dir, "calc.js"), "utf8")).toContain("a + b");
    expect(git(dir, "status", "--porcelain")).toBe("");
    expect(git(dir, "for-each-ref", "refs/reins/")).toBe("");
  });

  it("keeps a change that only rewrites the failing test, but ends awaiting approval with exit 1, naming the test it changed", async () => {
    // The hostile fix: the test is made to expect the wrong answer, and goes green.
    const { dir, agent } = runProject(
      { ...CALC, "reins.plan.yaml": plan(fixAdd) },
      "sed -i 's/!== 5/!== -1/' calc.test.js",
    );
    const ran = await reinsIn(dir, ["run", "--agent", agent]);
    expect(ran.code).toBe(1);
    expect(lastLine(ran.out)).toMatch(
      /^awaiting_approval: task fix: its agent changed what judges it \(calc\.test\.js\) and its checks pass only with that change; /,
    );
    const r = reportOf(dir, ran.out);
    expect(r.status).toBe("awaiting_approval");
    // The rewritten test is named, with its assertions' diff, for the person who looks.
    expect(r.tasks[0]).toMatchObject({
      evidence: "changed_judges",
      witness: { setAside: [], red: [] },
      judgeChanges: { files: ["calc.test.js"], passedAsTheyWere: false, approved: null },
    });
    // The work is kept, committed on the run's branch, for a person to look at.
    expect(git(dir, "log", "--format=%s", "main..HEAD")).toBe("fix: Fix add");
  });

  it("proves a change made with its own new test: the test is kept, the implementation set aside", async () => {
    const { dir, agent } = runProject(
      {
        "reins.plan.yaml": plan(
          "  - id: mul\n    title: Add mul\n    checks: [unit]",
          '  unit: { command: "test -f test/mul.js && for t in test/*.js; do node $t || exit 1; done", tier: medium }',
        ),
        "test/ok.js": "console.log('ok');\n",
      },
      [
        "mkdir -p test",
        "echo 'module.exports.mul = (a, b) => a * b;' > mul.js",
        `echo "const { mul } = require('../mul'); if (mul(2, 3) !== 6) process.exit(1);" > test/mul.js`,
      ].join("; "),
    );
    const ran = await reinsIn(dir, ["run", "--agent", agent]);
    expect(ran.code).toBe(0);
    expect(reportOf(dir, ran.out).tasks[0]).toMatchObject({
      evidence: "witnessed",
      witness: { setAside: ["mul.js"], red: ["unit"] },
    });
    expect(existsSync(join(dir, "mul.js"))).toBe(true);
  });

  it("takes a task whose type changes no behaviour as such, without a witness, and says so", async () => {
    const { dir, agent } = runProject(
      {
        ...CALC,
        "calc.js": "module.exports.add = (a, b) => a + b;\n",
        "reins.plan.yaml": plan(
          "  - id: readme\n    title: Write the README\n    type: docs\n    checks: [unit]",
        ),
      },
      "echo '# calc' > README.md",
    );
    const ran = await reinsIn(dir, ["run", "--agent", agent]);
    expect(ran.code).toBe(0);
    expect(lastLine(ran.out)).toMatch(/^proven: .*\(0 witnessed, 0 already done, 1 changing no behaviour\)$/);
    expect(reportOf(dir, ran.out).tasks[0]).toMatchObject({ evidence: "no_behaviour", witness: null });
  });
});

describe("a test the agent changed, red seen or not", () => {
  it("keeps the work, shows the assertions' diff, and proves the task only once a person approves it", async () => {
    // The agent makes add multiply and the test expect what it now gives: green, and witnessed (with
    // calc.js set aside, the changed test fails), but it may pass only because it changed. A second task's
    // agent tries to approve it while the run is driven: refused, the run's driver is alive.
    const { dir, agent } = runProject(
      {
        ...CALC,
        "reins.plan.yaml": plan(`${fixAdd}
  - id: note
    title: Note it
    type: docs
    deps: [fix]
    checks: [unit]`),
      },
      [
        'if [ "$REINS_TASK" = fix ]; then sed -i "s/a - b/a * b/" calc.js; sed -i "s/!== 5/!== 6/" calc.test.js; fi',
        `if [ "$REINS_TASK" = note ]; then node ${reinsBin} approve --run "$REINS_RUN" --task fix --reason mine --by agent > approve.log 2>&1; echo "exit $?" >> approve.log; echo note > NOTE.md; fi`,
      ].join("\n"),
    );
    const ran = await reinsIn(dir, ["run", "--agent", agent]);
    expect(ran.err).toBe("");
    expect(ran.code).toBe(1);
    const id = runIdOf(ran.out);
    expect(lastLine(ran.out)).toBe(
      `awaiting_approval: task fix: its agent changed what judges it (calc.test.js) and its checks pass only with that change; a person reads the diff in the report, then \`reins approve --run ${id} --task fix --reason "..."\` and \`reins run --resume ${id}\``,
    );
    const report = readFileSync(join(dir, ".reins", "runs", id, "report.md"), "utf8");
    expect(report).toContain(
      "judges changed by its agent: `calc.test.js`, **awaiting a person's approval**; its checks pass only with this change",
    );
    expect(report).toContain("-if (add(2, 3) !== 5)");
    expect(report).toContain("+if (add(2, 3) !== 6)");
    // The agent's own approval was refused: in its box the people's token a person's action needs is out of
    // its sight, and so is the store (without a box, the run being driven refuses it).
    expect(readFileSync(join(dir, "approve.log"), "utf8")).toMatch(
      /approve --task is a person's action, .*\nexit 1\n$/s,
    );
    // The work is kept, committed on the run's branch.
    expect(git(dir, "log", "--format=%s", "main..HEAD")).toBe("note: Note it\nfix: Fix add");

    const approved = await reinsIn(dir, [
      "approve",
      "--task",
      "fix",
      "--reason",
      "multiplying is the new spec",
      "--by",
      "alice",
    ]);
    expect(approved.err).toBe("");
    expect(approved.out).toMatch(
      /^approved the judges task fix changed \(calc\.test\.js\) at its commit [0-9a-f]{12}, by alice: go on with `reins run --resume \S+`\n$/,
    );
    // Approving twice, or a task awaiting nothing, is refused.
    const again = await reinsIn(dir, ["approve", "--run", id, "--task", "note", "--reason", "x"]);
    expect(again.code).toBe(2);
    expect(again.err).toBe(`reins: task note of run ${id} awaits no approval (these do: fix)\n`);
    const resumed = await reinsIn(dir, ["run", "--resume", id]);
    expect(resumed.code).toBe(0);
    expect(lastLine(resumed.out)).toMatch(/^proven: /);
    expect(readFileSync(join(dir, ".reins", "runs", id, "report.md"), "utf8")).toContain(
      "approved by alice (multiplying is the new spec)",
    );
  });

  it("needs no approval for tests the agent added", async () => {
    const { dir, agent } = runProject(
      {
        ...CALC,
        "reins.plan.yaml": plan(fixAdd),
      },
      "sed -i 's/a - b/a + b/' calc.js; echo \"require('./calc');\" > extra.test.js",
    );
    const ran = await reinsIn(dir, ["run", "--agent", agent]);
    expect(ran.code).toBe(0);
    expect(lastLine(ran.out)).toMatch(/^proven: /);
  });
});

describe("reins run and plans without checks", () => {
  it("refuses a plan no check verifies, in one line saying how to add checks, before any branch", async () => {
    const { dir, agent } = runProject(
      { "reins.plan.yaml": "version: 1\nname: bare\ntasks:\n  - id: a\n    title: Write a\n" },
      "echo a > a.txt",
    );
    const ran = await reinsIn(dir, ["run", "--agent", agent]);
    expect(ran.code).toBe(2);
    expect(ran.err).toMatch(
      /^reins: no check verifies any task of reins\.plan\.yaml, so nothing could prove them done: give them checks .*or run with --unverified to let the agent work unverified\n$/,
    );
    expect(git(dir, "branch", "--list", "reins/*")).toBe("");
  });

  it("with --unverified drives it, and ends unverified with exit 1, never proven", async () => {
    const { dir, agent } = runProject(
      { "reins.plan.yaml": "version: 1\nname: bare\ntasks:\n  - id: a\n    title: Write a\n" },
      "echo a > a.txt",
    );
    const ran = await reinsIn(dir, ["run", "--agent", agent, "--unverified"]);
    expect(ran.code).toBe(1);
    expect(lastLine(ran.out)).toBe("unverified: no check verified task(s) a");
    expect(git(dir, "log", "--format=%s", "main..HEAD")).toBe("a: Write a");
  });

  it("calls the agent even when the plan-wide checks already pass: only checks that name a task can close it unworked", async () => {
    const called = join(mkdtempSync(join(tmpdir(), "reins-called-")), "called.log");
    const { dir, agent } = runProject(
      {
        ...CALC,
        "calc.js": "module.exports.add = (a, b) => a + b;\n",
        "reins.plan.yaml": plan(
          "  - id: one\n    title: One\n  - id: two\n    title: Two",
          '  suite: { command: "node calc.test.js", tier: fast }',
        ),
      },
      `echo "$REINS_TASK" >> ${called}; echo "module.exports.$REINS_TASK = 1;" > "$REINS_TASK.js"`,
    );
    const ran = await reinsIn(dir, ["run", "--agent", agent]);
    // Both tasks ran the agent; the suite cannot see either change, so the run is not proven.
    expect(readFileSync(called, "utf8")).toBe("one\ntwo\n");
    expect(ran.code).toBe(1);
    expect(lastLine(ran.out)).toMatch(
      /^unwitnessed: task one: its checks still pass with its change to one\.js set aside \(also two\)$/,
    );
  });
});

describe("a run killed while a change is set aside", () => {
  it("puts the change back when it resumes, and goes on to a proven end", async () => {
    // The check, once it runs with the change set aside (a ref of reins' holds it), says so and waits to be
    // killed there.
    const { dir, agent } = runProject(
      {
        ...CALC,
        "check.sh":
          'node calc.test.js && exit 0\nif [ -n "$(git for-each-ref refs/reins/)" ] && [ ! -e "$REINS_MARK" ]; then touch "$REINS_MARK"; sleep 10; fi\nexit 1\n',
        "reins.plan.yaml": plan(fixAdd, '  unit: { command: "sh check.sh", tier: medium }'),
      },
      "sed -i 's/a - b/a + b/' calc.js",
    );
    const mark = join(mkdtempSync(join(tmpdir(), "reins-mark-")), "aside");
    const child = await runUntilMarked(dir, agent, mark);
    expect(readFileSync(join(dir, "calc.js"), "utf8")).toContain("a - b"); // the fix is set aside right now
    process.kill(-(child.pid ?? 0), "SIGKILL");
    await new Promise((r) => child.on("close", r));
    const resumed = await reinsIn(dir, ["run", "--resume"]);
    expect(resumed.err).toBe("");
    expect(resumed.code).toBe(0);
    expect(readFileSync(join(dir, "calc.js"), "utf8")).toContain("a + b");
    expect(git(dir, "for-each-ref", "refs/reins/")).toBe("");
    expect(git(dir, "status", "--porcelain")).toBe("");
    expect(lastLine(resumed.out)).toMatch(/^proven: /);
  }, 90_000);
});
