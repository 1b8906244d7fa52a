/** `reins run` and `reins report`: drive an agent over a plan until done is proven, and read the evidence. */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, relative, resolve } from "node:path";
import type { Command } from "commander";
import { ReinsError } from "../core/errors.js";
import { outcomeOf } from "../control/index.js";
import { runnerFor } from "../drive/agents/index.js";
import type { AgentRunner } from "../drive/agents/runner.js";
import { claudeRunArgs, codexRunArgs, geminiRunEnv } from "../drive/run-hooks.js";
import { codexRunEnv } from "../drive/codex-home.js";
import { codexHome } from "../hooks/trust.js";
import { binPath } from "./commands/bin-path.js";
import { checkpointFrom } from "../drive/checkpoint.js";
import { progressWriter } from "../drive/progress.js";
import { buildReport, reportMarkdown, writeReportFiles } from "../drive/report.js";
import { readRunTrace, runDir } from "../drive/run-trace.js";
import { Divergence } from "../drive/recorder.js";
import { runGuard } from "../drive/guard.js";
import {
  DEFAULT_AGENT_IDLE_MS,
  newestUnfinished,
  replayRun,
  resumeRun,
  runGovernor,
  startRun,
  type RunOutcome,
} from "../drive/run.js";
import { cannotStart } from "../drive/agents/preflight.js";
import { checkPlan, loadPlan, planCheckText, uncheckedLeaves } from "../plan/index.js";
import { specFileKey } from "../spec/snapshot.js";
import { advanceSpec } from "../workflow/run-spec.js";
import type { LoadedPolicy } from "../config/load-policy.js";
import { openStore } from "../store/open.js";
import type { Io } from "./io.js";
import { table } from "./table.js";

/** What the run commands need from the program. */
export interface RunContext {
  io: Io;
  loaded(): LoadedPolicy & { storeSpec: string };
  result: { code: number };
}

/** Plan files looked for, in order, when none is named. */
export const PLAN_FILES = ["reins.plan.yaml", "reins.plan.yml", "reins.plan.json", "tasks.md", "tasks.json"];

function positiveInt(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1)
    throw new ReinsError("usage", `${name} must be a positive whole number, got "${raw}"`);
  return n;
}

/** A flag given in minutes, in ms: undefined when not given; a usage error unless a positive number. */
function minutesMs(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const minutes = Number(raw);
  if (!Number.isFinite(minutes) || minutes <= 0)
    throw new ReinsError("usage", `${name} must be a positive number of minutes, got "${raw}"`);
  return minutes * 60_000;
}

/** The plan file: `named` (relative to `cwd`), else the first of PLAN_FILES in `root`; a usage error when none. */
export function findPlan(root: string, cwd: string, named: string | undefined): string {
  if (named !== undefined) {
    const path = resolve(cwd, named);
    if (!existsSync(path)) throw new ReinsError("usage", `no plan file ${named}`);
    return path;
  }
  for (const name of PLAN_FILES) if (existsSync(join(root, name))) return join(root, name);
  throw new ReinsError("usage", `no plan: name one, or write ${PLAN_FILES[0]} (see README "Run a plan")`);
}

/**
 * The runner of an agent spec: a driven Claude Code, Codex or Gemini CLI gets reins' hooks and MCP tools (on
 * `plan`) for the run, and Claude Code `--max-turns`. Their iterations run reins' hooks (the run's, or the
 * project's own), which record the session's usage as it goes and so charge the pools: `hooked`, so the
 * run's own record of the spend charges them no second time.
 */
