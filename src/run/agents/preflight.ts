/** Whether an agent's program can start at all: a run refuses one that cannot before it spends an attempt. */
import { spawnSync } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import type { AgentRunner } from "./runner.js";

function runnable(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, /\.[cm]?js$/.test(path) ? constants.R_OK : constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why `runner`'s program cannot start from `cwd` with `env` (one line naming it and how to fix it), or null
 * when it can or when only running it tells (a shell command line). A name is looked up on PATH; a shell
 * builtin or function counts as found.
 */
export function cannotStart(runner: AgentRunner, cwd: string, env: NodeJS.ProcessEnv): string | null {
  const program = runner.program;
  if (program === null) return null;
  const hint = runner.name.startsWith("cmd:")
    ? ""
    : ` (install it, or set REINS_${runner.name.toUpperCase()}_BIN to it)`;
  if (program.includes("/")) {
    const path = isAbsolute(program) ? program : resolve(cwd, program);
    return runnable(path)
      ? null
      : `the agent ${runner.name} cannot start: ${program} is not there or not executable${hint}`;
  }
  for (const dir of (env.PATH ?? "").split(delimiter))
    if (dir !== "" && runnable(join(dir, program))) return null;
  const shell = spawnSync("sh", ["-c", 'command -v -- "$1"', "sh", program], {
    cwd,
    env,
    stdio: "ignore",
    timeout: 5_000,
  });
  return shell.status === 0
    ? null
    : `the agent ${runner.name} cannot start: ${program} is not on PATH${hint}`;
}
