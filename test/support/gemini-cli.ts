import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { cleanEnv, commandFor, jsonEvents, runBounded, unavailableReason } from "./processes.js";
import type { BoundedRun } from "./processes.js";

/**
 * Runs the real Gemini CLI (the pinned devDependency `@google/gemini-cli`) headless as `gemini -p <prompt>
 * -o stream-json --approval-mode yolo` against a fake Gemini API (see fake-gemini.ts), with a throwaway HOME
 * so no user settings leak in. The harness writes only `<home>/.gemini/settings.json`, merged into what is
 * there: API-key auth (without it the custom base URL selects "gateway" auth, which headless mode refuses,
 * exit 41), no usage statistics, telemetry or update check, and Gemini's own loop detection off unless
 * asked for. It never trusts the project: the project's `.gemini/settings.json`, hooks included, applies
 * only where `<home>/.gemini/trustedFolders.json` (say, written by `reins init gemini`) trusts `cwd`.
 */

/** The CLI's bundle: `REINS_GEMINI_BIN`, else the package's `bundle/gemini.js` (run with this Node). */
export const geminiBinary: string = process.env.REINS_GEMINI_BIN ?? join(packageDir(), "bundle", "gemini.js");

/** Where the package is installed, or would be: a missing package makes the tests skip, not fail to load. */
function packageDir(): string {
  try {
    return dirname(createRequire(import.meta.url).resolve("@google/gemini-cli/package.json"));
  } catch {
    return join(import.meta.dirname, "..", "..", "node_modules", "@google", "gemini-cli");
  }
}

/** Why the real CLI cannot run here (`gemini --version` does not answer), or null when it can. */
export const geminiUnavailableReason = unavailableReason("Gemini CLI", () => {
  if (!existsSync(geminiBinary)) return `${geminiBinary} does not exist (npm install)`;
  const home = mkdtempSync(join(tmpdir(), "reins-gemini-probe-"));
  const probe = spawnSync(...commandFor(geminiBinary, ["--version"]), {
    encoding: "utf8",
    timeout: 20_000,
    env: cleanEnv(home),
  });
  rmSync(home, { recursive: true, force: true });
  return probe.status === 0 && /^\d+\.\d+\.\d+/.test(probe.stdout.trim())
    ? null
    : `${geminiBinary} --version failed: ${probe.stderr || String(probe.error)}`;
});

export interface RunGeminiOptions {
  /** The project directory; its `.gemini/settings.json` hooks run if the folder is trusted. */
  cwd: string;
  /** The prompt (`-p`). */
  prompt: string;
  /** The fake API's URL, for `GOOGLE_GEMINI_BASE_URL`. */
  baseUrl: string;
  /**
   * The process (group) is killed with SIGKILL after this long; the result then has `timedOut`. Headless
   * Gemini CLI has no turn limit but its session's: the script bounds the turns, this bounds the time.
   * @default 60_000
   */
  timeoutMs?: number;
  /**
   * The HOME of the run (Gemini CLI's settings, trusted folders and chats live in `<home>/.gemini`).
   * @default a new directory under the OS temp dir (the caller removes `result.home`)
   */
  home?: string;
  /**
   * `-m`: a fixed model, so no router call asks a small model to choose one first.
   * @default "gemini-2.5-flash"
   */
  model?: string;
  /**
   * Gemini CLI's own loop detection (`model.disableLoopDetection` off). It ends the turn at the 5th
   * identical tool call, before the BeforeTool hook of that call runs.
   * @default false
   */
  loopDetection?: boolean;
  /** Extra environment variables, applied last. */
  env?: Record<string, string>;
  /** More CLI arguments, placed before `-p`. */
  args?: readonly string[];
}

/** One line of `-o stream-json` (the fields tests read). */
export interface GeminiEvent {
  type: string;
  session_id?: string;
  role?: string;
  content?: string;
  tool_name?: string;
  tool_id?: string;
  parameters?: Record<string, unknown>;
  status?: string;
  output?: string;
  severity?: string;
  message?: string;
  stats?: { total_tokens?: number; input_tokens?: number; output_tokens?: number; tool_calls?: number };
  [key: string]: unknown;
}

export interface GeminiRun extends BoundedRun {
  /** stdout's JSONL events, those that parse. */
  events: GeminiEvent[];
  /** The session id (`init`), which is the `session_id` of every hook input. */
  sessionId: string | undefined;
  /** The final `result` event. */
  result: GeminiEvent | undefined;
  home: string;
}

/** The settings the harness needs, merged section by section over what `<home>/.gemini/settings.json` holds. */
export function writeSettings(home: string, loopDetection: boolean): void {
  const dir = join(home, ".gemini");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "settings.json");
  const current = existsSync(file)
    ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, Record<string, unknown> | undefined>)
    : {};
  const ours: Record<string, Record<string, unknown>> = {
    security: { auth: { selectedType: "gemini-api-key" } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    model: { disableLoopDetection: !loopDetection },
  };
  const merged: Record<string, unknown> = { ...current };
  for (const [section, values] of Object.entries(ours)) merged[section] = { ...current[section], ...values };
  writeFileSync(file, `${JSON.stringify(merged, null, 2)}\n`);
}

/** Runs `gemini -m <model> -o stream-json --approval-mode yolo ... -p <prompt>` and waits for it to exit. */
export async function runGemini(options: RunGeminiOptions): Promise<GeminiRun> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), "reins-gemini-home-"));
  writeSettings(home, options.loopDetection ?? false);
  const [command, args] = commandFor(geminiBinary, [
    "-m",
    options.model ?? "gemini-2.5-flash",
    "-o",
    "stream-json",
    // Tools run without asking (nobody can answer in headless mode; `default` gives no shell tool at all).
    "--approval-mode",
    "yolo",
    ...(options.args ?? []),
    "-p",
    options.prompt,
  ]);
  const env = cleanEnv(home, {
    GOOGLE_GEMINI_BASE_URL: options.baseUrl,
    GEMINI_API_KEY: "test",
    ...options.env,
  });
  const run = await runBounded(command, args, {
    cwd: options.cwd,
    env,
    timeoutMs: options.timeoutMs ?? 60_000,
  });
  const events = jsonEvents<GeminiEvent>(run.stdout);
  return {
    ...run,
    events,
    sessionId: events.find((e) => e.type === "init")?.session_id,
    result: events.findLast((e) => e.type === "result"),
    home,
  };
}
