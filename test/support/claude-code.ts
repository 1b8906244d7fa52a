import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/**
 * Runs the real Claude Code CLI (the pinned devDependency `@anthropic-ai/claude-code`) non-interactively
 * against a fake Messages API (see fake-anthropic.ts), with a throwaway HOME so no user settings leak
 * in. The project's `.claude/settings.json` in `cwd` applies, hooks included.
 */

/**
 * The native binary: `REINS_CLAUDE_BIN`, else the package's `bin/claude.exe`, which the package's
 * postinstall replaces with the platform binary (a shell stub that fails if it did not run).
 */
export const claudeBinary: string =
  process.env.REINS_CLAUDE_BIN ??
  join(
    dirname(createRequire(import.meta.url).resolve("@anthropic-ai/claude-code/package.json")),
    "bin",
    "claude.exe",
  );

let unavailable: string | null | undefined;

/**
 * Why the real CLI cannot run here, or null when it can (`claude --version` answers). Missing it
 * fails the run on CI (`CI=true`): there the tests must run, not be skipped quietly.
 */
export function claudeUnavailableReason(): string | null {
  if (unavailable === undefined) {
    const probe = existsSync(claudeBinary)
      ? spawnSync(claudeBinary, ["--version"], { encoding: "utf8", timeout: 20_000 })
      : undefined;
    unavailable =
      probe === undefined
        ? `${claudeBinary} does not exist (npm install)`
        : probe.status === 0 && probe.stdout.includes("Claude Code")
          ? null
          : `${claudeBinary} --version failed (did its postinstall run?): ${probe.stderr || String(probe.error)}`;
  }
  if (unavailable !== null && process.env.CI === "true") {
    throw new Error(`Claude Code tests cannot run on CI: ${unavailable}`);
  }
  return unavailable;
}

export interface RunClaudeOptions {
  /** The project directory; its `.claude/settings.json` hooks run. */
  cwd: string;
  /** The prompt, passed after `--` so it may start with a dash. */
  prompt: string;
  /** The fake API's URL, for `ANTHROPIC_BASE_URL`. */
  baseUrl: string;
  /**
   * `--max-turns`.
   * @default 4
   */
  maxTurns?: number;
  /**
   * The process (group) is killed with SIGKILL after this long; the result then has `timedOut`.
   * @default 60_000
   */
  timeoutMs?: number;
  /** Extra environment variables, applied last. */
  env?: Record<string, string>;
  /**
   * The HOME of the run; transcripts go to `<home>/.claude/projects/<cwd with / as ->/<session>.jsonl`.
   * @default a new directory under the OS temp dir (the caller removes `result.home`)
   */
  home?: string;
  /**
   * How tool calls are permitted without a person. `allowedTools` (permission mode `default`) works
   * as root; `bypassPermissions` is refused as root unless `IS_SANDBOX=1`, which is then set.
   * Either way a hook's `ask` is denied (nobody can answer in `-p` mode).
   * @default "allowedTools"
   */
  permissions?: "allowedTools" | "bypassPermissions";
  /**
   * The tools allowed without asking (with `permissions: "allowedTools"`).
   * @default ["Bash", "Edit", "Write", "Read"]
   */
  allowedTools?: readonly string[];
  /** `--session-id` (a UUID). */
  sessionId?: string;
  /** More CLI arguments, placed before the prompt. */
  args?: readonly string[];
}

/** The `--output-format json` result object (the fields tests read; there are many more). */
export interface ClaudeResultJson {
  type: "result";
  subtype: string;
  is_error: boolean;
  result?: string;
  session_id: string;
  num_turns: number;
  stop_reason?: string | null;
  total_cost_usd?: number;
  usage?: Record<string, unknown>;
  permission_denials?: { tool_name: string; tool_use_id: string; tool_input: unknown }[];
  [key: string]: unknown;
}

export interface ClaudeRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON, when it parses. */
  json: ClaudeResultJson | undefined;
  /** The HOME the run used. */
  home: string;
  timedOut: boolean;
  durationMs: number;
}

/** Runs `claude -p --output-format json --max-turns N ... -- <prompt>` and waits for it to exit. */
export function runClaude(options: RunClaudeOptions): Promise<ClaudeRun> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), "reins-claude-home-"));
  const permissions = options.permissions ?? "allowedTools";
  const args = ["-p", "--output-format", "json", "--max-turns", String(options.maxTurns ?? 4)];
  if (permissions === "bypassPermissions") args.push("--permission-mode", "bypassPermissions");
  else args.push(`--allowedTools=${(options.allowedTools ?? ["Bash", "Edit", "Write", "Read"]).join(",")}`);
  if (options.sessionId !== undefined) args.push("--session-id", options.sessionId);
  args.push(...(options.args ?? []), "--", options.prompt);

  // A clean environment: nothing of the calling session (its ANTHROPIC_*/CLAUDE_* variables) leaks in.
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    ANTHROPIC_BASE_URL: options.baseUrl,
    ANTHROPIC_API_KEY: "test",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  };
  for (const name of ["LANG", "TMPDIR", "SHELL"] as const) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  if (permissions === "bypassPermissions") env.IS_SANDBOX = "1";
  Object.assign(env, options.env);

  const started = Date.now();
  const child = spawn(claudeBinary, args, {
    cwd: options.cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group, so a timeout also kills the tools and hooks it started.
    detached: true,
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid);
  }, options.timeoutMs ?? 60_000);

  return new Promise((resolve, reject) => {
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({
        code,
        signal,
        stdout,
        stderr,
        json: parseResult(stdout),
        home,
        timedOut,
        durationMs: Date.now() - started,
      });
    });
  });
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

function parseResult(stdout: string): ClaudeResultJson | undefined {
  try {
    const value = JSON.parse(stdout.trim()) as unknown;
    return typeof value === "object" && value !== null && (value as { type?: unknown }).type === "result"
      ? (value as ClaudeResultJson)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The transcript of a session under `home`, or undefined when it was not written. */
export function findTranscript(home: string, sessionId: string): string | undefined {
  const projects = join(home, ".claude", "projects");
  if (!existsSync(projects)) return undefined;
  for (const dir of readdirSync(projects)) {
    const file = join(projects, dir, `${sessionId}.jsonl`);
    if (existsSync(file)) return file;
  }
  return undefined;
}

/** One line of a transcript (the fields tests read). */
export interface TranscriptEntry {
  type: string;
  uuid?: string;
  sessionId?: string;
  requestId?: string;
  isSidechain?: boolean;
  message?: {
    id?: string;
    role?: string;
    model?: string;
    content?: unknown;
    usage?: Record<string, unknown>;
  };
  [key: string]: unknown;
}

/** The entries of a transcript JSONL file. */
export function readTranscript(path: string): TranscriptEntry[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as TranscriptEntry);
}
