/** How the driver carries out each action of the control core, every outside interaction through the recorder. */
import { isAbsolute, join } from "node:path";
import type {
  CheckDef,
  CheckResult,
  HunkWitness,
  RunAction,
  RunDecision,
  RunEvent,
  RunState,
} from "../control/types.js";
import { PLAN_CHECKS_ENV } from "../../base/config/load-policy.js";
import { ReinsError, assertNever } from "../../base/core/errors.js";
import type { Store } from "../../base/core/store.js";
import type { AgentRunner } from "../agents/runner.js";
import { touchesBoundary } from "./boundaries.js";
import { boxArgs, boxRefusals, type Containment } from "./agent-box.js";
import { runChecks } from "../checks/checks.js";
import { Git } from "../git/git.js";
import { judgesOf, restoreJudges } from "./judges.js";
import type { RunGuard } from "./run-guard.js";
import { buildPrompt } from "./prompt.js";
import type { Recorder } from "./recorder.js";
import type { ReadTrace, RunMeta, TraceWriter } from "./run-trace.js";
import type { SectionHashes } from "../spec/section-hashes.js";
import { readSpecSections } from "./spec.js";
import { HunkCache, hunkTier } from "./hunks.js";
import { type JudgeReview, judgesAsTheyWere, reviewJudges } from "./judge-files.js";

/** Everything the driver and its actions share for one run. */
export interface DriveContext {
  meta: RunMeta;
  root: string;
  /** `.reins/runs/<run>`. */
  dir: string;
  recorder: Recorder;
  trace: TraceWriter | null;
  replay: { steps: ReadTrace["steps"] } | null;
  store: Store;
  runner: AgentRunner;
  guard: RunGuard;
  /** A git port for a working tree (the project, or a task's worktree). */
  git: (cwd: string) => Git;
  keys: { next: number; step: number };
  worktrees: Map<string, { path: string; base: string }>;
  /** The latest state, for the report. */
  state: RunState | null;
  /** Each task's last diff (lines and files), to tell an iteration that changed something from one that did not. */
  lastDiff: Map<string, string>;
  /**
   * The recorded hashes of the spec sections the plan names: read at start, kept in the checkpoint, and
   * replaced whenever a look finds drift. Null while nothing is recorded (a plan naming no section).
   */
  spec: SectionHashes | null;
  /** The run branch's commit reins last made or started from: what a resume trusts (kept in the checkpoint). */
  tip: string;
  /** On resume: the commits found that the run may take (see trustedTip); null: an older run's trailer search. */
  trusted: Record<string, string> | null;
  /** Guards' corrective instructions for each task's next prompt. */
  instructions: Map<string, string[]>;
  signal: AbortSignal | undefined;
  /** Settles with null when the signal aborts. */
  aborted: Promise<null>;
  agentTimeoutMs: number;
  /** How long an agent may print nothing before it is stopped as hung (and retried as transient). */
  agentIdleMs: number;
  progress: (state: RunState, decisions: RunDecision[]) => void;
  /** The box the agent works in, as tried at the run's start; null in a replay (no agent runs). */
  box: Containment | null;
  /** Builds a resumed run's `run.resumed` event (also used by replay when the recorded run resumed). */
  resumeEvent: (key: string, state: RunState) => Promise<RunEvent>;
  /** Writes the evidence report; returns the path of report.md. */
  writeReport: (state: RunState) => Promise<string>;
}

function now(ctx: DriveContext, key: string): Promise<number> {
  return ctx.recorder.io(key, "clock", () => Promise.resolve(Date.now()));
}

function state(ctx: DriveContext): RunState {
  if (ctx.state === null) throw new Error("no run state yet");
  return ctx.state;
}