function runnerOf(
  agent: string,
  root: string,
  maxTurns: number | undefined,
  plan: string | undefined,
): AgentRunner {
  if (agent !== "claude" && maxTurns !== undefined)
    throw new ReinsError("usage", `--max-turns applies to --agent claude only, not ${agent}`);
  if (agent === "claude") {
    const runner = runnerFor(agent, {
      args: claudeRunArgs(root, binPath(), plan),
      ...(maxTurns !== undefined ? { maxTurns } : {}),
    });
    return { ...runner, hooked: true };
  }
  if (agent === "codex") {
    const runner = runnerFor(agent, {
      args: codexRunArgs(binPath(), plan),
      env: codexRunEnv(root, binPath(), codexHome(process.env, homedir())),
    });
    return { ...runner, hooked: true };
  }
  if (agent === "gemini") {
    const userHome = process.env.GEMINI_CLI_HOME || homedir();
    return { ...runnerFor(agent, { env: geminiRunEnv(root, binPath(), plan, userHome) }), hooked: true };
  }
  return runnerFor(agent);
}

/** How long one agent iteration may take unless `--agent-timeout` says. */
const DEFAULT_AGENT_TIMEOUT_MS = 30 * 60_000;

/**
 * `runner`, once it is known to be able to start: an agent whose program is missing or not executable ends
 * the run at once with one line (exit 2), before any attempt is spent on it.
 */
function startable(runner: AgentRunner, root: string, env: NodeJS.ProcessEnv): AgentRunner {
  const problem = cannotStart(runner, root, env);
  if (problem !== null) throw new ReinsError("usage", problem);
  return runner;
}

/** The exit code of a run: 0 only when it is proven (every done task's checks witnessed its change). */
function exitOf(outcome: RunOutcome): number {
  return outcomeOf(outcome.state, outcome.finished).kind === "proven" ? 0 : 1;
}

/** The run's closing lines: what was done, the report, and last the outcome with its first cause. */
function ending(outcome: RunOutcome, root: string): string {
  const tasks = Object.values(outcome.state.tasks);
  const done = tasks.filter((t) => t.status === "done").length;
  const lines = [
    `run ${outcome.run}: ${done} of ${tasks.length} task(s) done on branch ${outcome.meta.branch}`,
  ];
  if (outcome.report !== null) lines.push(`report: ${relative(root, resolve(root, outcome.report))}`);
  const end = outcomeOf(outcome.state, outcome.finished);
  lines.push(`${end.kind}: ${end.cause}`);
  return `${lines.join("\n")}\n`;
}

