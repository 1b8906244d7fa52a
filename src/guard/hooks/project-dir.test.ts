import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { HOOK_AGENTS } from "./hook-agents.js";
import { projectOf, runHook } from "./hook-call.js";

/**
 * A hook's project is the one its own agent names: a hook of one agent started inside another agent's
 * session (Codex run from a Claude Code terminal) inherits that agent's variables, which name another project.
 */

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A new project folder (with a policy file, so it is its own root), removed after the tests. */
function projectDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "reins-project-dir-")));
  writeFileSync(join(dir, "reins.config.json"), "{}");
  dirs.push(dir);
  return dir;
}

const inputOf = (agent: string, hookEvent: string, cwd: string) =>
  HOOK_AGENTS[agent]!.input.parse({ session_id: "s1", hook_event_name: hookEvent, cwd });

describe("the project of a hook call", () => {
  it("of a Codex hook is its input's cwd, whatever CLAUDE_PROJECT_DIR or GEMINI_PROJECT_DIR say", () => {
    const env = { CLAUDE_PROJECT_DIR: "/claude", GEMINI_PROJECT_DIR: "/gemini" };
    expect(projectOf(HOOK_AGENTS.codex!, inputOf("codex", "SessionStart", "/codex"), env, "/proc")).toBe(
      "/codex",
    );
  });

  it("of a Claude Code hook is CLAUDE_PROJECT_DIR, not GEMINI_PROJECT_DIR", () => {
    const input = inputOf("claude", "SessionStart", "/cwd");
    expect(projectOf(HOOK_AGENTS.claude!, input, { CLAUDE_PROJECT_DIR: "/claude" }, "/proc")).toBe("/claude");
    expect(projectOf(HOOK_AGENTS.claude!, input, { GEMINI_PROJECT_DIR: "/gemini" }, "/proc")).toBe("/cwd");
  });

  it("of a Gemini CLI hook is GEMINI_PROJECT_DIR, else its alias CLAUDE_PROJECT_DIR", () => {
    const input = inputOf("gemini", "SessionStart", "/cwd");
    const both = { GEMINI_PROJECT_DIR: "/gemini", CLAUDE_PROJECT_DIR: "/claude" };
    expect(projectOf(HOOK_AGENTS.gemini!, input, both, "/proc")).toBe("/gemini");
    expect(projectOf(HOOK_AGENTS.gemini!, input, { CLAUDE_PROJECT_DIR: "/claude" }, "/proc")).toBe("/claude");
    expect(projectOf(HOOK_AGENTS.gemini!, input, {}, "/proc")).toBe("/cwd");
  });

  it("is the process's cwd when neither the environment nor the input names one", () => {
    const input = HOOK_AGENTS.codex!.input.parse({ session_id: "s1", hook_event_name: "SessionStart" });
    expect(projectOf(HOOK_AGENTS.codex!, input, { CLAUDE_PROJECT_DIR: "/claude" }, "/proc")).toBe("/proc");
  });

  it("of a Codex hook run inside a Claude Code session is recorded in Codex's project", async () => {
    const codex = projectDir();
    const claude = projectDir();
    const raw = JSON.stringify({ session_id: "s1", hook_event_name: "SessionStart", cwd: codex });
    const result = await runHook("codex", Buffer.from(raw), { CLAUDE_PROJECT_DIR: claude }, claude);
    expect(result.warning).toBe("");
    expect(existsSync(join(codex, ".reins"))).toBe(true);
    expect(existsSync(join(claude, ".reins"))).toBe(false);
  });
});