/** The working tree a task works in: the project itself, or its own worktree when several run at once. */
async function treeOf(ctx: DriveContext, key: string, task: string): Promise<{ cwd: string; base: string }> {
  if (!ctx.meta.worktrees) return { cwd: ctx.root, base: "HEAD" };
  const existing = ctx.worktrees.get(task);
  if (existing !== undefined) return { cwd: existing.path, base: existing.base };
  const path = join(ctx.dir, "worktrees", task);
  const base = await ctx.recorder.io(key, "git.head", () => headOf(ctx.git(ctx.root)));
  await ctx.recorder.io(key, "git.worktree_add", () => ctx.git(ctx.root).worktreeAdd(path, base));
  const tree = { path, base };
  ctx.worktrees.set(task, tree);
  return { cwd: path, base };
}

async function dropTree(ctx: DriveContext, key: string, task: string): Promise<void> {
  const tree = ctx.worktrees.get(task);
  if (tree === undefined) return;
  await ctx.recorder.io(key, "git.worktree_remove", () => ctx.git(ctx.root).worktreeRemove(tree.path));
  ctx.worktrees.delete(task);
}

/** The commit checked out; a run always has one (it starts from a commit). */
async function headOf(git: Git): Promise<string> {
  const head = await git.head();
  if (head === null) throw new ReinsError("usage", "the repository has no commit");
  return head;
}

function defs(run: RunState, names: string[]): CheckDef[] {
  return names.map((name) => {
    const def = run.checks[name];
    if (def === undefined) throw new Error(`unknown check ${name}`);
    return def;
  });
}

async function checks(ctx: DriveContext, key: string, task: string, names: string[]): Promise<CheckResult[]> {
  const { cwd } = await treeOf(ctx, key, task);
  const list = defs(state(ctx), names);
  return ctx.recorder.io(key, "checks", () =>
    runChecks(list, { cwd, ...(ctx.signal !== undefined ? { signal: ctx.signal } : {}) }),
  );
}

function ancestors(run: RunState, id: string) {
  const out = [];
  let parent = run.nodes[id]?.parent ?? null;
  while (parent !== null) {
    const node = run.nodes[parent];
    if (node === undefined) break;
    out.unshift(node);
    parent = node.parent;
  }
  return out;
}

