import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { cleanEnv, runBounded, unavailableReason } from "./processes.js";
import type { BoundedRun } from "./processes.js";

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

/** Why the real CLI cannot run here (`claude --version` does not answer), or null when it can. */
export const claudeUnavailableReason = unavailableReason("Claude Code", () => {
  if (!existsSync(claudeBinary)) return `${claudeBinary} does not exist (npm install)`;
  const probe = spawnSync(claudeBinary, ["--version"], { encoding: "utf8", timeout: 20_000 });
  return probe.status === 0 && probe.stdout.includes("Claude Code")
    ? null
    : `${claudeBinary} --version failed (did its postinstall run?): ${probe.stderr || String(probe.error)}`;
});

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

export interface ClaudeRun extends BoundedRun {
  /** stdout parsed as JSON, when it parses. */
  json: ClaudeResultJson | undefined;
  /** The HOME the run used. */
  home: string;
}

/** Runs `claude -p --output-format json --max-turns N ... -- <prompt>` and waits for it to exit. */
export async function runClaude(options: RunClaudeOptions): Promise<ClaudeRun> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), "reins-claude-home-"));
  const permissions = options.permissions ?? "allowedTools";
  const args = ["-p", "--output-format", "json", "--max-turns", String(options.maxTurns ?? 4)];
  if (permissions === "bypassPermissions") args.push("--permission-mode", "bypassPermissions");
  else args.push(`--allowedTools=${(options.allowedTools ?? ["Bash", "Edit", "Write", "Read"]).join(",")}`);
  if (options.sessionId !== undefined) args.push("--session-id", options.sessionId);
  args.push(...(options.args ?? []), "--", options.prompt);

  // Nothing of the calling session (its ANTHROPIC_*/CLAUDE_* variables) leaks in.
  const env = cleanEnv(home, {
    ANTHROPIC_BASE_URL: options.baseUrl,
    ANTHROPIC_API_KEY: "test",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    ...(permissions === "bypassPermissions" ? { IS_SANDBOX: "1" } : {}),
    ...options.env,
  });
  const run = await runBounded(claudeBinary, args, {
    cwd: options.cwd,
    env,
    timeoutMs: options.timeoutMs ?? 60_000,
  });
  return { ...run, json: parseResult(run.stdout), home };
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
