/**
 * The rules a replayed log cannot judge, measured on scripted agents through the real hook path: a log never
 * shows the agent reins' deny, so "the agent ignored a deny" is only ever true of a live agent. Each scripted
 * agent here reads every reply of `reins hook claude` (a real process, a real SQLite store) and acts on it,
 * as Claude Code does: a denied call does not run.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanEnv, finished, reinsBin } from "#test/processes.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  dirs.push(dir);
  return dir;
}

const home = tempDir("reins-live-home-");

/** What the agent read back from one hook call. */
interface Reply {
  denied: boolean;
  reason: string;
}

/** One hook call through `reins hook claude` in `dir`. */
async function hook(dir: string, input: Record<string, unknown>): Promise<Reply> {
  const child = spawn(process.execPath, [reinsBin, "hook", "claude"], {
    cwd: dir,
    env: cleanEnv(home),
    stdio: ["pipe", "pipe", "pipe"],
  });
  const done = finished(child);
  child.stdin.end(JSON.stringify({ session_id: "live", cwd: dir, prompt_id: "p1", ...input }));
  const { code, stdout, stderr } = await done;
  expect(code, stderr).toBe(0);
  const reply = (stdout.trim() === "" ? {} : JSON.parse(stdout)) as {
    decision?: string;
    reason?: string;
    hookSpecificOutput?: { permissionDecision?: string; permissionDecisionReason?: string };
  };
  const decision = reply.hookSpecificOutput?.permissionDecision ?? reply.decision;
  return {
    denied: decision === "deny" || decision === "block",
    reason: reply.hookSpecificOutput?.permissionDecisionReason ?? reply.reason ?? "",
  };
}

/** A scripted Claude Code agent: each tool call is asked about first, and runs only when allowed. */
class ScriptedAgent {
  readonly replies: Reply[] = [];
  #n = 0;
  constructor(readonly dir: string) {}

  async start(): Promise<void> {
    await hook(this.dir, { hook_event_name: "SessionStart", source: "startup" });
    await hook(this.dir, { hook_event_name: "UserPromptSubmit", prompt: "Fix the unit conversion." });
  }

  /** Asks to make a call; when allowed it runs and reports its result. Returns the answer. */
  async call(tool: string, input: Record<string, unknown>, response: unknown): Promise<Reply> {
    const call = { tool_name: tool, tool_input: input, tool_use_id: `toolu_${++this.#n}` };
    const reply = await hook(this.dir, { hook_event_name: "PreToolUse", ...call });
    this.replies.push(reply);
    if (!reply.denied)
      await hook(this.dir, { hook_event_name: "PostToolUse", ...call, tool_response: response });
    return reply;
  }

  edit(path: string, from: string, to: string): Promise<Reply> {
    return this.call(
      "Edit",
      { file_path: join(this.dir, path), old_string: from, new_string: to },
      {
        filePath: join(this.dir, path),
      },
    );
  }

  stopped(): boolean {
    return this.replies.some((r) => /circuit breaker is (now )?open/i.test(r.reason));
  }
}

function project(): string {
  const dir = tempDir("reins-live-");
  writeFileSync(join(dir, "reins.config.json"), "{}");
  writeFileSync(join(dir, "setup.py"), "from setuptools import setup\nsetup()\n");
  return dir;
}

describe("the breaker's ignored-denials rule, on live scripted agents", () => {
  it("stops an agent that repeats a denied call unchanged", async () => {
    const agent = new ScriptedAgent(project());
    await agent.start();
    // The same change written again and again: reins denies it as a loop; this agent sends it again as is.
    let denies = 0;
    for (let i = 0; i < 8 && !agent.stopped(); i++)
      if ((await agent.edit("pkg/core.py", "return value", "return unit(value)")).denied) denies += 1;
    expect(denies).toBeGreaterThanOrEqual(2);
    expect(agent.stopped()).toBe(true);
    const stop = agent.replies.find((r) => /circuit breaker is now open/.test(r.reason));
    expect(stop?.reason).toMatch(/was denied \d+ times and made again/);
  }, 120_000);

  it("leaves alone an agent that changes course after a deny", async () => {
    const agent = new ScriptedAgent(project());
    await agent.start();
    let denied: Reply | null = null;
    for (let i = 0; i < 8 && denied === null; i++) {
      const reply = await agent.edit("pkg/core.py", "return value", "return unit(value)");
      if (reply.denied) denied = reply;
    }
    expect(denied?.reason).toMatch(/same change/);
    // It does what it was told: reads the file, runs the check, then makes a different change.
    const path = join(agent.dir, "pkg/core.py");
    await agent.call("Read", { file_path: path }, { type: "text", file: { filePath: path, content: "x" } });
    await agent.call("Bash", { command: "python -m pytest -q" }, { stdout: "1 failed, 3 passed in 0.2s" });
    expect((await agent.edit("pkg/core.py", "def unit(v):", "def unit(v, scale=1):")).denied).toBe(false);
    await agent.call("Bash", { command: "python -m pytest -q" }, { stdout: "4 passed in 0.2s" });
    expect(agent.stopped()).toBe(false);
  }, 120_000);
});
