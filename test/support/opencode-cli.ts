import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanEnv, runBounded, unavailableReason, type BoundedRun } from "./processes.js";

/**
 * Runs the real opencode (the pinned devDependency `opencode-ai`) or Kilo Code (`@kilocode/cli-linux-x64`)
 * as `<cli> run <prompt>` against a fake Chat Completions API (fake-chat.ts), with a throwaway HOME so no
 * user configuration leaks in. The harness writes only the project's `opencode.json` (Kilo: `kilo.json`): the
 * fake provider through the bundled `@ai-sdk/openai-compatible`, bash and edits allowed. Everything else
 * (reins' plugin) is what `reins init <agent>` wrote.
 */

/** The CLIs' binaries, by agent. */
export const OPENCODE_BINARIES: Record<"opencode" | "kilo", string> = {
  opencode: join(import.meta.dirname, "..", "..", "node_modules", "opencode-ai", "bin", "opencode.exe"),
  kilo: join(import.meta.dirname, "..", "..", "node_modules", "@kilocode", "cli-linux-x64", "bin", "kilo"),
};

/** Why the CLI cannot run here (`<cli> --version` does not answer), or null when it can. */
export const opencodeUnavailableReason = (agent: "opencode" | "kilo") =>
  unavailableReason(agent, () => {
    const binary = OPENCODE_BINARIES[agent];
    if (!existsSync(binary)) return `${binary} does not exist (npm install)`;
    const home = mkdtempSync(join(tmpdir(), `reins-${agent}-probe-`));
    const probe = spawnSync(binary, ["--version"], {
      encoding: "utf8",
      timeout: 30_000,
      env: cleanEnv(home),
    });
    rmSync(home, { recursive: true, force: true });
    return probe.status === 0 ? null : `${binary} --version failed: ${probe.stderr || String(probe.error)}`;
  });

/** The project configuration that points the CLI at the fake model. */
export function fakeProviderConfig(baseUrl: string): object {
  return {
    model: "fake/m1",
    small_model: "fake/m1",
    provider: {
      fake: {
        npm: "@ai-sdk/openai-compatible",
        options: { baseURL: baseUrl, apiKey: "x" },
        models: { m1: { tool_call: true } },
      },
    },
    permission: { bash: "allow", edit: "allow" },
  };
}

/** Runs `<cli> run <prompt>` in `cwd` once, bounded by `timeoutMs`. */
export function runOpencode(options: {
  agent: "opencode" | "kilo";
  cwd: string;
  home: string;
  prompt: string;
  baseUrl: string;
  timeoutMs: number;
}): Promise<BoundedRun> {
  const file = options.agent === "kilo" ? "kilo.json" : "opencode.json";
  writeFileSync(join(options.cwd, file), JSON.stringify(fakeProviderConfig(options.baseUrl)));
  return runBounded(OPENCODE_BINARIES[options.agent], ["run", options.prompt], {
    cwd: options.cwd,
    env: cleanEnv(options.home, {
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      KILO_DISABLE_AUTOUPDATE: "1",
      // No models.dev catalogue to fetch offline: without these the CLI waits 30 s for it.
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      KILO_DISABLE_MODELS_FETCH: "1",
    }),
    timeoutMs: options.timeoutMs,
  });
}
