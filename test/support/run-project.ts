/** Git projects for `reins run` tests. */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { memoryIo } from "../../src/cli/io.js";
import { run } from "../../src/cli/run.js";
import { reinsBin } from "./processes.js";

/** Runs git in `cwd`, for a test's own setup and assertions. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, LC_ALL: "C", GIT_TERMINAL_PROMPT: "0" },
  }).trim();
}

/** Makes `dir` a git repository whose one commit on `main` holds `files` (path to content). */
export function gitProject(dir: string, files: Record<string, string>): void {
  git(dir, "init", "-q", "-b", "main");
  git(dir, "config", "user.email", "test@example.com");
  git(dir, "config", "user.name", "Test");
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "start");
}

/**
 * A small git project for `reins run`: the given files (a plan, say) committed on `main`, `.reins/`
 * ignored, and a scripted agent (`agent.sh`, outside the tree) that acts on `$REINS_TASK` and
 * `$REINS_ATTEMPT`.
 */
export function runProject(
  files: Record<string, string>,
  agentScript: string,
): { dir: string; agent: string } {
  const dir = mkdtempSync(join(tmpdir(), "reins-run-"));
  const agentDir = mkdtempSync(join(tmpdir(), "reins-agent-"));
  gitProject(dir, { ".gitignore": ".reins/\n", ...files });
  const agent = join(agentDir, "agent.sh");
  writeFileSync(agent, `#!/bin/sh\n${agentScript}\n`);
  chmodSync(agent, 0o755);
  return { dir, agent: `cmd:sh ${agent}` };
}

/** Runs the reins CLI in-process in `cwd` with a memory store per call unless one is named. */
export async function reinsIn(cwd: string, argv: string[]) {
  const io = memoryIo({ cwd, env: {} });
  const code = await run(argv, io);
  return { code, out: io.out.join(""), err: io.err.join("") };
}

/**
 * Starts `reins run --agent <agent> [flags]` in `dir` as a process group of its own, `REINS_MARK=<mark>` set, and
 * waits (up to 30 s) for the run to touch `mark` (its agent or a check says it got there): the process.
 */
export async function runUntilMarked(
  dir: string,
  agent: string,
  mark: string,
  flags: readonly string[] = [],
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [reinsBin, "run", "--agent", agent, ...flags], {
    cwd: dir,
    env: { ...process.env, REINS_MARK: mark },
    stdio: "ignore",
    detached: true,
  });
  for (const deadline = Date.now() + 30_000; !existsSync(mark) && Date.now() < deadline;)
    await new Promise((r) => setTimeout(r, 50));
  if (!existsSync(mark)) throw new Error(`the run did not reach ${mark} within 30 s`);
  return child;
}

/**
 * A small Python project for the driven agents' end-to-end runs: a plan of one task whose check is pytest,
 * the commands that write a wrong `add` (red) and the right one, and the check's command.
 */
export const PYTHON_ADD = {
  FILES: {
    ".gitignore": ".reins/\n__pycache__/\n.pytest_cache/\n",
    "reins.config.json": `${JSON.stringify({ pools: { team: {} } })}\n`,
    "pytest.ini": "[pytest]\n",
    "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    "reins.plan.yaml": `version: 1
name: calc
checks:
  add: { command: "python3 -m pytest -q -p no:cacheprovider test_calc.py", tier: medium }
settings:
  maxAttempts: 2
tasks:
  - id: add
    title: Implement add
    checks: [add]
    acceptance: calc.py defines add(a, b)
`,
  } as Record<string, string>,
  WRONG: "printf 'def add(a, b):\\n    return a - b\\n' > calc.py",
  RIGHT: "printf 'def add(a, b):\\n    return a + b\\n' > calc.py",
  TEST: "python3 -m pytest -q -p no:cacheprovider test_calc.py",
};