async function runAgent(
  ctx: DriveContext,
  key: string,
  action: Extract<RunAction, { kind: "run_agent" }>,
): Promise<RunEvent> {
  const run = state(ctx);
  const node = run.nodes[action.task];
  if (node === undefined) throw new Error(`unknown task ${action.task}`);
  const idle = {
    kind: "agent.finished" as const,
    ref: action.ref,
    task: action.task,
    attempt: action.attempt,
    turns: 0,
    tokens: 0,
    costUsd: 0,
    linesChanged: 0,
    filesChanged: [],
    boundaryTouched: false,
  };
  // A budget paused or a breaker open since the last call: no agent runs until a person acts.
  const paused = await ctx.recorder.io(key, "guard.status", () => ctx.guard.paused());
  if (paused !== null) return { ...idle, at: await now(ctx, key), outcome: "budget_paused", summary: paused };
  if (action.attempt === 1)
    await ctx.recorder.io(key, "guard.task", () => ctx.guard.taskStarted(action.task, node.type, Date.now()));

  const tree = await treeOf(ctx, key, action.task);
  const { prompt, checks } = await promptFor(ctx, key, run, node, action);
  const planPath = isAbsolute(ctx.meta.plan) ? ctx.meta.plan : join(tree.cwd, ctx.meta.plan);
  const judges = await ctx.recorder.io(key, "git.judges", () => judgesOf(ctx.git(tree.cwd), planPath));
  const box = ctx.box?.contained === true ? ctx.box : null;
  const output = await ctx.recorder.io(key, "agent", async () => {
    const result = await ctx.runner.run({
      ...(box !== null
        ? {
            box: [box.bwrap, ...boxArgs({ root: ctx.root, cwd: tree.cwd, plan: planPath, env: process.env })],
          }
        : {}),
      run: ctx.meta.run,
      task: action.task,
      attempt: action.attempt,
      mode: action.mode,
      prompt,
      cwd: tree.cwd,
      // The agent's hooks name these checks when they refuse its "done" (see base/config/load-policy.ts).
      env: checks.length > 0 ? { [PLAN_CHECKS_ENV]: JSON.stringify(checks.map((c) => c.command)) } : {},
      timeoutMs: ctx.agentTimeoutMs,
      idleMs: ctx.agentIdleMs,
      ...(ctx.signal !== undefined ? { signal: ctx.signal } : {}),
    });
    return { raw: result.raw, exitCode: result.exitCode, stderr: result.stderr };
  });
  const parsed = ctx.runner.parse(output.raw, output.exitCode, output.stderr);
  // What judges the work is the run's: the agent's own commits, checkouts, resets, branches and hooks are
  // undone before anything else looks at the tree.
  const undone = await ctx.recorder.io(key, "git.judges_restored", () =>
    restoreJudges(
      ctx.git(tree.cwd),
      judges,
      `refs/reins/${ctx.meta.run}/undo/${Buffer.from(action.task).toString("hex")}`,
      ctx.meta.branch,
    ),
  );
  // What the box refused the agent (read from its recorded output, so a replay finds the same).
  const refused = boxRefusals(output.raw, output.stderr).map(
    (line) => `the box refused the agent a write: ${line}`,
  );
  const tampering = [...undone, ...refused];
  if (tampering.length > 0)
    ctx.instructions.set(action.task, [
      ...(ctx.instructions.get(action.task) ?? []),
      `reins undid what you did in git (${tampering.join("; ")}). Do not commit, check out, reset, make branches, write git hooks or edit the plan: reins commits your work once its checks prove it.`,
    ]);
  const diff = await ctx.recorder.io(key, "git.diff_stat", () => ctx.git(tree.cwd).diffStat(tree.base));
  // The diff is everything since the last green commit; only a diff unlike the last one is a new edit.
  const signature = `${diff.lines}:${diff.files.join("\0")}`;
  const changed = ctx.lastDiff.get(action.task) !== signature;
  ctx.lastDiff.set(action.task, signature);
  const spent = await ctx.recorder.io(key, "guard.usage", () =>
    ctx.guard.usage(
      action.task,
      {
        attempt: action.attempt,
        tokens: parsed.tokens,
        costUsd: parsed.costUsd,
        files: changed ? diff.files : [],
        lines: diff.lines,
        hooked: ctx.runner.hooked === true,
      },
      Date.now(),
    ),
  );
  if (spent.advice.length > 0) ctx.instructions.set(action.task, spent.advice);
  return {
    ...idle,
    at: await now(ctx, key),
    outcome: spent.stop !== null ? "budget_paused" : parsed.outcome,
    turns: parsed.turns,
    tokens: parsed.tokens,
    costUsd: parsed.costUsd,
    summary: spent.stop ?? parsed.summary.slice(0, 2_000),
    linesChanged: diff.lines,
    filesChanged: diff.files.slice(0, 200),
    boundaryTouched: touchesBoundary(diff.files, run.settings.boundaries),
    ...(tampering.length > 0 ? { tampering } : {}),
  };
}

/** The agent's prompt for one iteration, and the checks it names: the task, its spec, its gate, and what reins asks. */
async function promptFor(
  ctx: DriveContext,
  key: string,
  run: ReturnType<typeof state>,
  node: NonNullable<ReturnType<typeof state>["nodes"][string]>,
  action: Extract<RunAction, { kind: "run_agent" }>,
): Promise<{ prompt: string; checks: { name: string; command: string }[] }> {
  const spec =
    node.spec === undefined
      ? []
      : await ctx.recorder.io(key, "spec", () =>
          readSpecSections(ctx.root, node.spec as { file: string; sections: string[] }),
        );
  const gate = [
    ...new Set([
      ...Object.values(run.checks)
        .filter((c) => c.tier === "fast")
        .map((c) => c.name),
      ...ancestors(run, node.id).flatMap((a) => a.checks),
      ...node.checks,
    ]),
  ];
  const checks = defs(run, gate).map((c) => ({ name: c.name, command: c.command }));
  const prompt = buildPrompt({
    task: node,
    ancestors: ancestors(run, node.id),
    mode: action.mode,
    attempt: action.attempt,
    failing: action.failing,
    checks,
    spec,
    specChanged: action.specChanged ?? [],
    instructions: ctx.instructions.get(action.task) ?? [],
  });
  ctx.instructions.delete(action.task);
  return { prompt, checks };
}

