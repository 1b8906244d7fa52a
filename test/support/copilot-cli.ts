import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { cleanEnv, commandFor, runBounded, unavailableReason } from "./processes.js";
import type { BoundedRun } from "./processes.js";

/**
 * Runs the real GitHub Copilot CLI (the pinned devDependency `@github/copilot`) in prompt mode
 * (`copilot -p <prompt> --allow-all-tools --trust-folder --no-auto-update`) against a streaming fake Chat
 * Completions API (fake-chat-stream.ts): `COPILOT_OFFLINE=true` and `COPILOT_PROVIDER_BASE_URL` make the fake
 * its only model, with no login. Each run has its own HOME and `COPILOT_HOME` (`<home>/.copilot`, where
 * Copilot keeps its session state), so nothing of the user's leaks in. `--trust-folder` trusts the project
 * for this one session, so its `.github/hooks/*.json` run.
 */

/** The launcher: `REINS_COPILOT_BIN`, else the package's `npm-loader.js` (it runs the platform package). */
export const copilotBinary: string =
  process.env.REINS_COPILOT_BIN ??
  join(dirname(createRequire(import.meta.url).resolve("@github/copilot/package.json")), "npm-loader.js");

/** Why the real CLI cannot run here (`copilot --version` does not answer), or null when it can. */
export const copilotUnavailableReason = unavailableReason("Copilot CLI", () => {
  if (!existsSync(copilotBinary)) return `${copilotBinary} does not exist (npm install)`;
  const probe = spawnSync(...commandFor(copilotBinary, ["--version"]), {
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, COPILOT_OFFLINE: "true" },
  });
  return probe.status === 0
    ? null
    : `${copilotBinary} --version failed: ${probe.stderr || String(probe.error)}`;
});

export interface RunCopilotOptions {
  cwd: string;
  prompt: string;
  /** The fake API's URL (`.../v1`). */
  baseUrl: string;
  /** The run's HOME; `COPILOT_HOME` is `<home>/.copilot`. */
  home: string;
  /** @default 120_000 */
  timeoutMs?: number;
  /** @default "gpt-4.1" */
  model?: string;
  env?: Record<string, string>;
  args?: readonly string[];
}

export interface CopilotRun extends BoundedRun {
  /** The tokens Copilot itself counted (`--usage-output-file`), or null when it wrote no report. */
  usage: { inputTokens: number; outputTokens: number } | null;
}

/** The sessions Copilot kept under `<home>/.copilot/session-state/`: their ids, the hooks' `sessionId`. */
export function copilotSessions(home: string): string[] {
  const dir = join(home, ".copilot", "session-state");
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((name) => existsSync(join(dir, name, "events.jsonl")));
}

/** The environment Copilot runs offline in, against the fake at `baseUrl`. */
export function copilotEnv(home: string, baseUrl: string, model = "gpt-4.1"): Record<string, string> {
  const copilotHome = join(home, ".copilot");
  mkdirSync(copilotHome, { recursive: true });
  return cleanEnv(home, {
    COPILOT_HOME: copilotHome,
    COPILOT_OFFLINE: "true",
    COPILOT_PROVIDER_BASE_URL: baseUrl,
    COPILOT_MODEL: model,
  });
}

/** Runs `copilot -p` once and waits for it to exit; the usage Copilot itself counted is read back. */
export async function runCopilot(options: RunCopilotOptions): Promise<CopilotRun> {
  const usageFile = join(options.home, "copilot-usage.json");
  const args = [
    "-p",
    options.prompt,
    "--allow-all-tools",
    "--trust-folder",
    "--no-auto-update",
    "--no-ask-user",
    "--usage-output-file",
    usageFile,
    ...(options.args ?? []),
  ];
  const run = await runBounded(...commandFor(copilotBinary, args), {
    cwd: options.cwd,
    env: { ...copilotEnv(options.home, options.baseUrl, options.model), ...options.env },
    timeoutMs: options.timeoutMs ?? 120_000,
  });
  let usage: CopilotRun["usage"] = null;
  try {
    const report = JSON.parse(readFileSync(usageFile, "utf8")) as {
      modelMetrics?: Record<string, { usage: { inputTokens: number; outputTokens: number } }>;
    };
    const all = Object.values(report.modelMetrics ?? {});
    usage = {
      inputTokens: all.reduce((n, m) => n + m.usage.inputTokens, 0),
      outputTokens: all.reduce((n, m) => n + m.usage.outputTokens, 0),
    };
  } catch {
    // no report: the run failed before it wrote one
  }
  return { ...run, usage };
}
