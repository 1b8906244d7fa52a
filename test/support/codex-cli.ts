import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/**
 * Runs the real Codex CLI (the pinned devDependency `@openai/codex`) as `codex exec --json` against a
 * fake Responses API (see fake-openai.ts), with a throwaway HOME and CODEX_HOME so no user settings
 * leak in. The fake provider is given with `-c` overrides, so the harness never writes `config.toml`:
 * what is there is what the test (say `reins init codex`) put there. The project's `.codex/hooks.json`
 * in `cwd` applies only when two things hold in Codex 0.169.0: the project is trusted
 * (`[projects."<cwd>"] trust_level = "trusted"`) and each hook is trusted (`[hooks.state."<key>"]
 * trusted_hash`); without them the hooks are skipped without a word. `hooks: true` (the default) has the
 * harness grant both for the run (`-c projects=...` and `--dangerously-bypass-hook-trust`); `hooks: false`
 * leaves them to the user's own config.
 */

/** The launcher: `REINS_CODEX_BIN`, else the package's `bin/codex.js` (it runs the platform package's binary). */
export const codexBinary: string =
  process.env.REINS_CODEX_BIN ??
  join(dirname(createRequire(import.meta.url).resolve("@openai/codex/package.json")), "bin", "codex.js");

const launch = (args: readonly string[]): [string, string[]] =>
  codexBinary.endsWith(".js") ? [process.execPath, [codexBinary, ...args]] : [codexBinary, [...args]];

let unavailable: string | null | undefined;

/**
 * Why the real CLI cannot run here, or null when it can (`codex --version` answers). Missing it fails
 * the run on CI (`CI=true`): there the tests must run, not be skipped quietly.
 */
export function codexUnavailableReason(): string | null {
  if (unavailable === undefined) {
    const [command, args] = launch(["--version"]);
    const probe = existsSync(codexBinary)
      ? spawnSync(command, args, { encoding: "utf8", timeout: 20_000 })
      : undefined;
    unavailable =
      probe === undefined
        ? `${codexBinary} does not exist (npm install)`
        : probe.status === 0 && probe.stdout.includes("codex-cli")
          ? null
          : `${codexBinary} --version failed (is the platform package @openai/codex-<os>-<arch> installed?): ${probe.stderr || String(probe.error)}`;
  }
  if (unavailable !== null && process.env.CI === "true") {
    throw new Error(`Codex CLI tests cannot run on CI: ${unavailable}`);
  }
  return unavailable;
}

export interface RunCodexOptions {
  /** The project directory; its `.codex/hooks.json` hooks run. */
  cwd: string;
  /** The prompt, passed after `--` so it may start with a dash. */
  prompt: string;
  /** The fake API's URL (`.../v1`), the provider's `base_url`. */
  baseUrl: string;
  /**
   * The process (group) is killed with SIGKILL after this long; the result then has `timedOut`.
   * Codex has no turn limit in `exec` mode: the script bounds the turns, this bounds the time.
   * @default 60_000
   */
  timeoutMs?: number;
  /** Extra environment variables, applied last. */
  env?: Record<string, string>;
  /**
   * The HOME of the run; `CODEX_HOME` is `<home>/.codex`, where `config.toml` is written.
   * @default a new directory under the OS temp dir (the caller removes `result.home`)
   */
  home?: string;
  /** @default "fake-model" */
  model?: string;
  /**
   * Run the project's hooks whatever the user's config says (trust the project and bypass hook trust for
   * this run). With false, they run only as far as `<home>/.codex/config.toml` trusts them.
   * @default true
   */
  hooks?: boolean;
  /** More CLI arguments, placed before the prompt. */
  args?: readonly string[];
}

/** One line of `codex exec --json` (the fields tests read). */
export interface CodexEvent {
  type: string;
  thread_id?: string;
  item?: {
    id: string;
    type: string;
    command?: string;
    exit_code?: number | null;
    status?: string;
    text?: string;
  };
  usage?: Record<string, number>;
  [key: string]: unknown;
}

export interface CodexRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout's JSONL events, those that parse. */
  events: CodexEvent[];
  /** The thread id (`thread.started`), which is the `session_id` of every hook input. */
  threadId: string | undefined;
  home: string;
  timedOut: boolean;
  durationMs: number;
}

/** TOML basic string. */
const toml = (value: string) => JSON.stringify(value);

/**
 * The `-c` overrides that make the fake the only provider and, with `trust`, trust that project folder for
 * this run (Codex merges `-c` values over its config.toml before it decides a project's trust).
 */
export function codexConfigArgs(options: { baseUrl: string; model: string; trust?: string }): string[] {
  const provider = [
    `name = "reins fake"`,
    `base_url = ${toml(options.baseUrl)}`,
    `wire_api = "responses"`,
    `env_key = "REINS_FAKE_OPENAI_KEY"`,
    "request_max_retries = 0",
    "stream_max_retries = 0",
  ];
  const args = [
    "-c",
    `model=${toml(options.model)}`,
    "-c",
    `model_provider="reins_fake"`,
    "-c",
    `model_providers.reins_fake={ ${provider.join(", ")} }`,
  ];
  if (options.trust !== undefined)
    args.push("-c", `projects={ ${toml(options.trust)} = { trust_level = "trusted" } }`);
  return args;
}

/**
 * Runs `codex exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox -c ...
 * [--dangerously-bypass-hook-trust] ... -- <prompt>` and waits for it to exit.
 */
export function runCodex(options: RunCodexOptions): Promise<CodexRun> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), "reins-codex-home-"));
  const hooks = options.hooks ?? true;
  const codexHome = join(home, ".codex");
  mkdirSync(codexHome, { recursive: true });
  const args = [
    "exec",
    "--json",
    "--color",
    "never",
    "--skip-git-repo-check",
    // Shell commands run unsandboxed and without approval prompts (nobody can answer in exec mode).
    "--dangerously-bypass-approvals-and-sandbox",
    ...codexConfigArgs({
      baseUrl: options.baseUrl,
      model: options.model ?? "fake-model",
      ...(hooks ? { trust: options.cwd } : {}),
    }),
  ];
  if (hooks) args.push("--dangerously-bypass-hook-trust");
  args.push(...(options.args ?? []), "--", options.prompt);

  // A clean environment: nothing of the calling session (OPENAI_*, CODEX_*) leaks in.
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    CODEX_HOME: codexHome,
    REINS_FAKE_OPENAI_KEY: "test",
  };
  for (const name of ["LANG", "TMPDIR", "SHELL"] as const) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, options.env);

  const [command, argv] = launch(args);
  const started = Date.now();
  const child = spawn(command, argv, {
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
      const events = parseEvents(stdout);
      resolve({
        code,
        signal,
        stdout,
        stderr,
        events,
        threadId: events.find((e) => e.type === "thread.started")?.thread_id,
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

function parseEvents(stdout: string): CodexEvent[] {
  return stdout.split("\n").flatMap((line) => {
    if (line.trim() === "") return [];
    try {
      const value = JSON.parse(line) as unknown;
      return isEvent(value) ? [value] : [];
    } catch {
      return [];
    }
  });
}

function isEvent(value: unknown): value is CodexEvent {
  return (
    typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string"
  );
}
