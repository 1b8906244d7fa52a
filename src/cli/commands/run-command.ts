/** `reins run`: drive an agent over a plan, task by task, running the checks itself, until done is proven. */
import { join, relative, resolve } from "node:path";
import type { Command } from "commander";
import { ReinsError } from "../../base/core/errors.js";
import { outcomeOf } from "../../run/control/index.js";
import { runnerFor } from "../../run/agents/index.js";
import { checkpointFrom } from "../../run/drive/checkpoint.js";
import { progressWriter } from "../../run/drive/progress.js";
import { readRunTrace } from "../../run/drive/run-trace.js";
import { DivergenceError } from "../../run/drive/recorder.js";
import { runGuard } from "../../run/drive/run-guard.js";
import { boxArgs, containment, unboxableWhy } from "../../run/drive/agent-box.js";
import type { AgentRunner } from "../../run/agents/runner.js";
import {
  DEFAULT_AGENT_IDLE_MS,
  newestUnfinished,
  replayRun,
  resumeRun,
  runGovernor,
  startRun,
  storedRun,
  type RunOptions,
  type RunOutcome,
} from "../../run/drive/run.js";
import { loadPlan, uncheckedLeaves } from "../../run/plan/index.js";
import { specFileKey } from "../../run/spec/section-hashes.js";
import { advanceSpec } from "../../run/workflow/run-spec.js";
import type { LoadedPolicy } from "../../base/config/load-policy.js";
import { openStore } from "../../base/store/open.js";
import {
  type RunContext,
  PLAN_FILES,
  positiveInt,
  minutesMs,
  findPlan,
  runnerOf,
  DEFAULT_AGENT_TIMEOUT_MS,
  startable,
  exitOf,
  ending,
} from "../run-setup.js";
import { counted } from "../../base/text/plural.js";

/** The flags of `reins run`, as commander reads them. */
interface RunFlags {
  agent?: string;
  wip?: string;
  resume?: string | boolean;
  replay?: string;
  maxIterations?: string;
  agentTimeout?: string;
  agentIdle?: string;
  maxTurns?: string;
  json?: boolean;
  spec?: string;
  request?: string;
  unverified?: boolean;
  tag?: string;
  /** false with `--no-contain`. */
  contain?: boolean;
  requireContained?: boolean;
}

/** The numeric flags of `reins run`, checked, and the agent it names. */
interface RunLimits {
  wip: number | undefined;
  maxIterations: number | undefined;
  maxTurns: number | undefined;
  agentTimeoutMs: number | undefined;
  agentIdleMs: number | undefined;
  agent: string;
}

/** What every run, started or resumed, is driven with: the project, store, policy, stop signal and output. */
type RunCommon = Omit<RunOptions, "runner" | "agentTimeoutMs" | "agentIdleMs">;

/** Registers `reins run`. */
export function registerRunCommand(root: Command, ctx: RunContext): void {
  root
    .command("run")
    .description("drive an agent over a plan, task by task, running the checks itself, until done is proven")
    .argument("[plan]", `the plan (default: the first of ${PLAN_FILES.join(", ")})`)
    .option(
      "--agent <agent>",
      "claude, codex, gemini, copilot, opencode or cmd:<command> (default: claude; a resumed run keeps its own)",
    )
    .option(
      "--spec <file>",
      "spec-driven: assess the spec, its approval and the plan, then draft, wait at the gate, plan or build",
    )
    .option("--request <text>", "with --spec, when the spec does not exist yet: what to build")
    .option("--wip <n>", "tasks in flight at once (above 1, each works in its own git worktree)")
    .option(
      "--resume [run]",
      "go on with a run from its last checkpoint (default: the newest unfinished one)",
    )
    .option(
      "--replay <trace>",
      "run the loop again on a recorded trace, with no agent and no commands; fail on the first divergence",
    )
    .option("--max-iterations <n>", "agent iterations of the whole run before it ends without proof")
    .option("--agent-timeout <minutes>", "how long one agent iteration may take (default: 30)")
    .option(
      "--agent-idle <minutes>",
      "how long an agent may print nothing before it is stopped as hung and retried (default: 10)",
    )
    .option("--max-turns <n>", "model round trips one Claude Code iteration may take (its --max-turns)")
    .option("--unverified", "let tasks no check verifies run (the run then ends unverified, never proven)")
    .option("--tag <name>", "for a task-master file with several tags: the tag to run (default: master)")
    .option(
      "--no-contain",
      "run the agent without its bubblewrap box (said at the start and in the report: not contained)",
    )
    .option("--require-contained", "refuse to run when the agent cannot work in a bubblewrap box")
    .option("--json", "print the outcome as JSON instead of progress")
    .action((planArg: string | undefined, opts: RunFlags) => runPlan(ctx, planArg, opts));
}

