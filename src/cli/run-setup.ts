/** What `reins run` and its neighbours set up before driving: flags read, the plan found, the agent's runner, and the closing lines. */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, relative, resolve } from "node:path";
import { ReinsError } from "../base/core/errors.js";
import { outcomeOf, type OutcomeKind } from "../run/control/index.js";
import { runnerFor } from "../run/agents/index.js";
import type { AgentRunner } from "../run/agents/runner.js";
import { claudeRunArgs, codexRunArgs, copilotRunEnv, geminiRunEnv } from "../install/driven-hooks.js";
import { codexRunEnv } from "../install/codex-home.js";
import { opencodeRunEnv } from "../install/opencode-run.js";
import { codexHome } from "../install/trust.js";
import { binPath } from "./commands/bin-path.js";
import type { RunOutcome } from "../run/drive/run.js";
import { cannotStart } from "../run/agents/preflight.js";
import type { LoadedPolicy } from "../base/config/load-policy.js";
import type { Io } from "./io.js";

/** What the run commands need from the program. */
export interface RunContext {
  io: Io;
  loaded(): LoadedPolicy & { storeSpec: string };
  result: { code: number };
}

/** Plan files looked for, in order, when none is named. */
export const PLAN_FILES = ["reins.plan.yaml", "reins.plan.yml", "reins.plan.json", "tasks.md", "tasks.json"];

/** A flag that must be a positive whole number: undefined when not given; a usage error otherwise. */
export function positiveInt(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1)
    throw new ReinsError("usage", `${name} must be a positive whole number, got "${raw}"`);
  return n;
}

/** A flag given in minutes, in ms: undefined when not given; a usage error unless a positive number. */
export function minutesMs(name: string, raw: string | undefined): number | undefined {
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
export function runnerOf(
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
  if (agent === "copilot") {
    const userHome = process.env.COPILOT_HOME || join(homedir(), ".copilot");
    return { ...runnerFor(agent, { env: copilotRunEnv(root, binPath(), userHome) }), hooked: true };
  }
  if (agent === "opencode") {
    const env = opencodeRunEnv(
      root,
      { node: process.execPath, bin: binPath() },
      process.env.OPENCODE_CONFIG_DIR,
    );
    return { ...runnerFor(agent, { env }), hooked: true };
  }
  return runnerFor(agent);
}

/** How long one agent iteration may take unless `--agent-timeout` says. */
export const DEFAULT_AGENT_TIMEOUT_MS = 30 * 60_000;

/**
 * `runner`, once it is known to be able to start: an agent whose program is missing or not executable ends
 * the run at once with one line (exit 2), before any attempt is spent on it.
 */
export function startable(runner: AgentRunner, root: string, env: NodeJS.ProcessEnv): AgentRunner {
  const problem = cannotStart(runner, root, env);
  if (problem !== null) throw new ReinsError("usage", problem);
  return runner;
}

/** The exit code of a run: 0 only when it is proven (every done task's checks witnessed its change). */
export function exitOf(outcome: RunOutcome): number {
  return outcomeOf(outcome.state, outcome.finished).kind === "proven" ? 0 : 1;
}

/**
 * The run's closing lines: what was done, the report, the outcome with its first cause, and then what a
 * person does next (`next: …` lines: the tree is left on the run's branch).
 */
export function ending(outcome: RunOutcome, root: string): string {
  const tasks = Object.values(outcome.state.tasks);
  const done = tasks.filter((t) => t.status === "done").length;
  const lines = [
    `run ${outcome.run}: ${done} of ${tasks.length} task(s) done on branch ${outcome.meta.branch}`,
  ];
  if (outcome.report !== null) lines.push(`report: ${relative(root, resolve(root, outcome.report))}`);
  const end = outcomeOf(outcome.state, outcome.finished);
  lines.push(`${end.kind}: ${end.cause}`);
  lines.push(...nextSteps(end.kind, outcome.meta.branch));
  return `${lines.join("\n")}\n`;
}

/** What a person does after a run that left the tree on its branch: look, merge or go back. */
export function nextSteps(kind: OutcomeKind, branch: string): string[] {
  const back = "`git switch -` goes back to the branch you were on";
  if (kind === "proven")
    return [
      `next: the work is on ${branch}, checked out: \`git switch - && git merge ${branch}\` takes it into the branch you were on; ${back} without it`,
    ];
  if (kind === "unwitnessed")
    return [
      "next: a task whose change no check witnesses: if it is a refactor (no behaviour changed), no check can witness it; its proof is that the checks as they were still pass with it, which they did: read its diff in the report and merge it yourself if it is sound; else give it a check that fails without its change and run the plan again",
      `next: the tree is on ${branch}: ${back}; \`git merge ${branch}\` from there takes the work`,
    ];
  return [`next: the tree is on ${branch}: ${back}; ${branch} keeps what the run did`];
}
