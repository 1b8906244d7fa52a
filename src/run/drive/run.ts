/** Starting, resuming and replaying a run of `reins run`: the setup around the driver. */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { begin, resolveSettings } from "../control/index.js";
import type { RunSettingsInput } from "../control/index.js";
import type { CheckDef, PlanNode, RunDecision, RunEvent, RunState } from "../control/types.js";
import { ReinsError } from "../../base/core/errors.js";
import { MAX_RUN_CHECKPOINT } from "../../base/core/stored-run.js";
import { dirtyTreeLine } from "../../base/config/local-files.js";
import type { Policy } from "../../base/core/policy.js";
import type { Store, StoredRun } from "../../base/core/store.js";
import { createGovernor, type Governor } from "../../guard/governor.js";
import { reinsDir } from "../../base/config/reins-dir.js";
import { Spool } from "../../base/store/spool.js";
import { restoreAside, type DriveContext } from "./actions.js";
import { lockRun } from "./run-lock.js";
import type { AgentRunner } from "../agents/runner.js";
import { checkpointFrom } from "./checkpoint.js";
import { namesSpec, specHashes } from "./drift.js";
import { drive, type DriveEnd } from "./drive.js";
import { Git } from "../git/git.js";
import { runGuard, type RunGuard } from "./run-guard.js";
import { liveRecorder, replayRecorder, type Recorder } from "./recorder.js";
import { approvalsFor, awaitingApproval } from "./approvals.js";
import { buildReport, writeReportFiles } from "./report.js";
import { containment, unboxableWhy, type ContainMode, type Containment } from "./agent-box.js";
import {
  readRunTrace,
  runDir,
  TraceWriter,
  type ReadTrace,
  type RunMeta,
  type RunStartOptions,
} from "./run-trace.js";

/** A loaded plan, as the driver needs it. */
export interface PlanInput {
  /** The plan file, relative to the project. */
  file: string;
  nodes: PlanNode[];
  checks: CheckDef[];
  settings: RunSettingsInput;
}

/**
 * How long a driven agent may print nothing before it is stopped as hung and retried: ten minutes, not
 * fewer, since an agent prints nothing while a tool it called runs (a long test suite, a build).
 */
export const DEFAULT_AGENT_IDLE_MS = 10 * 60_000;

/** What every way of running shares. */
export interface RunOptions {
  root: string;
  store: Store;
  policy: Policy;
  runner: AgentRunner;
  /** @default 30 minutes */
  agentTimeoutMs?: number;
  /** How long an agent may print nothing before it is stopped as hung. @default DEFAULT_AGENT_IDLE_MS */
  agentIdleMs?: number;
  signal?: AbortSignal;
  progress?: (state: RunState, decisions: RunDecision[]) => void;
  /** One line to tell the person (a resume undoing commits reins did not make). @default nothing */
  onNote?: (line: string) => void;
  /**
   * Whether the agent works in a box (docs/driven-boundary.md): where one can be had (`auto`), refused
   * without one (`required`), or deliberately not (`off`). Said at the start and in the report.
   * @default "auto"
   */
  contain?: ContainMode;
}

/**
 * The run's box, tried once (a trivial box made as the agent's will be); a run without one says so in one
 * line at once, and a usage error when `required`.
 */
function containRun(options: RunOptions, plan: string): Containment {
  const mode = options.contain ?? "auto";
  const place = { root: options.root, cwd: options.root, plan, env: process.env };
  const made = containment(mode, place, options.runner.name, unboxableWhy(options.runner));
  if (!made.contained && mode === "required")
    throw new ReinsError("usage", `--require-contained: ${made.line}`);
  // Said at once only when the agent is not contained: the report says it either way.
  if (!made.contained) options.onNote?.(`reins: ${made.line}`);
  return made;
}

/** How a run came out. */
export interface RunOutcome extends DriveEnd {
  run: string;
  /** The project the run worked in. */
  root: string;
  meta: RunMeta;
  /** The report's path, once written. */
  report: string | null;
}