/** `reins run [plan]`: a replay, a spec's next step, a resumed run or a new one, and its outcome printed. */
async function runPlan(ctx: RunContext, planArg: string | undefined, opts: RunFlags): Promise<void> {
  const { io } = ctx;
  const loaded = ctx.loaded();
  const limits: RunLimits = {
    wip: positiveInt("--wip", opts.wip),
    maxIterations: positiveInt("--max-iterations", opts.maxIterations),
    maxTurns: positiveInt("--max-turns", opts.maxTurns),
    agentTimeoutMs: minutesMs("--agent-timeout", opts.agentTimeout),
    agentIdleMs: minutesMs("--agent-idle", opts.agentIdle),
    agent: opts.agent ?? "claude",
  };

  if (opts.replay !== undefined) return replay(ctx, loaded, opts.replay, opts.json === true);

  if (opts.contain === false && opts.requireContained === true)
    throw new ReinsError("usage", "--no-contain and --require-contained ask for opposite things: give one");
  if (opts.spec === undefined && opts.request !== undefined)
    throw new ReinsError("usage", "--request goes with --spec");
  if (opts.spec !== undefined && opts.resume !== undefined)
    throw new ReinsError(
      "usage",
      "--spec assesses where the work stands and resumes on its own: leave out --resume",
    );
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const store = await openStore(loaded.storeSpec, loaded.root);
  try {
    const progress =
      opts.json === true ? undefined : progressWriter((text) => io.stdout(text), io.terminal === true);
    const common: RunCommon = {
      root: loaded.root,
      store,
      policy: loaded.policy,
      signal: controller.signal,
      ...(progress !== undefined ? { progress } : {}),
      onNote: (line: string) => io.stderr(`${line}\n`),
      contain: opts.contain === false ? "off" : opts.requireContained === true ? "required" : "auto",
    };
    let resume = opts.resume;
    let planFile = planArg;
    if (opts.spec !== undefined) {
      const step = await specStep(ctx, common, opts.spec, planArg, opts, limits);
      if (step === null) return;
      if (step.resume !== null) resume = step.resume;
      else planFile = relative(io.cwd, step.plan);
    }
    const outcome =
      resume !== undefined
        ? await resumeOutcome(ctx, common, resume, opts, limits)
        : await startOutcome(ctx, common, planFile, opts, limits);
    ctx.result.code = exitOf(outcome);
    if (opts.json === true)
      io.stdout(
        `${JSON.stringify({ run: outcome.run, branch: outcome.meta.branch, outcome: outcomeOf(outcome.state, outcome.finished), proven: ctx.result.code === 0, finished: outcome.finished, report: outcome.report, paused: outcome.state.paused, tasks: Object.fromEntries(Object.entries(outcome.state.tasks).map(([id, t]) => [id, { status: t.status, attempts: t.attempts, commit: t.commit, noop: t.noop, evidence: t.evidence ?? null }])) })}\n`,
      );
    else io.stdout(ending(outcome, loaded.root));
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    await store.close();
  }
}

