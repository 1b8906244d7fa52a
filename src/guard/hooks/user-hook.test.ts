import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hasProjectReinsHook, isProject, projectHasOwnHooks, userHookAnswer } from "./user-hook.js";

/** The user-level hooks: whose project a call is, and when they stand down or only say they do not guard. */

const dir = realpathSync(mkdtempSync(join(tmpdir(), "reins-user-hook-")));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const settings = (command: string) =>
  JSON.stringify({ hooks: { PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command }] }] } });
const client = '"/p/.reins/bin/reins-hook" claude "/usr/bin/node" "/r/bin/reins.js" d-0123abcd';

describe("the user-level hooks", () => {
  it("know a project hook of reins' from their own and from other programs'", () => {
    expect(hasProjectReinsHook(settings(client), "claude")).toBe(true);
    expect(hasProjectReinsHook(settings(`REINS_HOOK_SCOPE=user ${client}`), "claude")).toBe(false);
    expect(hasProjectReinsHook(settings(client), "codex")).toBe(false);
    expect(hasProjectReinsHook(settings("my-linter --fix"), "claude")).toBe(false);
    const http = {
      hooks: { PreToolUse: [{ hooks: [{ type: "http", url: "http://127.0.0.1:7878/hooks/claude" }] }] },
    };
    expect(hasProjectReinsHook(JSON.stringify(http), "claude")).toBe(true);
    expect(hasProjectReinsHook("not json", "claude")).toBe(false);
  });

  it("count a repository, a worktree's .git file, a .reins/ or a policy file as a project, and nothing else", () => {
    const folder = (name: string, file?: string, dirName?: string) => {
      const path = join(dir, name);
      mkdirSync(path, { recursive: true });
      if (file !== undefined) writeFileSync(join(path, file), "x");
      if (dirName !== undefined) mkdirSync(join(path, dirName));
      return path;
    };
    expect(isProject(folder("repo", undefined, ".git"))).toBe(true);
    expect(isProject(folder("worktree", ".git"))).toBe(true);
    expect(isProject(folder("reins", undefined, ".reins"))).toBe(true);
    expect(isProject(folder("config", "reins.config.json"))).toBe(true);
    expect(isProject(folder("loose"))).toBe(false);
  });

  it("stand down once the project has hooks of its own, and take over again when they are removed", () => {
    const root = join(dir, "own");
    mkdirSync(join(root, ".claude"), { recursive: true });
    mkdirSync(join(root, ".git"));
    const input = { hook_event_name: "PreToolUse" };
    const env = { REINS_HOOK_SCOPE: "user" };
    expect(userHookAnswer("claude", input, root, env)).toBeUndefined();
    writeFileSync(join(root, ".claude", "settings.local.json"), settings(client));
    expect(projectHasOwnHooks("claude", root)).toBe(true);
    expect(userHookAnswer("claude", input, root, env)).toEqual({ reply: null });
    // The project's own hooks are not asked about at all.
    expect(userHookAnswer("claude", input, root, {})).toBeUndefined();
    writeFileSync(join(root, ".claude", "settings.local.json"), "{}\n");
    expect(userHookAnswer("claude", input, root, env)).toBeUndefined();
  });

  it("outside any project, tell a turn's start it is not guarded and let every other call be", () => {
    const loose = join(dir, "nowhere");
    mkdirSync(loose);
    const env = { REINS_HOOK_SCOPE: "user" };
    const start = userHookAnswer("claude", { hook_event_name: "SessionStart" }, loose, env);
    expect(JSON.stringify(start)).toContain(
      `reins: not guarding this session: ${loose} is in no git repository`,
    );
    expect(userHookAnswer("gemini", { hook_event_name: "BeforeTool" }, loose, env)).toEqual({ reply: null });
  });
});