/** The governor a run records through: the run's store and policy, spooling to `.reins/spool` when it is down. */
export function runGovernor(options: Pick<RunOptions, "store" | "policy" | "root">): Governor {
  return createGovernor({
    store: options.store,
    policy: options.policy,
    spool: new Spool(join(reinsDir(options.root), "spool")),
  });
}

function newRunId(now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, "").replace(/\..*$/, "").replace("T", "-");
  return `${stamp}-${randomBytes(3).toString("hex")}`;
}

function aborted(signal: AbortSignal | undefined): Promise<null> {
  return new Promise((resolve) => {
    if (signal === undefined) return;
    if (signal.aborted) resolve(null);
    signal.addEventListener("abort", () => resolve(null), { once: true });
  });
}

function context(
  options: RunOptions,
  meta: RunMeta,
  recorder: Recorder,
  trace: TraceWriter | null,
  replay: ReadTrace | null,
  guard: RunGuard,
  box: Containment | null,
): DriveContext {
  const dir = runDir(options.root, meta.run);
  const ctx: DriveContext = {
    meta,
    root: options.root,
    dir,
    recorder,
    trace,
    replay: replay === null ? null : { steps: replay.steps },
    store: options.store,
    runner: options.runner,
    guard,
    git: (cwd) => new Git(cwd),
    keys: { next: 0, step: 0 },
    worktrees: new Map(),
    state: null,
    lastDiff: new Map(),
    tip: meta.base,
    trusted: null,
    spec: null,
    instructions: new Map(),
    signal: options.signal,
    aborted: aborted(options.signal),
    agentTimeoutMs: options.agentTimeoutMs ?? 30 * 60_000,
    agentIdleMs: options.agentIdleMs ?? DEFAULT_AGENT_IDLE_MS,
    progress: options.progress ?? (() => undefined),
    box,
    resumeEvent: async (key, state) => {
      // The tests people approved since the run stopped (read only when a task awaits one: older traces
      // have no such read).
      const approvals =
        awaitingApproval(state).length === 0
          ? []
          : await recorder.io(key, "store.task_approvals", () =>
              approvalsFor(options.store, meta.run, state),
            );
      const approved = approvals.length > 0 ? { approvals } : {};
      // A run that kept its branch's tip trusts only the commit reins made and had not recorded yet (see
      // trustedTip); an older one looks for each open task's trailer, as it always did.
      if (ctx.trusted !== null) {
        const trusted = ctx.trusted;
        const commits = await recorder.io(key, "git.trusted_commits", () => Promise.resolve(trusted));
        const at = await recorder.io(key, "clock", () => Promise.resolve(Date.now()));
        return { kind: "run.resumed", at, commits, ...approved };
      }
      const commits: Record<string, string> = {};
      for (const task of Object.keys(state.tasks)) {
        const t = state.tasks[task];
        if (
          t === undefined ||
          t.status === "done" ||
          t.status === "canceled" ||
          (t.status === "failed" && t.permanent)
        )
          continue;
        const sha = await recorder.io(key, "git.find_commit", () =>
          new Git(options.root).findCommit(`Reins-Task: ${meta.run}/${task}`),
        );
        if (sha !== null) commits[task] = sha;
      }
      const at = await recorder.io(key, "clock", () => Promise.resolve(Date.now()));
      return { kind: "run.resumed", at, commits, ...approved };
    },
    writeReport: (state) => {
      const read = readRunTrace(join(dir, "trace.jsonl"));
      return Promise.resolve(relative(options.root, writeReportFiles(dir, buildReport(meta, state, read))));
    },
  };
  return ctx;
}

function finish(ctx: DriveContext, end: DriveEnd): RunOutcome {
  ctx.trace?.close();
  const report = join(ctx.dir, "report.md");
  return {
    ...end,
    run: ctx.meta.run,
    root: ctx.root,
    meta: ctx.meta,
    report: existsSync(report) ? relative(ctx.root, report) : null,
  };
}

