import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { memoryIo } from "../src/cli/io.js";
import { run } from "../src/cli/run.js";

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), "reins-init-"));
  writeFileSync(join(dir, "reins.config.json"), "{}");
  return dir;
}

async function reins(dir: string, ...argv: string[]) {
  const io = memoryIo({ cwd: dir, env: { HOME: join(dir, "home") } });
  const code = await run(argv, io);
  return { code, out: io.out.join(""), err: io.err.join("") };
}

type Hooks = Record<
  string,
  { matcher?: string; hooks: { type: string; command?: string; timeout?: number }[] }[]
>;
const read = (path: string) =>
  JSON.parse(readFileSync(path, "utf8")) as { hooks: Hooks } & Record<string, unknown>;

describe("reins init", () => {
  const cases: [string, string, string, string, number][] = [
    ["claude", ".claude/settings.json", "PreToolUse", 'reins.js" hook claude', 30],
    ["codex", ".codex/hooks.json", "PreToolUse", 'reins-hook" codex', 30],
    ["gemini", ".gemini/settings.json", "BeforeTool", 'reins-hook" gemini', 30_000],
  ];
  for (const [agent, file, event, command, timeout] of cases) {
    it(`merges ${agent}'s hooks into ${file}, idempotently, and uninstalls exactly them`, async () => {
      const dir = project();
      const path = join(dir, file);
      mkdirSync(join(path, ".."), { recursive: true });
      const mine = { type: "command", command: "echo mine" };
      writeFileSync(
        path,
        JSON.stringify({ theme: "dark", hooks: { [event]: [{ matcher: "Bash", hooks: [mine] }] } }),
      );

      expect((await reins(dir, "init", agent)).out).toMatch(/added reins hooks for \d+ event\(s\)/);
      const installed = read(path);
      expect(installed.theme).toBe("dark");
      expect(installed.hooks[event]?.[0]?.hooks).toEqual([mine]);
      const ours = installed.hooks[event]?.[1]?.hooks[0];
      expect(ours?.command).toContain(command);
      expect(ours?.timeout).toBe(timeout);
      expect(installed.hooks.SessionStart?.[0]?.hooks[0]?.command).toBeDefined();

      expect((await reins(dir, "init", agent)).out).toContain("reins hooks already in");
      expect(readFileSync(path, "utf8")).toBe(JSON.stringify(installed, null, 2) + "\n");

      expect((await reins(dir, "init", agent, "--uninstall")).out).toMatch(/removed \d+ reins hook\(s\)/);
      expect(read(path)).toEqual({ theme: "dark", hooks: { [event]: [{ matcher: "Bash", hooks: [mine] }] } });
    });
  }

  it("refuses to touch a settings file that is not valid JSON", async () => {
    const dir = project();
    mkdirSync(join(dir, ".claude"));
    writeFileSync(join(dir, ".claude", "settings.json"), "{ broken");
    const { code, err } = await reins(dir, "init", "claude");
    expect(code).toBe(2);
    expect(err).toMatch(/settings\.json is not valid JSON .*reins did not change it/);
    expect(readFileSync(join(dir, ".claude", "settings.json"), "utf8")).toBe("{ broken");
  });

  it("writes the user's settings with --user, and rejects an unknown agent", async () => {
    const dir = project();
    await reins(dir, "init", "gemini", "--user");
    expect(read(join(dir, "home", ".gemini", "settings.json")).hooks.BeforeTool).toHaveLength(1);
    const unknown = await reins(dir, "init", "cursor");
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('reins init knows claude, codex, gemini, not "cursor"');
  });
});
