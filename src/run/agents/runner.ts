/** The agent port of `reins run`: what one iteration asks of an agent program and what it answers. */
import { spawnAgent } from "./spawn-agent.js";

/**
 * The agent port of `reins run`: one iteration of one task is one run of an agent program, which gets the
 * prompt and the task's working tree and answers with an outcome, usage and its recorded output. Each
 * adapter (claude.ts, codex.ts, gemini.ts, command.ts) builds a command line and a pure `parse` of what the
 * program printed, so a recorded run is re-parsed the same way in replay.
 */

/** How one agent iteration ended, as the control core takes it (`agent.finished.outcome`). */
export type AgentOutcome = "ok" | "failed" | "transient" | "budget_paused";

/** One iteration the driver asks of an agent. */
export interface AgentRequest {
  run: string;
  task: string;
  attempt: number;
  mode: "implement" | "fix";
  prompt: string;
  /** The task's working tree (the project, or its worktree). */
  cwd: string;
  /** Added to the agent's environment, over everything but the `REINS_*` variables of the request. */
  env: Record<string, string>;
  /** The whole process group is killed after this long; the outcome is then `transient`. */
  timeoutMs: number;
  /** Killed as hung after this long without output; the outcome is then `transient`. @default no limit */
  idleMs?: number;
  /** Aborting (Ctrl-C) kills the whole process group. */
  signal?: AbortSignal;
  /**
   * The box the agent works in: a program and its arguments the agent's command line is given to (bwrap and
   * its mounts, see run/drive/agent-box.ts). @default none: the agent runs as it is
   */
  box?: readonly string[];
}

/** What an iteration produced: the parse of its output, plus the output itself for the run's record. */
export interface AgentResult {
  outcome: AgentOutcome;
  /** Model round trips, as the agent reports them or as estimated from its events (see each adapter). */
  turns: number;
  /** Tokens processed: input (cached included) plus output. */
  tokens: number;
  /** 0 when the agent reports no cost. */
  costUsd: number;
  /** The agent's final message, or why it failed; at most 4,000 characters. */
  summary: string;
  sessionId: string | null;
  /** stdout as produced (bounded: the first 6 MB and the last 2 MB), for recording and replay. */
  raw: string;
  /** The exit code; null when the process was killed by a signal (timeout, abort). */
  exitCode: number | null;
  /** The last 64 KB of stderr, then reins' own notes (`[reins] timed out ...`). */
  stderr: string;
}

/** What `parse` derives from a recorded run. */
export type AgentParse = Omit<AgentResult, "raw" | "exitCode" | "stderr">;

/** An agent adapter. */
export interface AgentRunner {
  /** The spec that selects it (`claude`, `cmd:./agent.sh`): `runnerFor(name)` makes it again for a resume or replay. */
  readonly name: string;
  /** Runs one iteration; never rejects for anything the agent does (a missing binary is a `failed` result). */
  run(request: AgentRequest): Promise<AgentResult>;
  /** Pure: the outcome, usage and summary of a run from its recorded stdout, exit code and stderr. */
  parse(raw: string, exitCode: number | null, stderr: string): AgentParse;
  /**
   * The program it starts (a path, or a name looked up on PATH), so a run can refuse at once an agent that
   * cannot start; null when that cannot be told before running it (a shell command line).
   */
  readonly program: string | null;
  /**
   * Whether its iterations run reins' hooks (installed for the run, or the project's own): their session
   * charges the project's pools with the spend as it goes, so the run must not charge it again.
   */
  readonly hooked?: boolean;
  /** Whether it runs a program that the request's `box` holds (see AgentRequest.box); false for one in-process. */
  readonly boxable?: boolean;
}

/** Options every CLI adapter takes. */
export interface CliAgentOptions {
  /**
   * The program. A `.js`/`.mjs`/`.cjs` file runs with this Node.
   * @default `REINS_<AGENT>_BIN` from the environment, else the CLI's name on PATH
   */
  bin?: string;
  /** The model (`--model` / `-m`). @default the CLI's own choice */
  model?: string;
  /** More arguments, after reins' own (Codex's `-c key=value` overrides, say). @default [] */
  args?: readonly string[];
  /** The environment the agent starts from. @default process.env */
  baseEnv?: Record<string, string | undefined>;
  /** Added over `baseEnv`. @default {} */
  env?: Record<string, string>;
}

