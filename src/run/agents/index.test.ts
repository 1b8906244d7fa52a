import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ReinsError } from "../../base/core/errors.js";
import { runnerFor } from "./index.js";
import type { AgentRequest } from "./runner.js";

/**
 * `runnerFor` and the command lines it makes, seen by a stand-in program that records its arguments, stdin
 * and environment (the real CLIs run in test/agent-runners.test.ts).
 */

let dir: string;
let bin: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "reins-agent-cli-"));
  bin = join(dir, "fake-cli");
  writeFileSync(
    bin,
    [
      "#!/bin/sh",
      'printf "%s\\n" "$@" > args.txt',
      "cat > stdin.txt",
      'echo "$GEMINI_CLI_TRUST_WORKSPACE|$REINS_TASK|$FROM_BASE|$FROM_OPTIONS|$HOME" > env.txt',
    ].join("\n"),
  );
  chmodSync(bin, 0o755);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const request: () => AgentRequest = () => ({
  run: "r",
  task: "T9",
  attempt: 1,
  mode: "implement",
  prompt: "--do it\n",
  cwd: dir,
  env: { FROM_OPTIONS: "request wins", REINS_TASK: "ignored" },
  timeoutMs: 10_000,
});
const read = (file: string) => readFileSync(join(dir, file), "utf8");
const options = () => ({
  bin,
  model: "m-1",
  args: ["--extra", "x"],
  baseEnv: { PATH: process.env.PATH, FROM_BASE: "base" },
  env: { FROM_OPTIONS: "options" },
});

describe("runnerFor", () => {
  it("runs claude in print mode with stream-json, the prompt on stdin", async () => {
    const runner = runnerFor("claude", { ...options(), maxTurns: 7, maxBudgetUsd: 2 });
    const result = await runner.run(request());
    expect(runner.name).toBe("claude");
    expect(read("args.txt").split("\n").slice(0, -1)).toEqual([
      ...["-p", "--output-format", "stream-json", "--verbose", "--allowedTools=Bash,Edit,Write,NotebookEdit"],
      ...["--max-turns", "7", "--max-budget-usd", "2", "--model", "m-1", "--extra", "x"],
    ]);
    expect(read("stdin.txt")).toBe("--do it\n");
    // The base environment replaces process.env (no HOME); the request's env wins over the options'.
    expect(read("env.txt")).toBe("|T9|base|request wins|\n");
    expect(result).toMatchObject({
      outcome: "failed",
      exitCode: 0,
      summary: "claude exited 0 without a result",
    });
  });

  it("runs codex exec with JSON events, a workspace-write sandbox and the prompt from stdin", async () => {
    await runnerFor("codex", options()).run(request());
    expect(read("args.txt").split("\n").slice(0, -1)).toEqual([
      ...["exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write"],
      ...["-m", "m-1", "--extra", "x", "-"],
    ]);
    expect(read("stdin.txt")).toBe("--do it\n");
  });

  it("runs gemini headless in yolo mode with the workspace trusted, the prompt on stdin", async () => {
    await runnerFor("gemini", options()).run(request());
    expect(read("args.txt").split("\n").slice(0, -1)).toEqual([
      ...["-o", "stream-json", "--approval-mode", "yolo", "-m", "m-1", "--extra", "x"],
    ]);
    expect(read("stdin.txt")).toBe("--do it\n");
    expect(read("env.txt")).toBe("true|T9|base|request wins|\n");
    // The user's own setting wins over reins' default.
    await runnerFor("gemini", { ...options(), env: { GEMINI_CLI_TRUST_WORKSPACE: "false" } }).run(request());
    expect(read("env.txt")).toMatch(/^false\|/);
  });

  it("makes a cmd: runner named by its spec, so a resumed run makes it again", () => {
    expect(runnerFor("cmd:./agent.sh --fast").name).toBe("cmd:./agent.sh --fast");
  });

  it("answers a program that cannot start with a failed run, not an exception", async () => {
    const result = await runnerFor("claude", { bin: join(dir, "missing") }).run(request());
    expect(result).toMatchObject({ outcome: "failed", exitCode: 127, raw: "" });
    expect(result.stderr).toMatch(/^\[reins\] cannot start .*missing: spawn .* ENOENT\n$/);
  });

  it("refuses an unknown agent or an empty command with a usage error listing the choices", () => {
    for (const spec of ["claud", "cmd:", "cmd:  ", ""]) {
      const error = (() => {
        try {
          runnerFor(spec);
        } catch (e) {
          return e;
        }
      })();
      expect(ReinsError.is(error) && error.code, spec).toBe("usage");
      expect((error as Error).message).toBe(
        `unknown agent "${spec}": use claude, codex, gemini, copilot, opencode or cmd:<command>`,
      );
    }
  });
});
