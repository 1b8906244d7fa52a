/** `reins run` end to end with scripted agents: plans, guards, replay, reports and interrupted runs. */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { exits, reinsBin } from "#test/processes.js";
import { git, reinsIn, runProject } from "#test/run-project.js";

/** The plan of most scenarios: each task's own check is medium (it runs at the task's completion). */
function plan(tasks: string, extra = ""): string {
  return `version: 1
name: scenario
checks:
  lint: { command: "true", tier: fast }
  a: { command: "grep -qx ok a.txt", tier: medium }
  b: { command: "grep -qx ok b.txt", tier: medium }
${extra}
tasks:
${tasks}
`;
}

const taskA = `  - id: a\n    title: Write a\n    checks: [a]`;

const twoTasks = (deps: string) => `  - id: a
    title: Write a
    checks: [a]
  - id: b
    title: Write b
    checks: [b]${deps}`;

interface Report {
  status: string;
  tasks: {
    id: string;
    status: string;
    permanent: boolean;
    noop: boolean;
    evidence: string | null;
    commit: string | null;
    attempts: { attempt: number; mode: string; outcome: string }[];
  }[];
  proof: { holds: boolean; clauses: { name: string; holds: boolean }[] };
}

function report(dir: string, out: string): Report {
  const run = /run (\S+):/.exec(out)?.[1];
  if (run === undefined) throw new Error(`no run id in ${out}`);
  return JSON.parse(readFileSync(join(dir, ".reins", "runs", run, "report.json"), "utf8")) as Report;
}

function runId(out: string): string {
  return /run (\S+):/.exec(out)?.[1] ?? "";
}

/**
 * `reins run --agent <agent>` as a process of its own, `REINS_LOG=<log>` set for the agent, once the agent
 * wrote its pid to `<log>.pid` (where it waits for the test): the process, the agent's pid, and what the run
 * has printed so far.
 */