/** Where a task's change is kept while it is set aside for its counterfactual: found again after a crash. */
export function asideRef(run: string, task: string): string {
  // In hex: a task id may hold what a ref name may not (`..`, a trailing `.lock`).
  return `refs/reins/${run}/aside/${Buffer.from(task).toString("hex")}`;
}

/**
 * The proof of a green task, against the judges as they were when it started (see judge-files.ts): when
 * its agent changed a judge, its checks run first with the judges put back as they were; then, with its
 * other change set aside too (its new tests kept), they run again: the counterfactual. When that went red,
 * each hunk of the change is set aside alone (the hunk tier, up to the action's `hunks`). Everything is
 * put back after. The whole tree is first saved under `asideRef` (naming every file touched), so a run
 * killed meanwhile puts it back when it resumes (see restoreAside).
 */
async function witness(
  ctx: DriveContext,
  key: string,
  action: Extract<RunAction, { kind: "witness" }>,
): Promise<RunEvent> {
  const run = state(ctx);
  const tree = await treeOf(ctx, key, action.task);
  const git = ctx.git(tree.cwd);
  const base = await ctx.recorder.io(key, "git.head", () =>
    tree.base === "HEAD" ? headOf(git) : Promise.resolve(tree.base),
  );
  const changes = await ctx.recorder.io(key, "git.changes", () => git.changes(base));
  const commands = defs(run, action.checks).map((c) => c.command);
  const review = await ctx.recorder.io(key, "git.judges_review", () =>
    reviewJudges(git, base, changes, run.settings, commands),
  );
  const setAside = review.behaviour;
  const touched = [...new Set([...review.putBack, ...Object.keys(review.rewrite), ...setAside])];
  const judges = (passedAsTheyWere: boolean) => ({
    kept: review.kept.slice(0, 50),
    keptTotal: review.kept.length,
    changed: review.changed.slice(0, 50),
    diff: review.diff,
    passedAsTheyWere,
  });
  const answer = (results: CheckResult[], passedAsTheyWere: boolean, hunks?: HunkWitness) => ({
    kind: "witness.ran" as const,
    ref: action.ref,
    task: action.task,
    setAside,
    results,
    judges: judges(passedAsTheyWere),
    ...(hunks !== undefined ? { hunks } : {}),
  });
  if (touched.length === 0) return { ...answer([], true), at: await now(ctx, key) };
  const ref = asideRef(ctx.meta.run, action.task);
  const saved = await ctx.recorder.io(key, "git.save_tree", () =>
    git.saveTree(ref, `reins: ${action.task} set aside\n\n${JSON.stringify(touched)}`),
  );
  let results: CheckResult[] = [];
  let passedAsTheyWere = true;
  let hunks: HunkWitness | undefined;
  try {
    if (review.changed.length > 0) {
      await ctx.recorder.io(key, "git.judges_as_they_were", () => judgesAsTheyWere(git, base, review));
      const asTheyWere = await checks(ctx, key, action.task, action.checks);
      passedAsTheyWere = !asTheyWere.some(isRedResult);
    }
    if (passedAsTheyWere && setAside.length > 0) {
      await ctx.recorder.io(key, "git.set_aside", () => git.putFiles(base, setAside));
      results = await checks(ctx, key, action.task, action.checks);
      if (results.some(isRedResult) && (action.hunks > 0 || run.settings.hunkCap > 0))
        hunks = await hunksOf(ctx, key, action, { git, base, saved, review, changes, commands });
    }
  } finally {
    await ctx.recorder.io(key, "git.put_back", async () => {
      await git.putFiles(saved, touched);
      await git.deleteRef(ref);
    });
  }
  return { ...answer(results, passedAsTheyWere, hunks), at: await now(ctx, key) };
}