/** `--replay <trace>`: the loop again on a recorded trace in a memory store; exit 1 on the first divergence. */
async function replay(ctx: RunContext, loaded: LoadedPolicy, trace: string, json: boolean): Promise<void> {
  const { io } = ctx;
  const read = readRunTrace(resolve(io.cwd, trace));
  const store = await openStore("memory", loaded.root);
  let replayed: Awaited<ReturnType<typeof replayRun>>;
  try {
    replayed = await replayRun({
      root: loaded.root,
      store,
      policy: loaded.policy,
      trace: resolve(io.cwd, trace),
      runner: runnerFor(read.meta.agent),
    });
  } catch (error) {
    if (!(error instanceof DivergenceError)) throw error;
    io.stderr(`reins: divergence: ${error.message}\n`);
    ctx.result.code = 1;
    return;
  }
  const text = `replayed run ${replayed.run}: ${counted(replayed.steps, "step")}, every event, decision and action as recorded\n`;
  io.stdout(json ? `${JSON.stringify({ run: replayed.run, steps: replayed.steps, same: true })}\n` : text);
}

/**
 * `--spec <file>`: the workflow's next step. Null when it ends the command (a draft, the gate, a failure,
 * or nothing to build; the exit code and line are set), else the run to resume or the plan to build.
 */
async function specStep(
  ctx: RunContext,
  common: RunCommon,
  specFile: string,
  planArg: string | undefined,
  opts: RunFlags,
  limits: RunLimits,
): Promise<{ resume: string | null; plan: string } | null> {
  const { io } = ctx;
  const { root, store, policy } = common;
  const specPath = resolve(io.cwd, specFile);
  const spec = specFileKey(relative(root, specPath));
  const runner = startable(runnerOf(limits.agent, root, limits.maxTurns, undefined), root, process.env);
  const step = await advanceSpec({
    root,
    store,
    policy,
    spec,
    plan: planArg !== undefined ? resolve(io.cwd, planArg) : join(root, PLAN_FILES[0]!),
    ...(opts.request !== undefined ? { request: opts.request } : {}),
    ...workflowBox(ctx, common, runner),
    guard: runGuard(runGovernor({ store, policy, root }), "workflow", `reins run --spec ${spec}`),
    now: Date.now,
    agentTimeoutMs: limits.agentTimeoutMs ?? DEFAULT_AGENT_TIMEOUT_MS,
    agentIdleMs: limits.agentIdleMs ?? DEFAULT_AGENT_IDLE_MS,
    ...(common.signal !== undefined ? { signal: common.signal } : {}),
    say: (line) => {
      if (opts.json !== true) io.stdout(`${line}\n`);
    },
  });
  if (step.kind !== "build") {
    ctx.result.code = step.kind === "done" ? 0 : 1;
    const line =
      step.kind === "gate"
        ? `the spec ${spec} waits for approval: reins approve ${spec} --reason "..."`
        : step.kind === "failed"
          ? `workflow stopped: ${step.message}`
          : `every task of the plan is done, by its commits: nothing to build`;
    io.stdout(
      opts.json === true
        ? `${JSON.stringify({ workflow: step.kind, phase: "assessment" in step ? step.assessment.phase : null, step: "assessment" in step ? step.assessment.step : null, message: line })}\n`
        : `${line}\n`,
    );
    return null;
  }
  return { resume: step.resume, plan: step.plan };
}

/**
 * The box of the spec workflow's agent (drafting the spec, writing the plan: both stay writable), or, when
 * it cannot have one, nothing and one line saying so (docs/driven-boundary.md).
 */
function workflowBox(
  ctx: RunContext,
  common: RunCommon,
  runner: AgentRunner,
): { runner: AgentRunner; box?: string[] } {
  const mode = common.contain ?? "auto";
  const place = { root: common.root, cwd: common.root, env: process.env };
  const made = containment(mode, place, runner.name, unboxableWhy(runner));
  if (made.contained) return { runner, box: [made.bwrap, ...boxArgs(place)] };
  if (mode === "required") throw new ReinsError("usage", `--require-contained: ${made.line}`);
  // Said once the agent is about to work: a start that stops before (at the gate, say) runs none.
  let said = false;
  const run: AgentRunner["run"] = (request) => {
    if (!said) ctx.io.stderr(`reins: the spec workflow's agent: ${made.line}\n`);
    said = true;
    return runner.run(request);
  };
  return { runner: { ...runner, run } };
}