/** Starts a new run of `plan`: refuses a dirty tree, works on a new branch `reins/<run>`. */
export async function startRun(
  options: RunOptions & {
    plan: PlanInput;
    wip?: number;
    maxIterations?: number;
    started?: RunStartOptions;
    /** Let tasks no check verifies run; the run then ends unverified. */
    unverified?: boolean;
  },
): Promise<RunOutcome> {
  const git = new Git(options.root);
  if (!(await git.isRepo()))
    throw new ReinsError(
      "usage",
      `${options.root} is not a git repository: reins run commits each task it proves, so it needs one (git init)`,
    );
  const dirty = await git.dirtyFiles();
  if (dirty.length > 0) throw new ReinsError("usage", dirtyTreeLine(options.root, dirty, "reins run"));
  const box = containRun(options, options.plan.file);
  const settings = resolveSettings(
    {
      ...options.plan.settings,
      ...(options.wip !== undefined ? { wip: options.wip } : {}),
      ...(options.maxIterations !== undefined ? { maxIterations: options.maxIterations } : {}),
    },
    options.plan.file,
  );
  const now = Date.now();
  const run = newRunId(now);
  const base = await git.head();
  if (base === null)
    throw new ReinsError(
      "usage",
      `${options.root} has no commit yet: commit the project first, so reins has a green point to start from`,
    );
  const event: RunEvent = {
    kind: "run.started",
    at: now,
    run,
    nodes: options.plan.nodes,
    checks: options.plan.checks,
    settings,
    ...(options.unverified === true ? { unverified: true } : {}),
  };
  // A plan too big for the store is refused now, not once its branch is made and its first checkpoint
  // fails: the run's record starts as the plan's state and grows as tasks run, so it may take half.
  const size = JSON.stringify(begin(event).state).length;
  if (size > MAX_RUN_CHECKPOINT / 2)
    throw new ReinsError(
      "usage",
      `the plan ${options.plan.file} is too big to run: its run's record starts at ${size.toLocaleString("en")} characters, over half the ${MAX_RUN_CHECKPOINT.toLocaleString("en")} a store keeps for a run (the rest is room for what the run adds); split it into smaller plans`,
    );
  const branch = `reins/${run}`;
  await git.createBranch(branch, base);
  await git.checkout(branch);
  const dir = runDir(options.root, run);
  mkdirSync(dir, { recursive: true });
  const unlock = lockRun(dir, run);
  const meta: RunMeta = {
    run,
    plan: options.plan.file,
    agent: options.runner.name,
    branch,
    base,
    worktrees: settings.wip > 1,
    version: 1,
    ...(options.started !== undefined ? { options: options.started } : {}),
  };
  const trace = new TraceWriter(join(dir, "trace.jsonl"));
  trace.write({ t: "meta", meta });
  trace.write({ t: "box", line: box.line });
  const guard = runGuard(runGovernor(options), run);
  await guard.started(meta.agent, now);
  const ctx = context(options, meta, liveRecorder(trace), trace, null, guard, box);
  await ctx.recorder.io("begin", "clock", () => Promise.resolve(now));
  // The hashes of the sections the plan names, recorded before the first step: drift is measured from them.
  ctx.spec = await specHashes(ctx.recorder, "begin", options.root, options.plan.nodes);
  try {
    return finish(ctx, await drive(ctx, { state: null, key: "begin", event }));
  } finally {
    unlock();
  }
}

/** The newest unfinished run in the store: what a plain `reins run --resume` goes on with. */
export async function newestUnfinished(store: Store, root: string): Promise<string> {
  // A store shared by several projects (a sqlite: path, Redis) holds their runs too: a run is this
  // project's when its trace is here.
  const open = (await store.runs()).find(
    (r) =>
      (r.status === "running" || r.status === "paused") &&
      existsSync(join(runDir(root, r.id), "trace.jsonl")),
  );
  if (open === undefined)
    throw new ReinsError(
      "usage",
      "no unfinished run of this project to resume (see `reins report` for the runs there are)",
    );
  return open.id;
}