async function runUntilTheAgentWaits(dir: string, agent: string, log: string) {
  const child = spawn(process.execPath, [reinsBin, "run", "--agent", agent], {
    cwd: dir,
    env: { ...process.env, REINS_LOG: log },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let printed = "";
  child.stdout.on("data", (chunk: Buffer) => (printed += chunk.toString()));
  const deadline = Date.now() + 20_000;
  while (!existsSync(`${log}.pid`) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  let agentPid = hostPid(log);
  while (agentPid === null && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    agentPid = hostPid(log);
  }
  if (agentPid === null) throw new Error(`the waiting agent of ${log} was not found`);
  return { child, agentPid, printed: () => printed };
}

/**
 * Kills a killed run's agent if it lives on as an orphan, as it does without a box; in one, bwrap's
 * --die-with-parent has ended it with the run already.
 */
function killOrphan(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

/**
 * The waiting agent's pid as this machine sees it (its `sleep`, `REINS_LOG=<log>` in its environment): the
 * `$$` it wrote is its box's own, a pid namespace of its own (docs/driven-boundary.md). Null until it runs.
 */
function hostPid(log: string): number | null {
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8");
      const env = readFileSync(`/proc/${name}/environ`, "utf8").split("\0");
      if (argv.startsWith("sleep\0") && env.includes(`REINS_LOG=${log}`)) return Number(name);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return null;
}

/** `reins run --resume [--agent <agent>]` in-process, `REINS_LOG=<log>` set for the agent. */
async function resumeWithLog(dir: string, agent: string | null, log: string) {
  process.env.REINS_LOG = log;
  try {
    return await reinsIn(dir, ["run", "--resume", ...(agent !== null ? ["--agent", agent] : [])]);
  } finally {
    delete process.env.REINS_LOG;
  }
}

/** Replays a finished run's trace and expects every step to match. */
async function replays(dir: string, out: string) {
  const trace = join(dir, ".reins", "runs", runId(out), "trace.jsonl");
  const replay = await reinsIn(dir, ["run", "--replay", trace]);
  expect(replay.err).toBe("");
  expect(replay.code).toBe(0);
  expect(replay.out).toMatch(/replayed run .*: \d+ steps/);
}

describe("reins run with a scripted agent", () => {
  it("drives a plan to a proven end: one commit per task, naming the task and its evidence", async () => {
    const { dir, agent } = runProject(
      { "reins.plan.yaml": plan(twoTasks("")) },
      'echo ok > "$REINS_TASK.txt"',
    );
    const { code, out, err } = await reinsIn(dir, ["run", "--agent", agent]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toMatch(
      /\nproven: every task.s checks witnessed its change \(2 witnessed, 0 already done, 0 changing no behaviour\)\nnext: .*\n$/,
    );
    const r = report(dir, out);
    expect(r.status).toBe("proven");
    expect(r.proof.clauses.map((c) => c.holds)).toEqual(Array(10).fill(true));
    expect(r.tasks.map((t) => t.evidence)).toEqual(["witnessed", "witnessed"]);
    expect(r.tasks.map((t) => [t.id, t.status, t.attempts.length])).toEqual([
      ["a", "done", 1],
      ["b", "done", 1],
    ]);
    const log = git(dir, "log", "--format=%s", "main..HEAD").split("\n");
    expect(log).toEqual(["b: Write b", "a: Write a"]);
    expect(git(dir, "log", "-1", "--format=%B")).toContain(`Reins-Task: ${runId(out)}/b`);
    expect(git(dir, "log", "-1", "--format=%B")).toMatch(/- b \(medium\): passed/);
    expect(git(dir, "status", "--porcelain")).toBe("");
    await replays(dir, out);
  });

  it("tells the agent's hooks the checks that will judge its task (REINS_PLAN_CHECKS), fast checks first", async () => {
    const { dir, agent } = runProject(
      { "reins.plan.yaml": plan(taskA) },
      'echo ok > "$REINS_TASK.txt"; printf "%s" "$REINS_PLAN_CHECKS" > "$REINS_TASK.checks"',
    );
    const { code, err } = await reinsIn(dir, ["run", "--agent", agent]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(JSON.parse(git(dir, "show", "HEAD:a.checks"))).toEqual(["true", "grep -qx ok a.txt"]);
  });

  it("gives a red task a fix-only iteration with the failing output, then commits it", async () => {
    const { dir, agent } = runProject(
      { "reins.plan.yaml": plan(taskA) },
      `cat > "$REINS_PROMPT_FILE.$REINS_ATTEMPT"; if [ "$REINS_ATTEMPT" = 1 ]; then echo bad > a.txt; else echo ok > a.txt; fi`,
    );
    const prompts = join(mkdtempSync(join(tmpdir(), "reins-prompts-")), "prompt");
    process.env.REINS_PROMPT_FILE = prompts;
    const { code, out } = await reinsIn(dir, ["run", "--agent", agent]).finally(
      () => delete process.env.REINS_PROMPT_FILE,
    );
    expect(code).toBe(0);
    const r = report(dir, out);
    expect(r.tasks[0]?.attempts.map((a) => [a.attempt, a.mode])).toEqual([
      [1, "implement"],
      [2, "fix"],
    ]);
    expect(readFileSync(`${prompts}.1`, "utf8")).not.toContain("FIX ONLY");
    const fix = readFileSync(`${prompts}.2`, "utf8");
    expect(fix).toContain("FIX ONLY");
    expect(fix).toContain("Failing check: a");
    expect(fix).toContain("grep -qx ok a.txt");
    expect(git(dir, "log", "--format=%s", "main..HEAD")).toBe("a: Write a");
    await replays(dir, out);
  });

  it("runs B only after A when B depends on A", async () => {
    // b's agent fails unless a.txt exists: it would go red if run first.
    const { dir, agent } = runProject(
      {
        "reins.plan.yaml": plan(
          `  - id: b\n    title: Write b\n    checks: [b]\n    deps: [a]\n  - id: a\n    title: Write a\n    checks: [a]`,
        ),
      },
      'if [ "$REINS_TASK" = b ] && [ ! -f a.txt ]; then exit 1; fi; echo ok > "$REINS_TASK.txt"',
    );
    const { code, out } = await reinsIn(dir, ["run", "--agent", agent]);
    expect(code).toBe(0);
    expect(git(dir, "log", "--format=%s", "main..HEAD").split("\n")).toEqual(["b: Write b", "a: Write a"]);
    await replays(dir, out);
  });

  it("works on two independent tasks at once under WIP 2, each in its own worktree", async () => {
    // Each agent waits for the other to have started, so the run only ends if both were in flight at once.
    const { dir, agent } = runProject(
      { ".gitignore": ".reins/\n.reins-mark/\n", "reins.plan.yaml": plan(twoTasks("")) },
      'touch "$REINS_MARK/$REINS_TASK"; i=0; while [ ! -f "$REINS_MARK/a" ] || [ ! -f "$REINS_MARK/b" ]; do i=$((i+1)); [ $i -gt 100 ] && exit 1; sleep 0.05; done; echo ok > "$REINS_TASK.txt"',
    );
    const mark = join(dir, ".reins-mark");
    mkdirSync(mark);
    process.env.REINS_MARK = mark;
    try {
      const { code, out, err } = await reinsIn(dir, ["run", "--agent", agent, "--wip", "2"]);
      expect(err).toBe("");
      expect(code).toBe(0);
      const r = report(dir, out);
      expect(r.tasks.map((t) => [t.status, t.attempts.length])).toEqual([
        ["done", 1],
        ["done", 1],
      ]);
      expect(git(dir, "log", "--format=%s", "main..HEAD").split("\n").sort()).toEqual([
        "a: Write a",
        "b: Write b",
      ]);
      expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("ok\n");
      expect(readFileSync(join(dir, "b.txt"), "utf8")).toBe("ok\n");
      await replays(dir, out);
    } finally {
      delete process.env.REINS_MARK;
    }
  });

  it("retries a task after a transient failure of the agent", async () => {
    const { dir, agent } = runProject(
      {
        "reins.plan.yaml": plan(taskA, "settings:\n  backoff: { baseMs: 50, maxMs: 200 }"),
      },
      'if [ "$REINS_ATTEMPT" = 1 ]; then exit 75; fi; echo ok > a.txt',
    );
    const { code, out } = await reinsIn(dir, ["run", "--agent", agent]);
    expect(code).toBe(0);
    const r = report(dir, out);
    expect(r.tasks[0]?.attempts.map((a) => a.outcome)).toEqual(["transient", "ok"]);
    await replays(dir, out);
  });

  it("stops a hung agent after --agent-idle without output and retries it, instead of waiting out its timeout", async () => {
    const { dir, agent } = runProject(
      {
        "reins.plan.yaml": plan(taskA, "settings:\n  backoff: { baseMs: 50, maxMs: 200 }"),
      },
      'if [ "$REINS_ATTEMPT" = 1 ]; then echo thinking; exec sleep 60; fi; echo ok > a.txt',
    );
    // 0.01 minutes: 600 ms without output; the iteration's own timeout stays 30 minutes. Had the first
    // attempt not been stopped, its sleep would have ended it "ok" with nothing done.
    const { code, out } = await reinsIn(dir, ["run", "--agent", agent, "--agent-idle", "0.01"]);
    expect(code).toBe(0);
    const r = report(dir, out);
    expect(r.tasks[0]?.attempts.map((a) => a.outcome)).toEqual(["transient", "ok"]);
    await replays(dir, out);
    expect((await reinsIn(dir, ["run", "--agent-idle", "0"])).err).toContain(
      '--agent-idle must be a positive number of minutes, got "0"',
    );
  });

  it("closes a task whose checks already pass without calling the agent", async () => {
    const { dir, agent } = runProject(
      { "a.txt": "ok\n", "reins.plan.yaml": plan(twoTasks("")) },
      'echo called >> "$REINS_TASK.called"; echo ok > "$REINS_TASK.txt"',
    );
    const { code, out } = await reinsIn(dir, ["run", "--agent", agent]);
    expect(code).toBe(0);
    const r = report(dir, out);
    expect(r.tasks.map((t) => [t.id, t.noop, t.attempts.length])).toEqual([
      ["a", true, 0],
      ["b", false, 1],
    ]);
    expect(existsSync(join(dir, "a.called"))).toBe(false);
    await replays(dir, out);
  });

  it("fails a task that never goes green for good, and rolls the tree back to the last green commit", async () => {
    const { dir, agent } = runProject(
      { "reins.plan.yaml": plan(twoTasks("\n    deps: [a]"), "settings:\n  maxAttempts: 3") },
      'echo ok > "$REINS_TASK.txt"; [ "$REINS_TASK" = b ] && echo bad > b.txt && echo junk > junk.txt; exit 0',
    );
    const { code, out } = await reinsIn(dir, ["run", "--agent", agent]);
    expect(code).toBe(1);
    const r = report(dir, out);
    expect(r.status).toBe("failed");
    expect(r.tasks.map((t) => [t.id, t.status, t.permanent])).toEqual([
      ["a", "done", false],
      ["b", "failed", true],
    ]);
    expect(r.tasks[1]?.attempts).toHaveLength(3);
    // The tree is a's commit, clean: b's red change and its stray file are gone.
    expect(git(dir, "log", "--format=%s", "main..HEAD")).toBe("a: Write a");
    expect(git(dir, "status", "--porcelain")).toBe("");
    expect(existsSync(join(dir, "junk.txt"))).toBe(false);
    await replays(dir, out);
  });

  it("refuses to start on a dirty tree, with one clear line", async () => {
    const { dir, agent } = runProject({}, "true");
    writeFileSync(join(dir, "reins.plan.yaml"), plan(twoTasks("")));
    const { code, err } = await reinsIn(dir, ["run", "--agent", agent]);
    expect(code).toBe(2);
    expect(err.trim().split("\n")).toHaveLength(1);
    expect(err).toContain("uncommitted changes (reins.plan.yaml)");
  });

  it("says plainly that a run whose record left the store can no longer be resumed, and where its trace is", async () => {
    const { dir, agent } = runProject(
      { "reins.plan.yaml": plan(twoTasks("")) },
      'echo ok > "$REINS_TASK.txt"',
    );
    const first = await reinsIn(dir, ["run", "--agent", agent]);
    const id = runId(first.out);
    // As a Redis TTL or `reins gc` would let an ended run's record go.
    const db = new Database(join(dir, ".reins", "reins.db"));
    db.prepare("DELETE FROM runs WHERE id = ?").run(id);
    db.close();
    const resumed = await reinsIn(dir, ["run", "--resume", id]);
    expect(resumed.code).not.toBe(0);
    expect(resumed.err.trim().split("\n")).toHaveLength(1);
    expect(resumed.err).toContain(`run ${id} can no longer be resumed: its record has expired from`);
    expect(resumed.err).toContain(join(".reins", "runs", id, "trace.jsonl"));
  }, 60_000);

  it("goes on after SIGKILL with --resume and never redoes a task whose commit exists", async () => {
    // Task a finishes; task b's agent hangs on its first attempt until the run is killed.
    const { dir, agent } = runProject(
      { "reins.plan.yaml": plan(twoTasks("\n    deps: [a]")) },
      'echo "$REINS_TASK $REINS_ATTEMPT" >> "$REINS_LOG"; if [ "$REINS_TASK" = b ] && [ ! -f "$REINS_LOG.resumed" ]; then echo $$ > "$REINS_LOG.pid"; exec sleep 60; fi; echo ok > "$REINS_TASK.txt"',
    );
    const log = join(mkdtempSync(join(tmpdir(), "reins-log-")), "agent.log");
    const { child, agentPid, printed } = await runUntilTheAgentWaits(dir, agent, log);
    expect(readFileSync(log, "utf8")).toContain("b 1");
    process.kill(child.pid ?? 0, "SIGKILL");
    await new Promise((r) => child.on("close", r));
    // Without a box the killed run's agent lives on as an orphan, as after a crash: ended as a person would.
    killOrphan(agentPid);
    writeFileSync(`${log}.resumed`, "");
    const resumed = await resumeWithLog(dir, agent, log);
    expect(resumed.err).toBe("");
    expect(resumed.code).toBe(0);
    // a ran once, before the kill; b's interrupted iteration was verified (red) and fixed after it.
    expect(readFileSync(log, "utf8").trim().split("\n")).toEqual(["a 1", "b 1", "b 2"]);
    expect(git(dir, "log", "--format=%s", "main..HEAD").split("\n")).toEqual(["b: Write b", "a: Write a"]);
    expect(printed()).toContain("a:");
    await replays(dir, resumed.out);
  }, 60_000);
});

describe("reins run and its agent", () => {
  /** A run of two tasks killed (SIGKILL) while b's agent works, the agent killed too, ready for --resume. */
  async function killedRun() {
    const { dir, agent } = runProject(
      { "reins.plan.yaml": plan(twoTasks("\n    deps: [a]")) },
      'echo "$REINS_TASK $REINS_ATTEMPT" >> "$REINS_LOG"; if [ "$REINS_TASK" = b ] && [ ! -f "$REINS_LOG.resumed" ]; then echo $$ > "$REINS_LOG.pid"; exec sleep 60; fi; echo ok > "$REINS_TASK.txt"',
    );
    const log = join(mkdtempSync(join(tmpdir(), "reins-log-")), "agent.log");
    const { child, agentPid } = await runUntilTheAgentWaits(dir, agent, log);
    process.kill(child.pid ?? 0, "SIGKILL");
    await new Promise((r) => child.on("close", r));
    killOrphan(agentPid);
    writeFileSync(`${log}.resumed`, "");
    return { dir, agent, log };
  }

  it("--resume goes on with the agent the run was started with", async () => {
    const { dir, log } = await killedRun();
    // As the README says: a plain --resume. Not `claude`, which is not even installed here.
    const resumed = await resumeWithLog(dir, null, log);
    expect(resumed.err).toBe("");
    expect(resumed.code).toBe(0);
    expect(readFileSync(log, "utf8").trim().split("\n")).toEqual(["a 1", "b 1", "b 2"]);
  }, 60_000);

  it("says that a flag given on --resume is left aside when it differs from the run's", async () => {
    const { dir, agent, log } = await killedRun();
    const resumed = await resumeWithLog(dir, "cmd:true", log);
    const quoted = agent.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    expect(resumed.err).toMatch(
      new RegExp(
        `^reins: run \\S+ goes on as it was started \\(--agent ${quoted}\\); --agent cmd:true left aside\\n$`,
      ),
    );
    expect(resumed.code).toBe(0);
    expect(readFileSync(log, "utf8").trim().split("\n")).toEqual(["a 1", "b 1", "b 2"]);
  }, 60_000);

  it("ends at once with exit 2 and one line when the agent cannot start, before any attempt or branch", async () => {
    const { dir } = runProject({ "reins.plan.yaml": plan(taskA) }, "true");
    for (const [agent, said] of [
      [
        "cmd:./no-such-agent.sh",
        "the agent cmd:./no-such-agent.sh cannot start: ./no-such-agent.sh is not there or not executable",
      ],
      [
        "cmd:no-such-program --go",
        "the agent cmd:no-such-program --go cannot start: no-such-program is not on PATH",
      ],
    ] as const) {
      const ran = await reinsIn(dir, ["run", "--agent", agent]);
      expect(ran.code).toBe(2);
      expect(ran.err).toBe(`reins: ${said}\n`);
    }
    const saved = process.env.REINS_CLAUDE_BIN;
    process.env.REINS_CLAUDE_BIN = join(dir, "missing-claude");
    try {
      const claude = await reinsIn(dir, ["run", "--agent", "claude"]);
      expect(claude.code).toBe(2);
      expect(claude.err).toMatch(
        /^reins: the agent claude cannot start: .*missing-claude is not there or not executable \(install it, or set REINS_CLAUDE_BIN to it\)\n$/,
      );
    } finally {
      if (saved === undefined) delete process.env.REINS_CLAUDE_BIN;
      else process.env.REINS_CLAUDE_BIN = saved;
    }
    // Nothing was started: no branch, no run.
    expect(git(dir, "branch", "--list", "reins/*")).toBe("");
    expect((await reinsIn(dir, ["report"])).out).toMatch(/no runs yet/);
  });
});

describe("reins run under the guards", () => {
  it("stops cleanly when the run's budget pauses, says how to go on, and resumes once a person extends it", async () => {
    const { dir, agent } = runProject(
      {
        "reins.config.json": JSON.stringify({ budget: { session: { tokens: 1000 } } }),
        "reins.plan.yaml": plan(taskA),
      },
      'if [ "$REINS_ATTEMPT" = 1 ]; then echo bad > a.txt; else echo ok > a.txt; fi; echo \'{"reins":{"tokens":800}}\'',
    );
    const paused = await reinsIn(dir, ["run", "--agent", agent]);
    expect(paused.code).toBe(1);
    const run = runId(paused.out);
    expect(paused.out).toContain(`paused: The session has used 160% of its token budget`);
    expect(paused.out).toContain(`reins budget extend run:${run}`);
    expect(paused.out).toContain("reins run --resume");
    // Nothing is committed while paused.
    expect(git(dir, "log", "--format=%s", "main..HEAD")).toBe("");

    const extended = await reinsIn(dir, ["budget", "extend", `run:${run}`, "5000", "--reason", "worth it"]);
    expect(extended.code).toBe(0);
    const resumed = await reinsIn(dir, ["run", "--resume", "--agent", agent]);
    expect(resumed.err).toBe("");
    expect(resumed.code).toBe(0);
    expect(git(dir, "log", "--format=%s", "main..HEAD")).toBe("a: Write a");
    await replays(dir, resumed.out);
  });

  it("refuses a plan too big for the store's run record before it makes a branch", async () => {
    const task = (i: number) =>
      `  - id: t${i}\n    title: ${"T".repeat(480)}\n    checks: [a]\n    acceptance: ["${"x".repeat(400)}", "${"y".repeat(400)}"]\n`;
    const big = `version: 1\nname: big\nchecks:\n  a: { command: "true", tier: medium }\ntasks:\n${Array.from({ length: 2_500 }, (_, i) => task(i)).join("")}`;
    expect(big.length).toBeLessThan(4 * 1024 * 1024); // within the plan file's own limit
    const { dir, agent } = runProject({ "reins.plan.yaml": big }, "exit 0");
    const ran = await reinsIn(dir, ["run", "--agent", agent]);
    expect(ran.code).toBe(2);
    expect(ran.err.trim()).toMatch(
      /^reins: the plan reins\.plan\.yaml is too big to run: its run's record starts at [\d,]+ characters, over half the 8,388,608 a store keeps for a run/,
    );
    expect(git(dir, "branch", "--list", "reins/*")).toBe("");
  });

  it("resumes only this project's runs when projects share one store", async () => {
    const shared = join(mkdtempSync(join(tmpdir(), "reins-shared-")), "runs.db");
    const config = JSON.stringify({ store: `sqlite:${shared}`, budget: { session: { tokens: 1000 } } });
    const script = 'echo bad > a.txt; echo \'{"reins":{"tokens":800}}\'';
    const first = runProject({ "reins.config.json": config, "reins.plan.yaml": plan(taskA) }, script);
    const paused = await reinsIn(first.dir, ["run", "--agent", first.agent]);
    expect(paused.out).toContain("paused:");
    // Another project on the same store has nothing to resume: the paused run is the first project's.
    const second = runProject({ "reins.config.json": config, "reins.plan.yaml": plan(taskA) }, script);
    const resumed = await reinsIn(second.dir, ["run", "--resume", "--agent", second.agent]);
    expect(resumed.code).toBe(2);
    expect(resumed.err.trim()).toBe(
      "reins: no unfinished run of this project to resume (see `reins report` for the runs there are)",
    );
    expect(git(second.dir, "branch", "--list", "reins/*")).toBe("");
  });
});

describe("reins run --replay", () => {
  it("fails on the first step that differs from the recorded run, naming it", async () => {
    const { dir, agent } = runProject(
      { "reins.plan.yaml": plan(twoTasks("")) },
      'echo ok > "$REINS_TASK.txt"',
    );
    const { out } = await reinsIn(dir, ["run", "--agent", agent]);
    const trace = join(dir, ".reins", "runs", runId(out), "trace.jsonl");
    // Doctor the recorded output of task b's check: the replay now sees it red and decides otherwise.
    const lines = readFileSync(trace, "utf8").split("\n");
    // (the last passing one: the witness after it, with b's change set aside, saw b red)
    const i = lines.findLastIndex(
      (l) => l.includes('"op":"checks"') && /"name":"b","tier":"medium","exitCode":0/.test(l),
    );
    lines[i] = lines[i]!.replace(
      /"name":"b","tier":"medium","exitCode":0,"durationMs":[\d.]+,"passed":true/,
      (m) => m.replace('"exitCode":0', '"exitCode":1').replace('"passed":true', '"passed":false'),
    );
    writeFileSync(trace, lines.join("\n"));
    const replay = await reinsIn(dir, ["run", "--replay", trace]);
    expect(replay.code).toBe(1);
    expect(replay.err.trim().split("\n")).toHaveLength(1);
    expect(replay.err).toMatch(/step \d+ \(checks\.ran\): recorded event/);
  });

  it("rejects a file that is not a run trace with one line", async () => {
    const { dir } = runProject({}, "true");
    writeFileSync(join(dir, "bad.jsonl"), '{"t":"step"\n');
    const replay = await reinsIn(dir, ["run", "--replay", "bad.jsonl"]);
    expect(replay.code).toBe(2);
    expect(replay.err).toBe(`reins: ${join(dir, "bad.jsonl")}:1: not JSON\n`);
  });
});

describe("reins report", () => {
  it("lists the runs and writes a run's report on demand", async () => {
    const { dir, agent } = runProject(
      { "reins.plan.yaml": plan(twoTasks("")) },
      'echo ok > "$REINS_TASK.txt"',
    );
    const { out } = await reinsIn(dir, ["run", "--agent", agent]);
    const run = runId(out);
    const list = await reinsIn(dir, ["report"]);
    expect(list.out).toMatch(new RegExp(`${run}\\s+proven`));
    const one = await reinsIn(dir, ["report", run]);
    expect(one.code).toBe(0);
    expect(one.out).toContain("**Done, proven.**");
    expect(one.out).toMatch(/\| every_task_terminal \| ✔ \|/);
    expect(one.out).toContain("### a: Write a");
    const missing = await reinsIn(dir, ["report", "nope"]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain("no run nope");
  });
});

describe("reins run interrupted", () => {
  it("stops on Ctrl-C (SIGINT): the agent is killed, the run says how to go on, and --resume finishes it", async () => {
    const { dir, agent } = runProject(
      { "reins.plan.yaml": plan(taskA) },
      'if [ ! -f "$REINS_LOG.go" ]; then echo $$ > "$REINS_LOG.pid"; exec sleep 60; fi; echo ok > "$REINS_TASK.txt"',
    );
    const log = join(mkdtempSync(join(tmpdir(), "reins-log-")), "agent");
    const { child, agentPid, printed } = await runUntilTheAgentWaits(dir, agent, log);
    child.kill("SIGINT");
    const code = await new Promise((r) => child.on("close", r));
    expect(code).toBe(1);
    expect(printed()).toMatch(/interrupted: go on with `reins run --resume \S+`/);
    // The agent's process group was ended with the run (gone, or a zombie nobody has reaped yet).
    expect(await exits(agentPid, 5_000)).toBe(true);

    writeFileSync(`${log}.go`, "");
    const resumed = await resumeWithLog(dir, agent, log);
    expect(resumed.code).toBe(0);
    expect(git(dir, "log", "--format=%s", "main..HEAD")).toBe("a: Write a");
  }, 60_000);
});
