import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { cleanEnv, commandFor, jsonEvents, runBounded, unavailableReason } from "./processes.js";
import type { BoundedRun } from "./processes.js";

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

/** Why the real CLI cannot run here (`codex --version` does not answer), or null when it can. */
export const codexUnavailableReason = unavailableReason("Codex CLI", () => {
  if (!existsSync(codexBinary)) return `${codexBinary} does not exist (npm install)`;
  const probe = spawnSync(...commandFor(codexBinary, ["--version"]), { encoding: "utf8", timeout: 20_000 });
  return probe.status === 0 && probe.stdout.includes("codex-cli")
    ? null
    : `${codexBinary} --version failed (is the platform package @openai/codex-<os>-<arch> installed?): ${probe.stderr || String(probe.error)}`;
});

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

export interface CodexRun extends BoundedRun {
  /** stdout's JSONL events, those that parse. */
  events: CodexEvent[];
  /** The thread id (`thread.started`), which is the `session_id` of every hook input. */
  threadId: string | undefined;
  home: string;
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
export async function runCodex(options: RunCodexOptions): Promise<CodexRun> {
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

  // Nothing of the calling session (OPENAI_*, CODEX_*) leaks in.
  const env = cleanEnv(home, { CODEX_HOME: codexHome, REINS_FAKE_OPENAI_KEY: "test", ...options.env });
  const run = await runBounded(...commandFor(codexBinary, args), {
    cwd: options.cwd,
    env,
    timeoutMs: options.timeoutMs ?? 60_000,
  });
  const events = jsonEvents<CodexEvent>(run.stdout);
  return { ...run, events, threadId: events.find((e) => e.type === "thread.started")?.thread_id, home };
}

/**
 * The environment of a Codex run whose home is under the OS temp dir, as a test's is: with bubblewrap on the
 * PATH, Codex runs its sandbox helper by a link it makes under `$CODEX_HOME/tmp/arg0`, and refuses to make it
 * under the temp dir (the command then fails while Codex exits 0). A temp dir of Codex's own, beside the
 * home, puts the home outside it (docs in DESIGN's notes on Codex and bubblewrap).
 */
export function codexTestEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  const tmp = join(home, "..", "codex-tmp");
  mkdirSync(tmp, { recursive: true });
  return cleanEnv(home, { TMPDIR: tmp, ...extra });
}