/** `--resume [run]`: the run goes on as it was started, its agent and options, whatever this command line says. */
async function resumeOutcome(
  ctx: RunContext,
  common: RunCommon,
  resume: string | boolean,
  opts: RunFlags,
  limits: RunLimits,
): Promise<RunOutcome> {
  const { io } = ctx;
  const { root, store } = common;
  const { maxTurns, agentTimeoutMs, agentIdleMs } = limits;
  const id = typeof resume === "string" ? resume : await newestUnfinished(store, root);
  const stored = await storedRun(store, root, id);
  const meta = checkpointFrom(stored).meta;
  const kept = meta.options ?? {};
  const differs = [
    opts.agent !== undefined && opts.agent !== meta.agent ? `--agent ${opts.agent}` : null,
    maxTurns !== undefined && maxTurns !== kept.maxTurns ? `--max-turns ${maxTurns}` : null,
    agentTimeoutMs !== undefined && agentTimeoutMs !== (kept.agentTimeoutMs ?? DEFAULT_AGENT_TIMEOUT_MS)
      ? `--agent-timeout ${opts.agentTimeout}`
      : null,
    agentIdleMs !== undefined && agentIdleMs !== (kept.agentIdleMs ?? DEFAULT_AGENT_IDLE_MS)
      ? `--agent-idle ${opts.agentIdle}`
      : null,
  ].filter((flag) => flag !== null);
  if (differs.length > 0)
    io.stderr(
      `reins: run ${id} goes on as it was started (--agent ${meta.agent}${kept.maxTurns !== undefined ? ` --max-turns ${kept.maxTurns}` : ""}); ${differs.join(", ")} left aside\n`,
    );
  return resumeRun({
    ...common,
    agentTimeoutMs: kept.agentTimeoutMs ?? DEFAULT_AGENT_TIMEOUT_MS,
    agentIdleMs: kept.agentIdleMs ?? DEFAULT_AGENT_IDLE_MS,
    runner: startable(runnerOf(meta.agent, root, kept.maxTurns, resolve(root, meta.plan)), root, process.env),
    run: id,
  });
}

/** A new run over the plan file (named, or the first of PLAN_FILES); refused when no check verifies its tasks. */
async function startOutcome(
  ctx: RunContext,
  common: RunCommon,
  planFile: string | undefined,
  opts: RunFlags,
  limits: RunLimits,
): Promise<RunOutcome> {
  const { io } = ctx;
  const { root } = common;
  const { wip, maxIterations, maxTurns, agentTimeoutMs, agentIdleMs, agent } = limits;
  const file = findPlan(root, io.cwd, planFile);
  const plan = loadPlan(file, opts.tag !== undefined ? { tag: opts.tag } : {});
  if (opts.json !== true) for (const note of plan.notes) io.stdout(`note: ${note}\n`);
  const bare = uncheckedLeaves(plan);
  if (bare.length > 0 && opts.unverified !== true)
    throw new ReinsError(
      "usage",
      `no check verifies ${bare.length === plan.nodes.filter((n) => n.children.length === 0).length ? "any task" : `task(s) ${bare.slice(0, 5).join(", ")}${bare.length > 5 ? ` and ${bare.length - 5} more` : ""}`} of ${relative(root, file)}, so nothing could prove them done: give them checks (a native plan's \`checks:\`; for an imported file, a reins.plan.yaml with \`import:\` and \`checks:\`), or run with --unverified to let the agent work unverified`,
    );
  return startRun({
    ...common,
    agentTimeoutMs: agentTimeoutMs ?? DEFAULT_AGENT_TIMEOUT_MS,
    agentIdleMs: agentIdleMs ?? DEFAULT_AGENT_IDLE_MS,
    started: {
      ...(maxTurns !== undefined ? { maxTurns } : {}),
      ...(agentTimeoutMs !== undefined ? { agentTimeoutMs } : {}),
      ...(agentIdleMs !== undefined ? { agentIdleMs } : {}),
    },
    runner: startable(runnerOf(agent, root, maxTurns, file), root, process.env),
    plan: {
      file: relative(root, file),
      nodes: plan.nodes,
      checks: plan.checks,
      settings: plan.settings,
    },
    ...(wip !== undefined ? { wip } : {}),
    ...(maxIterations !== undefined ? { maxIterations } : {}),
    ...(opts.unverified === true ? { unverified: true } : {}),
  });
}