/** Registers `run` and `report`. */
export function registerRunCommands(root: Command, ctx: RunContext): void {
  const { io } = ctx;
  root
    .command("run")
    .description("drive an agent over a plan, task by task, running the checks itself, until done is proven")
    .argument("[plan]", `the plan (default: the first of ${PLAN_FILES.join(", ")})`)
    .option(
      "--agent <agent>",
      "claude, codex, gemini or cmd:<command> (default: claude; a resumed run keeps its own)",
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
    .option("--json", "print the outcome as JSON instead of progress")
    .action(
      async (
        planArg: string | undefined,
        opts: {
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
        },
      ) => {
        const loaded = ctx.loaded();
        const wip = positiveInt("--wip", opts.wip);
        const maxIterations = positiveInt("--max-iterations", opts.maxIterations);
        const maxTurns = positiveInt("--max-turns", opts.maxTurns);
        const agentTimeoutMs = minutesMs("--agent-timeout", opts.agentTimeout);
        const agentIdleMs = minutesMs("--agent-idle", opts.agentIdle);
        const agent = opts.agent ?? "claude";

        if (opts.replay !== undefined) {
          const read = readRunTrace(resolve(io.cwd, opts.replay));
          const store = await openStore("memory", loaded.root);
          let replayed: Awaited<ReturnType<typeof replayRun>>;
          try {
            replayed = await replayRun({
              root: loaded.root,
              store,
              policy: loaded.policy,
              trace: resolve(io.cwd, opts.replay),
              runner: runnerFor(read.meta.agent),
            });
          } catch (error) {
            if (!(error instanceof Divergence)) throw error;
            io.stderr(`reins: divergence: ${error.message}\n`);
            ctx.result.code = 1;
            return;
          }
          const text = `replayed run ${replayed.run}: ${replayed.steps} steps, every event, decision and action as recorded\n`;
          io.stdout(
            opts.json === true
              ? `${JSON.stringify({ run: replayed.run, steps: replayed.steps, same: true })}\n`
              : text,
          );
          return;
        }

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
          const common = {
            root: loaded.root,
            store,
            policy: loaded.policy,
            signal: controller.signal,
            ...(progress !== undefined ? { progress } : {}),
            onNote: (line: string) => io.stderr(`${line}\n`),
          };
          let resume = opts.resume;
          let planFile = planArg;
          if (opts.spec !== undefined) {
            const specPath = resolve(io.cwd, opts.spec);
            const spec = specFileKey(relative(loaded.root, specPath));
            const step = await advanceSpec({
              root: loaded.root,
              store,
              policy: loaded.policy,
              spec,
              plan: planArg !== undefined ? resolve(io.cwd, planArg) : join(loaded.root, PLAN_FILES[0]!),
              ...(opts.request !== undefined ? { request: opts.request } : {}),
              runner: startable(runnerOf(agent, loaded.root, maxTurns, undefined), loaded.root, process.env),
              guard: runGuard(
                runGovernor({ store, policy: loaded.policy, root: loaded.root }),
                "workflow",
                `reins run --spec ${spec}`,
              ),
              now: Date.now,
              agentTimeoutMs: agentTimeoutMs ?? DEFAULT_AGENT_TIMEOUT_MS,
              agentIdleMs: agentIdleMs ?? DEFAULT_AGENT_IDLE_MS,
              signal: controller.signal,
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
              return;
            }
            if (step.resume !== null) resume = step.resume;
            else planFile = relative(io.cwd, step.plan);
          }
          let outcome: RunOutcome;
          if (resume !== undefined) {
            // The run goes on as it was started: its agent and options, whatever this command line says.
            const id = typeof resume === "string" ? resume : await newestUnfinished(store, loaded.root);
            const stored = await store.run(id);
            if (stored === null) throw new ReinsError("usage", `no run ${id} in ${store.location}`);
            const meta = checkpointFrom(stored).meta;
            const kept = meta.options ?? {};
            const differs = [
              opts.agent !== undefined && opts.agent !== meta.agent ? `--agent ${opts.agent}` : null,
              maxTurns !== undefined && maxTurns !== kept.maxTurns ? `--max-turns ${maxTurns}` : null,
              agentTimeoutMs !== undefined &&
              agentTimeoutMs !== (kept.agentTimeoutMs ?? DEFAULT_AGENT_TIMEOUT_MS)
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
            outcome = await resumeRun({
              ...common,
              agentTimeoutMs: kept.agentTimeoutMs ?? DEFAULT_AGENT_TIMEOUT_MS,
              agentIdleMs: kept.agentIdleMs ?? DEFAULT_AGENT_IDLE_MS,
              runner: startable(
                runnerOf(meta.agent, loaded.root, kept.maxTurns, resolve(loaded.root, meta.plan)),
                loaded.root,
                process.env,
              ),
              run: id,
            });
          } else {
            const file = findPlan(loaded.root, io.cwd, planFile);
            const plan = loadPlan(file, opts.tag !== undefined ? { tag: opts.tag } : {});
            if (opts.json !== true) for (const note of plan.notes) io.stdout(`note: ${note}\n`);
            const bare = uncheckedLeaves(plan);
            if (bare.length > 0 && opts.unverified !== true)
              throw new ReinsError(
                "usage",
                `no check verifies ${bare.length === plan.nodes.filter((n) => n.children.length === 0).length ? "any task" : `task(s) ${bare.slice(0, 5).join(", ")}${bare.length > 5 ? ` and ${bare.length - 5} more` : ""}`} of ${relative(loaded.root, file)}, so nothing could prove them done: give them checks (a native plan's \`checks:\`; for an imported file, a reins.plan.yaml with \`import:\` and \`checks:\`), or run with --unverified to let the agent work unverified`,
              );
            outcome = await startRun({
              ...common,
              agentTimeoutMs: agentTimeoutMs ?? DEFAULT_AGENT_TIMEOUT_MS,
              agentIdleMs: agentIdleMs ?? DEFAULT_AGENT_IDLE_MS,
              started: {
                ...(maxTurns !== undefined ? { maxTurns } : {}),
                ...(agentTimeoutMs !== undefined ? { agentTimeoutMs } : {}),
                ...(agentIdleMs !== undefined ? { agentIdleMs } : {}),
              },
              runner: startable(runnerOf(agent, loaded.root, maxTurns, file), loaded.root, process.env),
              plan: {
                file: relative(loaded.root, file),
                nodes: plan.nodes,
                checks: plan.checks,
                settings: plan.settings,
              },
              ...(wip !== undefined ? { wip } : {}),
              ...(maxIterations !== undefined ? { maxIterations } : {}),
              ...(opts.unverified === true ? { unverified: true } : {}),
            });
          }
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
      },
    );

  root
    .command("plan")
    .description("plans without running them")
    .command("check")
    .description(
      "validate a plan or an imported file without running anything: the task tree with deps, the checks per task, the notes, and what reins run would do first",
    )
    .argument("[plan]", `the plan (default: the first of ${PLAN_FILES.join(", ")})`)
    .option("--tag <name>", "for a task-master file with several tags: the tag to read (default: master)")
    .option("--json", "print the check as JSON")
    .action((planArg: string | undefined, opts: { tag?: string; json?: boolean }) => {
      const file = findPlan(ctx.loaded().root, io.cwd, planArg);
      const check = checkPlan(loadPlan(file, opts.tag !== undefined ? { tag: opts.tag } : {}));
      io.stdout(opts.json === true ? `${JSON.stringify(check, null, 2)}\n` : planCheckText(check));
      // Runnable as it is: 0; `reins run` would refuse it for want of checks: 1; invalid: 2 (thrown).
      ctx.result.code = check.unchecked.length > 0 ? 1 : 0;
    });

  root
    .command("report")
    .description(
      "write and print a run's evidence report (.reins/runs/<run>/report.md); without a run, list the runs",
    )
    .argument("[run]", "the run's id")
    .option("--json", "print report.json instead")
    .action(async (id: string | undefined, opts: { json?: boolean }) => {
      const loaded = ctx.loaded();
      const store = await openStore(loaded.storeSpec, loaded.root);
      try {
        if (id === undefined) {
          const runs = await store.runs();
          if (opts.json === true) {
            io.stdout(`${JSON.stringify(runs)}\n`);
            return;
          }
          if (runs.length === 0) {
            io.stdout("no runs yet: start one with `reins run`\n");
            return;
          }
          io.stdout(
            table(
              ["run", "status", "updated", "plan", "tasks"],
              runs.map((r) => [
                r.id,
                r.status,
                new Date(r.updatedAt).toISOString(),
                typeof r.summary.plan === "string" ? r.summary.plan : "",
                JSON.stringify(r.summary.counts ?? {}),
              ]),
            ),
          );
          return;
        }
        const stored = await store.run(id);
        if (stored === null) throw new ReinsError("usage", `no run ${id} in ${store.location}`);
        const checkpoint = checkpointFrom(stored);
        const dir = runDir(loaded.root, id);
        const report = buildReport(checkpoint.meta, checkpoint.state, readRunTrace(join(dir, "trace.jsonl")));
        writeReportFiles(dir, report);
        io.stdout(opts.json === true ? `${JSON.stringify(report, null, 2)}\n` : reportMarkdown(report));
      } finally {
        await store.close();
      }
    });
}
