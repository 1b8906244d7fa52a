/** `reins run` with spec drift: a section edited while the run goes on reopens the task that names it. */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RunDecision, RunEvent } from "../src/run/control/types.js";
import { readRunTrace } from "../src/run/drive/run-trace.js";
import { git, reinsIn, runProject } from "#test/run-project.js";

const SPEC = `---
title: Greeter
owner: docs
---

# Greeter

A small service that greets.

## Greeting

Say hello.

\`\`\`md
## Not a section
\`\`\`

## Shouting

Write it in capitals.

## Farewell

Say goodbye.
`;

/**
 * Three tasks, each naming one section of spec.md; each task's check wants its file written, t1's as the
 * spec says it now (so its check witnesses its redo after the spec changed).
 */
const PLAN = `version: 1
name: drift
checks:
  lint: { command: "true", tier: fast }
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
    spec: { file: spec.md, sections: ["Greeter > Shouting"] }
  - id: t3
    title: Say goodbye
    checks: [t3]
    spec: { file: spec.md, sections: [farewell] }
`;

/**
 * The scripted agent: keeps each prompt, and writes its task's file from what the spec says now. Task t2
 * also edits the section task t1 names (when REINS_EDIT is set), as an agent may while it works.
 */
const AGENT = `cat > "$REINS_PROMPTS/$REINS_TASK.$REINS_ATTEMPT"
case "$REINS_TASK" in
  t1) if grep -q "Say hello loudly" spec.md; then echo HELLO > t1.txt; else echo hello > t1.txt; fi ;;
  t2) echo LOUD > t2.txt
      if [ -n "$REINS_EDIT" ]; then sed -i 's/^Say hello\\.$/Say hello loudly./' spec.md; fi ;;
  t3) echo bye > t3.txt ;;
esac`;

type Step = { n: number; key: string; event: RunEvent; decisions: RunDecision[] };

function runId(out: string): string {
  const run = /run (\S+):/.exec(out)?.[1];
  if (run === undefined) throw new Error(`no run id in ${out}`);
  return run;
}

function traceOf(dir: string, run: string) {
  const path = join(dir, ".reins", "runs", run, "trace.jsonl");
  return { path, ...readRunTrace(path) };
}

const transitions = (steps: Step[], task: string) =>
  steps.flatMap((s) =>
    s.decisions.flatMap((d) => (d.kind === "transition" && d.task === task ? [`${d.from}→${d.to}`] : [])),
  );

interface ReportJson {
  status: string;
  drift: { step: number; sections: string[]; tasks: string[] }[];
  tasks: {
    id: string;
    status: string;
    reason: string | null;
    attempts: { attempt: number; mode: string }[];
  }[];
}

function withEnv<T>(env: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  Object.assign(process.env, env);
  return fn().finally(() => {
    for (const key of Object.keys(env)) delete process.env[key];
  });
}

function project(files: Record<string, string> = {}) {
  const { dir, agent } = runProject({ "spec.md": SPEC, "reins.plan.yaml": PLAN, ...files }, AGENT);
  const prompts = mkdtempSync(join(tmpdir(), "reins-drift-prompts-"));
  return { dir, agent, prompts };
}

