/** `reins run --spec` end to end: the spec drafted, approved, planned and built by a scripted agent. */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readRunTrace } from "../src/run/drive/run-trace.js";
import { reinsBin } from "#test/processes.js";
import { git, reinsIn, runProject } from "#test/run-project.js";

/** What the scripted agent drafts when asked for the spec. */
const SPEC = `# Greeter

A small service that greets.

## Greeting

Say hello.

## Shouting

Write it in capitals.

## Farewell

Say goodbye.
`;

/** What it writes when asked for the plan: one component per area, each task naming its section. */
const PLAN = `version: 1
name: greeter
checks:
  t1: { command: "test -s t1.txt && { ! grep -q loudly spec.md || grep -qx HELLO t1.txt; }", tier: medium }
  t2: { command: "test -s t2.txt", tier: medium }
  t3: { command: "test -s t3.txt", tier: medium }
tasks:
  - id: t1
    title: Greet
    checks: [t1]
    spec: { file: spec.md, sections: [Greeting] }
  - id: t2
    title: Shout
    checks: [t2]
    spec: { file: spec.md, sections: [Shouting] }
  - id: t3
    title: Say goodbye
    checks: [t3]
    spec: { file: spec.md, sections: [Farewell] }
`;

/**
 * The scripted agent: keeps each prompt; by `$REINS_WORKFLOW_STEP` drafts the spec or writes the plan (a plan
 * whose tasks name no section first when REINS_BAD_PLAN is set), else implements `$REINS_TASK`. Task t2 also
 * edits the section t1 names when REINS_EDIT is set, as an agent may while it works.
 */
const AGENT = `cat > "$REINS_PROMPTS/$REINS_TASK.$REINS_ATTEMPT"
[ -n "$REINS_WORKFLOW_STEP" ] && echo '{"reins":{"tokens":600}}'
case "$REINS_WORKFLOW_STEP" in
  draft-spec) cat > "$REINS_SPEC" <<'EOF'
${SPEC}EOF
    if [ -n "$REINS_SELF_APPROVE" ]; then
      node "$REINS_BIN" approve "$REINS_SPEC" --reason "looks right" --by alice >&2 || exit 1
    fi
    exit 0 ;;
  plan) if [ -n "$REINS_BAD_PLAN" ] && [ "$REINS_ATTEMPT" = 1 ]; then
      grep -v "spec:" > "$REINS_PLAN" <<'EOF'
${PLAN}EOF
    else cat > "$REINS_PLAN" <<'EOF'
${PLAN}EOF
    fi
    exit 0 ;;
esac
case "$REINS_TASK" in
  t1) if grep -q "Say hello loudly" spec.md; then echo HELLO > t1.txt; else echo hello > t1.txt; fi ;;
  t2) echo LOUD > t2.txt
      if [ -n "$REINS_EDIT" ]; then sed -i 's/^Say hello\\.$/Say hello loudly./' spec.md; fi ;;
  t3) echo bye > t3.txt ;;
esac`;

const GATE = 'the spec spec.md waits for approval: reins approve spec.md --reason "..."';

function withEnv<T>(env: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  Object.assign(process.env, env);
  return fn().finally(() => {
    for (const key of Object.keys(env)) delete process.env[key];
  });
}

function project(
  env: Record<string, string> = {},
  files: Record<string, string> = {},
  flags: readonly string[] = [],
) {
  const { dir, agent } = runProject(files, AGENT);
  const prompts = mkdtempSync(join(tmpdir(), "reins-spec-prompts-"));
  const start = () =>
    withEnv({ REINS_PROMPTS: prompts, ...env }, () =>
      reinsIn(dir, ["run", "--spec", "spec.md", "--request", "a greeter", "--agent", agent, ...flags]),
    );
  return { dir, agent, prompts, start };
}

const subjects = (dir: string, range = "HEAD") => git(dir, "log", "--format=%s", range).split("\n");

function runId(out: string): string {
  const run = /run (\S+):/.exec(out)?.[1];
  if (run === undefined) throw new Error(`no run id in ${out}`);
  return run;
}