/**
 * The stored record of run `id`, to resume: a usage error when there is none, saying so plainly when the
 * run's trace is here but its record is gone (a store with a TTL, such as Redis, let an ended run go).
 */
export async function storedRun(store: Store, root: string, id: string): Promise<StoredRun> {
  const stored = await store.run(id);
  if (stored !== null) return stored;
  const trace = join(runDir(root, id), "trace.jsonl");
  if (existsSync(trace))
    throw new ReinsError(
      "usage",
      `run ${id} can no longer be resumed: its record has expired from ${store.location} (its trace is still at ${trace})`,
    );
  throw new ReinsError("usage", `no run ${id} in ${store.location}`);
}

/** Resumes a run from its last checkpoint in the store (the newest unfinished run when `run` is omitted). */
export async function resumeRun(options: RunOptions & { run?: string }): Promise<RunOutcome> {
  const id = options.run ?? (await newestUnfinished(options.store, options.root));
  const stored = await storedRun(options.store, options.root, id);
  const checkpoint = checkpointFrom(stored);
  if (stored.status === "proven")
    throw new ReinsError(
      "usage",
      `run ${id} is done, proven; nothing to resume (its report: reins report ${id})`,
    );
  const { meta } = checkpoint;
  const dir = runDir(options.root, meta.run);
  const unlock = lockRun(dir, meta.run);
  try {
    // The trace is checked before anything is touched: a damaged one is refused, never padded or extended.
    const tracePath = join(dir, "trace.jsonl");
    checkTrace(tracePath, checkpoint.traceBytes, meta.run);
    const box = containRun(options, meta.plan);
    const git = new Git(options.root);
    if ((await git.currentBranch()) !== meta.branch) {
      const dirty = await git.dirtyFiles();
      if (dirty.length > 0)
        throw new ReinsError(
          "usage",
          `the working tree has uncommitted changes and is not on the run's branch ${meta.branch}: commit or stash them first`,
        );
      await git.checkout(meta.branch);
    }
    // A run killed during a counterfactual left a task's change set aside: it is put back before anything.
    await restoreAside(options.root, meta.run, (task) => checkpoint.worktrees[task]?.path ?? options.root);
    const trust = checkpoint.tip === undefined ? null : await trustedTip(git, meta, checkpoint);
    if (trust !== null && trust.undone !== "") options.onNote?.(trust.undone);
    const trace = new TraceWriter(tracePath, checkpoint.traceBytes);
    trace.write({ t: "box", line: box.line });
    const ctx = context(
      options,
      meta,
      liveRecorder(trace),
      trace,
      null,
      runGuard(runGovernor(options), meta.run),
      box,
    );
    ctx.keys = { ...checkpoint.keys };
    ctx.spec = checkpoint.spec ?? null;
    ctx.tip = checkpoint.tip ?? meta.base;
    ctx.trusted = trust?.commits ?? null;
    for (const [task, tree] of Object.entries(checkpoint.worktrees)) ctx.worktrees.set(task, tree);
    // A paused run goes on only when the person has acted; the first agent call checks again.
    const state: RunState = { ...checkpoint.state, paused: null };
    const key = `r${state.seq}`;
    const event = await ctx.resumeEvent(key, state);
    return finish(ctx, await drive(ctx, { state, key, event }));
  } finally {
    unlock();
  }
}

/**
 * Refuses to resume from a trace that does not hold the `bytes` the checkpoint stands for, whole: shorter
 * (padding it would write NUL bytes into it) or damaged within them. One line, before anything runs.
 */