describe("reins run with spec drift", () => {
  it("reopens and redoes exactly the done task whose section an edit changed mid-run, and replays", async () => {
    const { dir, agent, prompts } = project();
    const { code, out, err } = await withEnv({ REINS_PROMPTS: prompts, REINS_EDIT: "1" }, () =>
      reinsIn(dir, ["run", "--agent", agent]),
    );
    expect(err).toBe("");
    expect(code).toBe(0);
    const run = runId(out);
    const trace = traceOf(dir, run);

    // The start recorded the hashes of the three named sections (the fenced "heading" is none of them).
    const start = trace.io.get("begin")?.find((l) => l.op === "spec.hashes")?.result as Record<
      string,
      unknown
    >;
    expect(Object.keys(start)).toEqual([
      "spec.md#Greeter > Greeting",
      "spec.md#Greeter > Shouting",
      "spec.md#Greeter > Farewell",
    ]);

    // One spec.changed step, naming exactly the section t2's agent edited and the task that implements it.
    const drift = trace.steps.filter((s) => s.event.kind === "spec.changed");
    expect(drift.map((s) => s.event)).toEqual([
      expect.objectContaining({ sections: ["spec.md#Greeter > Greeting"], tasks: ["t1"] }),
    ]);
    expect(drift[0]?.decisions).toContainEqual({
      kind: "transition",
      task: "t1",
      from: "done",
      to: "pending",
      why: "reopened: spec section spec.md#Greeter > Greeting changed",
    });

    // t1 was done, reopened and done again; t2 and t3 ran once and were never reopened.
    expect(transitions(trace.steps, "t1")).toEqual([
      "pending→in_progress",
      "in_progress→verifying",
      "verifying→done",
      "done→pending",
      "pending→in_progress",
      "in_progress→verifying",
      "verifying→done",
    ]);
    for (const task of ["t2", "t3"]) expect(transitions(trace.steps, task)).not.toContain("done→pending");

    // Its second iteration was told what changed, and read the spec as it is now.
    const redo = readFileSync(join(prompts, "t1.2"), "utf8");
    expect(redo).toContain("## The specification changed");
    expect(redo).toContain("- spec.md#Greeter > Greeting");
    expect(redo).toContain("Say hello loudly.");
    expect(readFileSync(join(prompts, "t1.1"), "utf8")).not.toContain("The specification changed");
    expect(readFileSync(join(dir, "t1.txt"), "utf8")).toBe("HELLO\n");

    const report = JSON.parse(
      readFileSync(join(dir, ".reins", "runs", run, "report.json"), "utf8"),
    ) as ReportJson;
    expect(report.status).toBe("proven");
    expect(report.drift).toEqual([
      { step: drift[0]!.n, sections: ["spec.md#Greeter > Greeting"], tasks: ["t1"] },
    ]);
    expect(report.tasks.map((t) => [t.id, t.status, t.attempts.map((a) => a.attempt)])).toEqual([
      ["t1", "done", [1, 2]],
      ["t2", "done", [1]],
      ["t3", "done", [1]],
    ]);
    expect(readFileSync(join(dir, ".reins", "runs", run, "report.md"), "utf8")).toContain(
      "`spec.md#Greeter > Greeting` changed; tasks: t1",
    );
    // One commit per time a task was proven: t1 twice, its first commit kept in the history.
    expect(git(dir, "log", "--format=%s", "main..HEAD").split("\n")).toEqual([
      "t1: Greet",
      "t3: Say goodbye",
      "t2: Shout",
      "t1: Greet",
    ]);
    expect(git(dir, "status", "--porcelain")).toBe("");

    const replay = await reinsIn(dir, ["run", "--replay", trace.path]);
    expect(replay.err).toBe("");
    expect(replay.code).toBe(0);
    expect(replay.out).toMatch(/replayed run .*: \d+ steps/);
  });

  it("reopens nothing when the spec does not change: one iteration per task", async () => {
    const { dir, agent, prompts } = project();
    const { code, out } = await withEnv({ REINS_PROMPTS: prompts }, () =>
      reinsIn(dir, ["run", "--agent", agent]),
    );
    expect(code).toBe(0);
    const trace = traceOf(dir, runId(out));
    expect(trace.steps.filter((s) => s.event.kind === "spec.changed")).toEqual([]);
    expect(git(dir, "log", "--format=%s", "main..HEAD").split("\n")).toHaveLength(3);
  });

  it("looks for drift on resume: an edit made while the run was paused reopens the task that names it", async () => {
    // Each iteration reports 800 tokens against a 1000-token budget: t2's iteration pauses the run.
    const { dir, agent, prompts } = project({
      "reins.config.json": JSON.stringify({ budget: { session: { tokens: 1000 } } }),
    });
    const tokens = `${AGENT}\necho '{"reins":{"tokens":800}}'`;
    const agentFile = agent.replace(/^cmd:sh /, "");
    writeFileSync(agentFile, `#!/bin/sh\n${tokens}\n`);
    const paused = await withEnv({ REINS_PROMPTS: prompts }, () => reinsIn(dir, ["run", "--agent", agent]));
    expect(paused.code).toBe(1);
    const run = runId(paused.out);
    expect(git(dir, "log", "--format=%s", "main..HEAD")).toBe("t1: Greet");

    // A person edits the section t1 implements, commits it on the run's branch, and lets the run go on.
    writeFileSync(join(dir, "spec.md"), SPEC.replace("Say hello.", "Say hello loudly."));
    git(dir, "commit", "-q", "-am", "spec: greet loudly");
    expect((await reinsIn(dir, ["budget", "extend", `run:${run}`, "10000", "--reason", "go on"])).code).toBe(
      0,
    );
    const resumed = await withEnv({ REINS_PROMPTS: prompts }, () =>
      reinsIn(dir, ["run", "--resume", "--agent", agent]),
    );
    // The person's commit is kept, and closes no task.
    expect(resumed.err).toMatch(
      /^reins: the run's branch reins\/\S+ has 1 commit\(s\) since reins' last \(\w+\): kept, but none closes a task; the checks judge the tree as it is\n$/,
    );
    expect(resumed.code).toBe(0);

    const trace = traceOf(dir, run);
    const at = trace.steps.findIndex((s) => s.event.kind === "run.resumed");
    const drift = trace.steps.filter((s) => s.event.kind === "spec.changed");
    expect(drift.map((s) => s.event)).toEqual([
      expect.objectContaining({ sections: ["spec.md#Greeter > Greeting"], tasks: ["t1"] }),
    ]);
    // The drift is the step right after the resume, before any iteration.
    expect(trace.steps[at + 1]?.event.kind).toBe("spec.changed");
    expect(transitions(trace.steps, "t1")).toContain("done→pending");
    expect(readFileSync(join(dir, "t1.txt"), "utf8")).toBe("HELLO\n");
    expect(git(dir, "log", "--format=%s", "main..HEAD").split("\n")).toEqual([
      "t1: Greet",
      "t3: Say goodbye",
      "t2: Shout",
      "spec: greet loudly",
      "t1: Greet",
    ]);

    const replay = await reinsIn(dir, ["run", "--replay", trace.path]);
    expect(replay.err).toBe("");
    expect(replay.code).toBe(0);
  });
});