describe("reins run --spec", () => {
  it("charges the workflow's own agent steps to run:workflow: a used-up budget keeps the next one from starting", async () => {
    const config = JSON.stringify({ budget: { session: { tokens: 1000 } } });
    const { dir, prompts, start } = project({ REINS_BAD_PLAN: "1" }, { "reins.config.json": config });
    // Each workflow step reports 600 tokens. The draft's leave the budget open: on to the gate.
    expect((await start()).out.trim().split("\n").at(-1)).toBe(GATE);
    expect((await reinsIn(dir, ["approve", "spec.md", "--reason", "ok"])).code).toBe(0);

    // The first plan is invalid and cost 1,200 of 1,000 tokens in all: its retry is not started.
    const paused = await start();
    expect(paused.code).toBe(1);
    const last = paused.out.trim().split("\n").at(-1)!;
    expect(last).toMatch(
      /^workflow stopped: planning: the budget of run:workflow is paused \(tokens 1,200 of 1,000\)/,
    );
    expect(last).toContain("reins budget extend run:workflow <tokens>");
    expect(last).toContain("then `reins run --spec spec.md`");
    expect(readdirSync(prompts).filter((p) => p.startsWith("workflow:plan"))).toEqual(["workflow:plan.1"]);

    // A person extends the budget and clears the bad plan; the next start plans again and builds.
    expect((await reinsIn(dir, ["budget", "extend", "run:workflow", "5000", "--reason", "ok"])).code).toBe(0);
    rmSync(join(dir, "reins.plan.yaml"));
    const built = await start();
    expect(built.err).toBe("");
    expect(built.code).toBe(0);
    expect(subjects(dir, "main")[0]).toBe("plan: reins.plan.yaml for spec.md");
  });

  it("never counts an approval the agent records while it drafts: that start stops at the gate, and so do the next", async () => {
    // Without a box (in one, the agent's `reins approve` cannot reach the store at all: below).
    const { dir, prompts, start } = project({ REINS_SELF_APPROVE: "1", REINS_BIN: reinsBin }, {}, [
      "--no-contain",
    ]);
    const first = await start();
    expect(first.code).toBe(1);
    expect(first.out.trim().split("\n").at(-1)).toBe(GATE);
    // The agent's own `reins approve` went through (nothing hooks a cmd: agent), and counts for nothing.
    expect((await reinsIn(dir, ["export", "spec:spec.md"])).out).toContain('"by":"alice"');
    expect(first.out).toContain(
      "one was recorded while the agent drafted it: a person approves it after reading it",
    );

    const second = await start();
    expect(second.code).toBe(1);
    expect(second.out.trim().split("\n").at(-1)).toBe(GATE);
    expect(readdirSync(prompts)).toEqual(["workflow:draft-spec.1"]);

    // A person's approval, after the drafting, opens the gate.
    expect((await reinsIn(dir, ["approve", "spec.md", "--reason", "read it", "--by", "bob"])).code).toBe(0);
    const third = await start();
    expect(third.code).toBe(0);
    expect(readdirSync(prompts)).toContain("workflow:plan.1");
  });

  it("keeps the drafting agent's own approval from the store in its box: the step fails, nothing is recorded", async () => {
    const { dir, start } = project({ REINS_SELF_APPROVE: "1", REINS_BIN: reinsBin });
    const first = await start();
    expect(first.code).toBe(1);
    // Refused twice over: its box hides the people's token a person's action needs, and the store.
    expect(first.out).toMatch(/workflow stopped: drafting spec\.md: .*approve is a person's action/);
    expect((await reinsIn(dir, ["export", "spec:spec.md"])).out).not.toContain('"by":"alice"');
  });

  it("refuses a spec outside the project in one line, before any agent runs", async () => {
    const { dir, prompts } = project();
    const outside = await reinsIn(dir, ["run", "--spec", "../spec.md", "--request", "a greeter"]);
    expect(outside.code).toBe(2);
    expect(outside.err.trim()).toBe(
      "reins: the spec ../spec.md is outside the project; reins reads specs inside it only",
    );
    expect(readdirSync(prompts)).toEqual([]);
  });

  it("drafts the spec and holds at the gate until reins approve, then plans and builds; a start after that builds nothing", async () => {
    const { dir, prompts, start } = project();

    const first = await start();
    expect(first.err).toBe("");
    expect(first.code).toBe(1);
    expect(first.out.trim().split("\n").at(-1)).toBe(GATE);
    expect(readFileSync(join(dir, "spec.md"), "utf8")).toBe(SPEC);
    expect(subjects(dir)).toEqual(["spec: draft spec.md", "start"]);
    expect(readFileSync(join(prompts, "workflow:draft-spec.1"), "utf8")).toContain("a greeter");
    expect(existsSync(join(dir, "reins.plan.yaml"))).toBe(false);

    // A second start assesses again: the spec exists, nobody approved it; nothing runs.
    const second = await start();
    expect(second.code).toBe(1);
    expect(second.out.trim().split("\n").at(-1)).toBe(GATE);
    expect(readdirSync(prompts)).toEqual(["workflow:draft-spec.1"]);
    expect(subjects(dir)).toHaveLength(2);

    const approve = await reinsIn(dir, ["approve", "spec.md", "--reason", "ok", "--by", "alice"]);
    expect(approve.err).toBe("");
    expect(approve.code).toBe(0);
    expect(approve.out).toContain("approved spec.md as it is now");

    const third = await start();
    expect(third.err).toBe("");
    expect(third.code).toBe(0);
    const plan = readFileSync(join(prompts, "workflow:plan.1"), "utf8");
    expect(plan).toContain("- Greeter > Greeting");
    expect(plan).toContain("spec: { file: spec.md");
    // One commit per task on the run's branch, after the spec's and the plan's on main.
    expect(subjects(dir, "main")).toEqual([
      "plan: reins.plan.yaml for spec.md",
      "spec: draft spec.md",
      "start",
    ]);
    expect(subjects(dir, "main..HEAD")).toEqual(["t3: Say goodbye", "t2: Shout", "t1: Greet"]);
    expect(git(dir, "status", "--porcelain")).toBe("");

    // Re-entrant: the commits show every task done, so a fourth start builds nothing.
    const fourth = await start();
    expect(fourth.code).toBe(0);
    expect(fourth.out).toContain("every task of the plan is done, by its commits: nothing to build");
    expect(subjects(dir, "main..HEAD")).toHaveLength(3);

    const where = await reinsIn(dir, ["workflow", "--spec", "spec.md", "--json"]);
    expect(JSON.parse(where.out)).toMatchObject({
      phase: "building",
      step: "done",
      approval: { by: "alice", reason: "ok" },
    });
  });

  it("takes no task as done by a Reins-Task trailer alone: an empty commit naming every task builds them all the same", async () => {
    const { dir, start } = project();
    expect((await start()).out.trim().split("\n").at(-1)).toBe(GATE);
    expect((await reinsIn(dir, ["approve", "spec.md", "--reason", "ok", "--by", "alice"])).code).toBe(0);
    // Anyone can write a trailer: an agent, or a person by mistake, for a run that never was.
    git(
      dir,
      "commit",
      "-q",
      "--allow-empty",
      "-m",
      "done",
      "-m",
      "Reins-Task: r/t1\nReins-Task: r/t2\nReins-Task: r/t3",
    );
    const built = await start();
    expect(built.code).toBe(0);
    expect(built.out).not.toContain("nothing to build");
    expect(subjects(dir, "main..HEAD")).toEqual(["t3: Say goodbye", "t2: Shout", "t1: Greet"]);
  });

  it("reopens exactly the task naming a section an agent edited mid-run", async () => {
    const { dir, start } = project({ REINS_EDIT: "1" });
    expect((await start()).code).toBe(1);
    expect((await reinsIn(dir, ["approve", "spec.md", "--reason", "ok"])).code).toBe(0);
    const built = await start();
    expect(built.err).toBe("");
    expect(built.code).toBe(0);
    const trace = readRunTrace(join(dir, ".reins", "runs", runId(built.out), "trace.jsonl"));
    const drift = trace.steps.filter((s) => s.event.kind === "spec.changed").map((s) => s.event);
    expect(drift).toEqual([
      expect.objectContaining({ sections: ["spec.md#Greeter > Greeting"], tasks: ["t1"] }),
    ]);
    expect(subjects(dir, "main..HEAD")).toEqual(["t1: Greet", "t3: Say goodbye", "t2: Shout", "t1: Greet"]);
    expect(readFileSync(join(dir, "t1.txt"), "utf8")).toBe("HELLO\n");
  });

  it("voids the approval when the spec changes after it: the gate holds for the new content", async () => {
    const { dir, prompts, start } = project();
    await start();
    expect((await reinsIn(dir, ["approve", "spec.md", "--reason", "ok"])).code).toBe(0);

    // A person edits a section after approving and commits it: that content was never approved.
    writeFileSync(join(dir, "spec.md"), SPEC.replace("Say goodbye.", "Say goodbye twice."));
    git(dir, "commit", "-q", "-am", "spec: goodbye twice");
    const held = await start();
    expect(held.code).toBe(1);
    expect(held.out.trim().split("\n").at(-1)).toBe(GATE);
    expect(held.out).toContain("an approval of an earlier content does not count");
    expect(readdirSync(prompts)).toEqual(["workflow:draft-spec.1"]);

    const where = await reinsIn(dir, ["workflow", "--spec", "spec.md"]);
    expect(where.out).toContain("phase: requirements");
    expect(where.out).toContain("approval: none for spec.md as it is now");

    expect((await reinsIn(dir, ["approve", "spec.md", "--reason", "twice is right"])).code).toBe(0);
    const built = await start();
    expect(built.code).toBe(0);
    expect(subjects(dir, "main..HEAD")).toHaveLength(3);
  });

  it("plans again once, with the problem in the prompt, when the first plan is refused", async () => {
    const { dir, prompts, start } = project({ REINS_BAD_PLAN: "1" });
    await start();
    await reinsIn(dir, ["approve", "spec.md", "--reason", "ok"]);
    const built = await start();
    expect(built.err).toBe("");
    expect(built.code).toBe(0);
    const retry = readFileSync(join(prompts, "workflow:plan.2"), "utf8");
    expect(retry).toContain("## Your last plan was refused");
    expect(retry).toContain("task t1 names no section of spec.md");
    expect(subjects(dir, "main")[0]).toBe("plan: reins.plan.yaml for spec.md");
  });

  it("resumes the unfinished run of the plan on the next start instead of starting again", async () => {
    // Each task's iteration reports 800 tokens against a 1000-token budget: the second one pauses the run.
    const { dir, agent, start } = project();
    const agentFile = agent.replace(/^cmd:sh /, "");
    writeFileSync(agentFile, `${readFileSync(agentFile, "utf8")}\necho '{"reins":{"tokens":800}}'\n`);
    writeFileSync(join(dir, "reins.config.json"), JSON.stringify({ budget: { session: { tokens: 1000 } } }));
    git(dir, "add", "reins.config.json");
    git(dir, "commit", "-q", "-m", "budget");
    await start();
    await reinsIn(dir, ["approve", "spec.md", "--reason", "ok"]);
    const paused = await start();
    expect(paused.code).toBe(1);
    const run = runId(paused.out);
    expect(subjects(dir, "main..HEAD")).toEqual(["t1: Greet"]);

    expect((await reinsIn(dir, ["budget", "extend", `run:${run}`, "10000", "--reason", "go on"])).code).toBe(
      0,
    );
    const resumed = await start();
    expect(resumed.err).toBe("");
    expect(resumed.code).toBe(0);
    expect(runId(resumed.out)).toBe(run);
    // Each top-level task is a component of its own: t1 done, t2 not begun is step 7, moving on.
    expect(resumed.out).toContain("assessed: building, step repeat-component");
    expect(subjects(dir, "main..HEAD")).toEqual(["t3: Say goodbye", "t2: Shout", "t1: Greet"]);
  });

  it("prints the workflow's steps, and with --mermaid the diagram docs/running-a-plan.md shows", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reins-workflow-"));
    const steps = await reinsIn(dir, ["workflow"]);
    expect(steps.code).toBe(0);
    expect(steps.out).toContain("  7. Repeat for the next component: ");
    const chart = await reinsIn(dir, ["workflow", "--mermaid"]);
    expect(chart.code).toBe(0);
    const readme = readFileSync(join(import.meta.dirname, "..", "docs", "running-a-plan.md"), "utf8");
    expect(readme).toContain(`\`\`\`mermaid\n${chart.out}\`\`\``);
  });
});