function checkTrace(path: string, bytes: number, run: string): void {
  const fix = `the run cannot be resumed (start it again, or see its report: reins report ${run})`;
  if (!existsSync(path)) throw new ReinsError("invalid_trace", `${path} is missing: ${fix}`);
  const size = statSync(path).size;
  if (size < bytes)
    throw new ReinsError(
      "invalid_trace",
      `${path} holds ${size} bytes, less than the ${bytes} its checkpoint stands for: ${fix}`,
    );
  const head = readFileSync(path).subarray(0, bytes).toString("utf8");
  head.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      JSON.parse(line);
    } catch {
      throw new ReinsError("invalid_trace", `${path}:${i + 1} is damaged (not JSON): ${fix}`);
    }
  });
}

/**
 * What a resumed run may take from its branch: the commits its checkpoint recorded (the tip), and one more
 * only when it is reins' own commit of a task whose commit was in flight when the run stopped (made, not
 * yet recorded). Any other commit since (a person's while the run was paused, or one an agent made before
 * the run was killed, a `Reins-Task` trailer forged or not) is kept, but closes no task: the checks judge
 * the tree as it is, and one line says so.
 */
async function trustedTip(
  git: Git,
  meta: RunMeta,
  checkpoint: ReturnType<typeof checkpointFrom>,
): Promise<{ commits: Record<string, string>; undone: string }> {
  const tip = checkpoint.tip ?? meta.base;
  const head = await git.head();
  if (head === null || head === tip) return { commits: {}, undone: "" };
  const parent = (await git.parents(head))[0];
  if (parent === tip) {
    const message = await git.message(head);
    const task = Object.keys(checkpoint.state.inFlight).find(
      (t) => checkpoint.state.inFlight[t] === "commit" && message.includes(`Reins-Task: ${meta.run}/${t}\n`),
    );
    if (task !== undefined) return { commits: { [task]: head }, undone: "" };
  }
  const count = (await git.revList(`${tip}..${head}`)).length;
  return {
    commits: {},
    undone: `reins: the run's branch ${meta.branch} has ${count} commit(s) since reins' last (${tip.slice(0, 12)}): kept, but none closes a task; the checks judge the tree as it is`,
  };
}

/** Replays a recorded run with no agent, no commands and no store, and checks every step against the record. */
export async function replayRun(
  options: Omit<RunOptions, "runner"> & { trace: string; runner: AgentRunner },
): Promise<RunOutcome & { steps: number }> {
  const read = readRunTrace(options.trace);
  const first = read.steps[0];
  if (first?.event.kind !== "run.started")
    throw new ReinsError("invalid_trace", `${options.trace}: the trace does not start with run.started`);
  const noGuard: RunGuard = {
    scope: `run:${read.meta.run}`,
    paused: () => Promise.resolve(null),
    started: () => Promise.resolve(),
    taskStarted: () => Promise.resolve({ stop: null, advice: [] }),
    usage: () => Promise.resolve({ stop: null, advice: [] }),
    verified: () => Promise.resolve({ stop: null, advice: [] }),
    taskEnded: () => Promise.resolve({ stop: null, advice: [] }),
  };
  const ctx = context(options, read.meta, replayRecorder(read), null, read, noGuard, null);
  // A run that kept its branch's tip resumed from the commits it trusted; the replay reads them back.
  const trusted = [...read.io.values()].some((lines) => lines.some((l) => l.op === "git.trusted_commits"));
  if (trusted) ctx.trusted = {};
  ctx.writeReport = () => Promise.reject(new ReinsError("invalid_trace", "a replay never writes"));
  // A trace recorded before spec drift existed has no hashes at its start: nothing to read back then.
  const recorded = read.io.get(first.key)?.some((line) => line.op === "spec.hashes") === true;
  if (recorded && namesSpec(first.event.nodes)) {
    // The start's interactions in the order the run made them: its clock (in the event already), then the hashes.
    await ctx.recorder.io(first.key, "clock", () => Promise.resolve(0));
    ctx.spec = await specHashes(ctx.recorder, first.key, options.root, first.event.nodes);
  }
  const end = await drive(ctx, { state: null, key: first.key, event: first.event });
  return {
    ...end,
    run: read.meta.run,
    root: options.root,
    meta: read.meta,
    report: null,
    steps: ctx.keys.step,
  };
}
