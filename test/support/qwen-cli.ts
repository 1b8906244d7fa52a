import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { cleanEnv, commandFor, jsonEvents, runBounded, unavailableReason } from "./processes.js";
import type { BoundedRun } from "./processes.js";

/**
 * Runs the real Qwen Code (the pinned devDependency `@qwen-code/qwen-code`) headless as `qwen -p <prompt>
 * --yolo -o stream-json` against a fake OpenAI Chat Completions API (see fake-chat-tools.ts), with a
 * throwaway HOME so no user settings leak in. The harness writes only `<home>/.qwen/settings.json`, merged
 * into what is there: OpenAI auth (no login), no telemetry, usage statistics or update check. The
 * project's `.qwen/settings.json` (reins' hooks) is the project's own.
 */

/** The CLI's bundle: `REINS_QWEN_BIN`, else the package's `cli.js` (run with this Node). */
export const qwenBinary: string = process.env.REINS_QWEN_BIN ?? join(packageDir(), "cli.js");

function packageDir(): string {
  try {
    return dirname(createRequire(import.meta.url).resolve("@qwen-code/qwen-code/package.json"));
  } catch {
    return join(import.meta.dirname, "..", "..", "node_modules", "@qwen-code", "qwen-code");
  }
}

/** Why the real CLI cannot run here (`qwen --version` does not answer), or null when it can. */
export const qwenUnavailableReason = unavailableReason("Qwen Code", () => {
  if (!existsSync(qwenBinary)) return `${qwenBinary} does not exist (npm install)`;
  const home = mkdtempSync(join(tmpdir(), "reins-qwen-probe-"));
  const probe = spawnSync(...commandFor(qwenBinary, ["--version"]), {
    encoding: "utf8",
    timeout: 20_000,
    env: cleanEnv(home),
  });
  rmSync(home, { recursive: true, force: true });
  return probe.status === 0 && /\d+\.\d+\.\d+/.test(probe.stdout.trim())
    ? null
    : `${qwenBinary} --version failed: ${probe.stderr || String(probe.error)}`;
});

export interface RunQwenOptions {
  /** The project directory; its `.qwen/settings.json` hooks run. */
  cwd: string;
  prompt: string;
  /** The fake API's URL (ends in `/v1`), for `OPENAI_BASE_URL`. */
  baseUrl: string;
  /** @default 60_000 */
  timeoutMs?: number;
  /** The HOME of the run (`<home>/.qwen`). */
  home: string;
  /** Extra environment variables, applied last. */
  env?: Record<string, string>;
}

/** One line of `-o stream-json` (the fields tests read). */
export interface QwenEvent {
  type: string;
  subtype?: string;
  session_id?: string;
  message?: { content?: unknown[]; usage?: Record<string, number> };
  usage?: Record<string, number>;
  [key: string]: unknown;
}

export interface QwenRun extends BoundedRun {
  events: QwenEvent[];
  sessionId: string | undefined;
  result: QwenEvent | undefined;
}

/** The user settings the harness needs, merged section by section over `<home>/.qwen/settings.json`. */
export function writeQwenUserSettings(home: string): void {
  const dir = join(home, ".qwen");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "settings.json");
  const current = existsSync(file)
    ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, Record<string, unknown> | undefined>)
    : {};
  const ours: Record<string, Record<string, unknown>> = {
    security: { auth: { selectedType: "openai" } },
    telemetry: { enabled: false },
    privacy: { usageStatisticsEnabled: false },
    general: { enableAutoUpdate: false },
  };
  const merged: Record<string, unknown> = { ...current };
  for (const [section, values] of Object.entries(ours)) merged[section] = { ...current[section], ...values };
  writeFileSync(file, `${JSON.stringify(merged, null, 2)}\n`);
}

/** Runs `qwen -p <prompt> --yolo -o stream-json` and waits for it to exit. */
export async function runQwen(options: RunQwenOptions): Promise<QwenRun> {
  writeQwenUserSettings(options.home);
  const [command, args] = commandFor(qwenBinary, ["--yolo", "-o", "stream-json", "-p", options.prompt]);
  const env = cleanEnv(options.home, {
    OPENAI_BASE_URL: options.baseUrl,
    OPENAI_API_KEY: "test",
    OPENAI_MODEL: "gpt-4.1",
    ...options.env,
  });
  const run = await runBounded(command, args, {
    cwd: options.cwd,
    env,
    timeoutMs: options.timeoutMs ?? 60_000,
  });
  const events = jsonEvents<QwenEvent>(run.stdout);
  return {
    ...run,
    events,
    sessionId: events.find((e) => e.session_id !== undefined)?.session_id,
    result: events.findLast((e) => e.type === "result"),
  };
}