/** A command line to run: the program, its arguments, and what goes on stdin. */
export interface Invocation {
  command: string;
  args: string[];
  /** Environment variables set for this adapter (under the caller's). */
  env?: Record<string, string>;
  stdin: string;
}

/**
 * Makes a runner from a command line builder and a parse: spawns the program in the request's working tree
 * with the prompt on stdin, waits for it within the request's time, and parses what it printed.
 */
export function agentRunner(
  name: string,
  options: Pick<CliAgentOptions, "baseEnv" | "env">,
  invocation: (request: AgentRequest) => Invocation,
  parse: AgentRunner["parse"],
  program: string | null,
): AgentRunner {
  return {
    name,
    parse,
    program,
    boxable: true,
    async run(request) {
      const call = boxed(invocation(request), request.box);
      const env = agentEnv(request, call.env ?? {}, options);
      const out = await spawnAgent({
        ...call,
        cwd: request.cwd,
        env,
        timeoutMs: request.timeoutMs,
        idleMs: request.idleMs,
        signal: request.signal,
      });
      return {
        ...parse(out.stdout, out.exitCode, out.stderr),
        raw: out.stdout,
        exitCode: out.exitCode,
        stderr: out.stderr,
      };
    },
  };
}

/** `call` run inside `box` (its program and arguments first), or as it is without one. */
function boxed(call: Invocation, box: readonly string[] | undefined): Invocation {
  const [program, ...args] = box ?? [];
  if (program === undefined) return call;
  return { ...call, command: program, args: [...args, "--", call.command, ...call.args] };
}

/**
 * The agent's environment, later entries winning: the adapter's defaults, the base environment (the user's),
 * the options' `env`, the request's `env`, then `REINS_RUN`, `REINS_TASK`, `REINS_ATTEMPT` and `REINS_MODE`.
 */
export function agentEnv(
  request: AgentRequest,
  defaults: Record<string, string>,
  options: Pick<CliAgentOptions, "baseEnv" | "env">,
): Record<string, string> {
  const env: Record<string, string> = { ...defaults };
  for (const [key, value] of Object.entries(options.baseEnv ?? process.env))
    if (value !== undefined) env[key] = value;
  return {
    ...env,
    ...options.env,
    ...request.env,
    REINS_RUN: request.run,
    REINS_TASK: request.task,
    REINS_ATTEMPT: String(request.attempt),
    REINS_MODE: request.mode,
  };
}

/** What sets an agent CLI's adapter apart from the others. */
export interface CliAgent {
  name: "claude" | "codex" | "gemini";
  /** reins' own arguments, before `--model`/`-m` and the options' `args`. */
  args: readonly string[];
  /** The flag that names the model. */
  modelFlag: "--model" | "-m";
  /** Arguments after the options' `args` (Codex's `-`: the prompt is on stdin). @default [] */
  lastArgs?: readonly string[];
  /** Environment variables the adapter sets, under the caller's. @default {} */
  env?: Record<string, string>;
  parse: AgentRunner["parse"];
}

/**
 * The runner of an agent CLI: `options.bin`, else `REINS_<NAME>_BIN`, else the CLI's name on PATH, with the
 * adapter's arguments, the model and the options' arguments, and the prompt on stdin.
 */
export function cliRunner(agent: CliAgent, options: CliAgentOptions): AgentRunner {
  const bin = options.bin ?? process.env[`REINS_${agent.name.toUpperCase()}_BIN`] ?? agent.name;
  const call = commandFor(bin, [
    ...agent.args,
    ...(options.model === undefined ? [] : [agent.modelFlag, options.model]),
    ...(options.args ?? []),
    ...(agent.lastArgs ?? []),
  ]);
  return agentRunner(
    agent.name,
    options,
    (request) => ({ ...call, ...(agent.env === undefined ? {} : { env: agent.env }), stdin: request.prompt }),
    agent.parse,
    bin,
  );
}

/** The command and arguments that run `bin`: with this Node when it is a JavaScript file, else as it is. */
function commandFor(bin: string, args: readonly string[]): { command: string; args: string[] } {
  return /\.[cm]?js$/.test(bin)
    ? { command: process.execPath, args: [bin, ...args] }
    : { command: bin, args: [...args] };
}
