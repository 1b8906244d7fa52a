import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { run } from "../../src/cli/run.js";

/** `reins init copilot`: reins' own hooks file for GitHub Copilot CLI, in the project or the user's home. */

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function project(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "reins-init-copilot-")));
  dirs.push(dir);
  execFileSync("git", ["init", "-q"], { cwd: dir });
  writeFileSync(join(dir, "reins.config.json"), "{}");
  return dir;
}

async function reins(dir: string, env: Record<string, string>, ...argv: string[]) {
  const io = memoryIo({ cwd: dir, env: { HOME: join(dir, "home"), ...env } });
  const code = await run(argv, io);
  return { code, out: io.out.join(""), err: io.err.join("") };
}

const EVENTS = [
  "sessionStart",
  "userPromptSubmitted",
  "preToolUse",
  "postToolUse",
  "postToolUseFailure",
  "agentStop",
  "sessionEnd",
];

describe("reins init copilot", () => {
  it("writes .github/hooks/reins.json in Copilot's form, keeps it out of git, and takes it out again", async () => {
    const dir = project();
    const first = await reins(dir, {}, "init", "copilot");
    expect(first.code, first.err).toBe(0);
    expect(first.out).toContain("added reins hooks for 7 event(s)");
    expect(first.out).toMatch(/not contained: .*Copilot CLI's sandbox/);
    const file = join(dir, ".github", "hooks", "reins.json");
    const written = JSON.parse(readFileSync(file, "utf8")) as {
      version: number;
      hooks: Record<string, { type: string; bash: string; timeoutSec: number }[]>;
    };
    expect(written.version).toBe(1);
    expect(Object.keys(written.hooks)).toEqual(EVENTS);
    for (const entries of Object.values(written.hooks)) {
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ type: "command", timeoutSec: 30 });
      // The compiled client (or the shell one) to the user's hook daemon.
      expect(entries[0]?.bash).toMatch(/reins-hook" copilot /);
    }
    expect(readFileSync(join(dir, ".git", "info", "exclude"), "utf8")).toContain(".github/hooks/reins.json");
    expect(execFileSync("git", ["status", "--porcelain"], { cwd: dir, encoding: "utf8" })).not.toContain(
      ".github",
    );

    expect((await reins(dir, {}, "init", "copilot")).out).toContain("reins hooks already in");
    const removed = await reins(dir, {}, "init", "copilot", "--uninstall");
    expect(removed.out).toContain("removed 7 reins hook(s)");
    expect(existsSync(file)).toBe(false);
  });

  it("with --user, writes the hooks into $COPILOT_HOME/hooks/", async () => {
    const dir = project();
    const home = join(dir, "copilot-home");
    const done = await reins(dir, { COPILOT_HOME: home }, "init", "copilot", "--user");
    expect(done.code, done.err).toBe(0);
    expect(existsSync(join(home, "hooks", "reins.json"))).toBe(true);
    expect(existsSync(join(dir, ".github"))).toBe(false);
  });
});
