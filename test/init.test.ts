import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
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
  const cases: [string, string[], string, string, string, number][] = [
    ["claude", ["--in-process"], ".claude/settings.json", "PreToolUse", 'reins.js" hook claude', 30],
    ["codex", [], ".codex/hooks.json", "PreToolUse", 'reins-hook" codex', 30],
    ["gemini", [], ".gemini/settings.json", "BeforeTool", 'reins-hook" gemini', 30_000],
  ];
  for (const [agent, flags, file, event, command, timeout] of cases) {
    it(`merges ${agent}'s hooks into ${file}, idempotently, and uninstalls exactly them`, async () => {
      const dir = project();
      const path = join(dir, file);
      mkdirSync(join(path, ".."), { recursive: true });
      const mine = { type: "command", command: "echo mine" };
      writeFileSync(
        path,
        JSON.stringify({ theme: "dark", hooks: { [event]: [{ matcher: "Bash", hooks: [mine] }] } }),
      );

      expect((await reins(dir, "init", agent, ...flags)).out).toMatch(/added reins hooks for \d+ event\(s\)/);
      const installed = read(path);
      expect(installed.theme).toBe("dark");
      expect(installed.hooks[event]?.[0]?.hooks).toEqual([mine]);
      const ours = installed.hooks[event]?.[1]?.hooks[0];
      expect(ours?.command).toContain(command);
      expect(ours?.timeout).toBe(timeout);
      expect(installed.hooks.SessionStart?.[0]?.hooks[0]?.command).toBeDefined();

      expect((await reins(dir, "init", agent, ...flags)).out).toContain("reins hooks already in");
      expect(readFileSync(path, "utf8")).toBe(JSON.stringify(installed, null, 2) + "\n");

      expect((await reins(dir, "init", agent, "--uninstall")).out).toMatch(/removed \d+ reins hook\(s\)/);
      expect(read(path)).toEqual({ theme: "dark", hooks: { [event]: [{ matcher: "Bash", hooks: [mine] }] } });
    });
  }

  it("installs Claude Code's native http hooks by default, in settings.local.json with the project's secret", async () => {
    const dir = project();
    expect((await reins(dir, "init", "claude", "--port", "7999")).code).toBe(0);
    const local = read(join(dir, ".claude", "settings.local.json"));
    // It carries the project's secret: its owner's alone, and .reins/ is never staged by git.
    expect(statSync(join(dir, ".claude", "settings.local.json")).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, ".reins", ".gitignore"), "utf8")).toMatch(/^\*$/m);
    const secret = readFileSync(join(dir, ".reins", "hook-secret"), "utf8").trim();
    for (const event of [
      "PreToolUse",
      "PostToolUse",
      "PostToolUseFailure",
      "Stop",
      "SubagentStop",
      "SessionEnd",
    ]) {
      expect(local.hooks[event]?.[0]?.hooks[0]).toMatchObject({
        type: "http",
        url: "http://127.0.0.1:7999/hooks/claude",
        headers: { Authorization: `Bearer ${secret}` },
      });
    }
    // Session start and each prompt run a command that starts the daemon when it is down.
    for (const event of ["SessionStart", "UserPromptSubmit"])
      expect(local.hooks[event]?.[0]?.hooks[0]?.command).toMatch(
        /reins\.js" hook claude --ensure-daemon --port 7999$/,
      );
  });

  it("moves Claude Code's hooks between the install modes without leaving two sets", async () => {
    const dir = project();
    await reins(dir, "init", "claude", "--in-process");
    expect(read(join(dir, ".claude", "settings.json")).hooks.PreToolUse).toHaveLength(1);
    const moved = await reins(dir, "init", "claude");
    expect(moved.out).toMatch(
      /added reins hooks .*settings\.local\.json\nremoved \d+ reins hook\(s\) from .*settings\.json/,
    );
    expect(read(join(dir, ".claude", "settings.json")).hooks).toBeUndefined();
    await reins(dir, "init", "claude", "--in-process");
    expect(read(join(dir, ".claude", "settings.local.json")).hooks).toBeUndefined();
    expect(read(join(dir, ".claude", "settings.json")).hooks.PreToolUse?.[0]?.hooks[0]?.command).toMatch(
      /reins\.js" hook claude$/,
    );
  });

  it("names a daemon port other than the default in the client's command", async () => {
    const dir = project();
    await reins(dir, "init", "codex", "--port", "7999");
    const command = read(join(dir, ".codex", "hooks.json")).hooks.PreToolUse?.[0]?.hooks[0]?.command;
    expect(command).toMatch(/^REINS_PORT=7999 ".*reins-hook" codex/);
  });

  it("refuses to touch a settings file that is not valid JSON", async () => {
    const dir = project();
    mkdirSync(join(dir, ".claude"));
    writeFileSync(join(dir, ".claude", "settings.json"), "{ broken");
    const { code, err } = await reins(dir, "init", "claude", "--in-process");
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