const isRedResult = (r: CheckResult) => !r.passed && r.skipped !== true;

/** The hunk tier of a witnessed change, in the tree with its judges as they were (see hunks.ts). */
async function hunksOf(
  ctx: DriveContext,
  key: string,
  action: Extract<RunAction, { kind: "witness" }>,
  at: {
    git: Git;
    base: string;
    saved: string;
    review: JudgeReview;
    changes: { path: string; gone: boolean; added: boolean }[];
    commands: string[];
  },
): Promise<HunkWitness> {
  const { git, base, saved, review } = at;
  // The behaviour back as the agent left it; a file whose judge part is put back is no hunk of it.
  const files = at.changes.filter(
    (c) => review.behaviour.includes(c.path) && review.rewrite[c.path] === undefined,
  );
  await ctx.recorder.io(key, "git.put_back_behaviour", async () => {
    await git.putFiles(saved, review.behaviour);
    await judgesAsTheyWere(git, base, review);
  });
  return ctx.recorder.io(key, "hunks", () => {
    const cache = new HunkCache(join(ctx.root, ".reins", "witness-cache.json"));
    return hunkTier({
      git,
      base,
      saved,
      files,
      cap: action.hunks,
      commands: at.commands.join("\0"),
      cache,
      scratch: join(ctx.dir, `hunk-${Buffer.from(action.task).toString("hex")}.patch`),
      run: () =>
        runChecks(defs(state(ctx), action.checks), {
          cwd: git.cwd,
          ...(ctx.signal !== undefined ? { signal: ctx.signal } : {}),
        }),
    }).finally(() => cache.save());
  });
}

/**
 * Puts back every change a killed run left set aside (see witness): in the tree `treeOf` gives for its task
 * (the project, or the task's worktree), the files named in the saved commit, as it holds them. Returns the
 * tasks whose change was put back.
 */
export async function restoreAside(
  root: string,
  run: string,
  treeOf: (task: string) => string,
): Promise<string[]> {
  const restored: string[] = [];
  const refs = new Git(root);
  for (const { ref, sha } of await refs.refs(`refs/reins/${run}/aside/`)) {
    const task = Buffer.from(ref.slice(ref.lastIndexOf("/") + 1), "hex").toString();
    const named = (await refs.message(sha)).split("\n").find((line) => line.startsWith("["));
    const files = named === undefined ? [] : (JSON.parse(named) as string[]);
    await new Git(treeOf(task)).putFiles(sha, files);
    await refs.deleteRef(ref);
    restored.push(task);
  }
  return restored;
}

function commitMessage(ctx: DriveContext, run: RunState, task: string): string {
  const node = run.nodes[task];
  const t = run.tasks[task];
  const evidence = (t?.lastChecks ?? []).map(
    (c) =>
      `- ${c.name} (${c.tier}): ${c.skipped === true ? "skipped" : c.passed ? "passed" : "failed"}${c.tests !== undefined ? `, ${c.tests.passed} tests passed` : ""}`,
  );
  return [
    `${task}: ${node?.title ?? task}`,
    "",
    `Done by ${ctx.meta.agent} in ${t?.attempts ?? 0} iteration(s), verified by reins:`,
    ...(evidence.length > 0 ? evidence : ["- no checks named"]),
    "",
    `Reins-Task: ${ctx.meta.run}/${task}`,
  ].join("\n");
}

/** The root tree's git work, one at a time per run. */
const rootQueues = new WeakMap<DriveContext, Promise<unknown>>();

/**
 * Runs `work` on the root tree after the root tree work before it: with `--wip`, two tasks that finish at once
 * would cherry-pick into the root's index together, and git refuses the second (its index locked, or the
 * first's files half written: "your local changes would be overwritten").
 */
function inRoot<T>(ctx: DriveContext, work: () => Promise<T>): Promise<T> {
  const next = (rootQueues.get(ctx) ?? Promise.resolve()).then(work, work);
  rootQueues.set(
    ctx,
    next.catch(() => undefined),
  );
  return next;
}

async function commit(ctx: DriveContext, key: string, ref: number, task: string): Promise<RunEvent> {
  const run = state(ctx);
  const message = commitMessage(ctx, run, task);
  const tree = await treeOf(ctx, key, task);
  const made = await ctx.recorder.io(key, "git.commit", () =>
    ctx.git(tree.cwd).commitAll(message, { allowEmpty: true }),
  );
  let sha = made ?? "";
  if (ctx.meta.worktrees) {
    const picked = await inRoot(ctx, () =>
      ctx.recorder.io(key, "git.cherry_pick", () => ctx.git(ctx.root).cherryPick(sha)),
    );
    if (!picked.ok) {
      await dropTree(ctx, key, task);
      return {
        kind: "commit.failed",
        ref,
        at: await now(ctx, key),
        task,
        reason: "its change conflicts with a task committed meanwhile",
        conflict: true,
      };
    }
    sha = picked.sha;
    await dropTree(ctx, key, task);
  }
  await ctx.recorder.io(key, "guard.task_end", () => ctx.guard.taskEnded(task, "done", Date.now()));
  ctx.tip = sha;
  return { kind: "task.committed", ref, at: await now(ctx, key), task, commit: sha };
}

async function rollback(ctx: DriveContext, key: string, ref: number, task: string): Promise<RunEvent> {
  let to: string;
  if (ctx.meta.worktrees) {
    await dropTree(ctx, key, task);
    to = await ctx.recorder.io(key, "git.head", () => headOf(ctx.git(ctx.root)));
  } else {
    // The last green commit reins made (or the run's start), never whatever HEAD an agent left.
    const tip = ctx.tip;
    to = await ctx.recorder.io(key, "git.head", () => Promise.resolve(tip));
    await ctx.recorder.io(key, "git.reset", () => ctx.git(ctx.root).resetHard(to));
  }
  await ctx.recorder.io(key, "guard.task_end", () => ctx.guard.taskEnded(task, "failed", Date.now()));
  return { kind: "task.rolled_back", ref, at: await now(ctx, key), task, to };
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, ms));
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Carries out one action and returns the event that answers it. */
export async function perform(ctx: DriveContext, key: string, action: RunAction): Promise<RunEvent> {
  switch (action.kind) {
    case "check_noop":
      return {
        kind: "noop.checked",
        ref: action.ref,
        task: action.task,
        results: await checks(ctx, key, action.task, action.checks),
        at: await now(ctx, key),
      };
    case "run_agent":
      return runAgent(ctx, key, action);
    case "run_checks": {
      const results = await checks(ctx, key, action.task, action.checks);
      await ctx.recorder.io(key, "guard.checks", () => ctx.guard.verified(action.task, results, Date.now()));
      return { kind: "checks.ran", ref: action.ref, task: action.task, results, at: await now(ctx, key) };
    }
    case "witness":
      return witness(ctx, key, action);
    case "commit":
      return commit(ctx, key, action.ref, action.task);
    case "rollback":
      return rollback(ctx, key, action.ref, action.task);
    case "wait": {
      const at = await now(ctx, key);
      if (!ctx.recorder.replaying) await sleep(action.until - at, ctx.signal);
      return { kind: "clock.ticked", ref: action.ref, at: Math.max(action.until, await now(ctx, key)) };
    }
    case "write_report": {
      const path = await ctx.recorder.io(key, "report", () => ctx.writeReport(state(ctx)));
      return { kind: "report.written", ref: action.ref, path, at: await now(ctx, key) };
    }
    case "finish":
      throw new Error("finish is not carried out");
    default:
      return assertNever(action);
  }
}
