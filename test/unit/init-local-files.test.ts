/** `reins init` leaves the tree as it found it: what it writes is kept out of git, and taken away again. */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { run } from "../../src/cli/run.js";
import { Git } from "../../src/run/git/git.js";
import { dirtyTreeLine } from "../../src/base/config/local-files.js";

function repo(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "reins-init-local-")));
  const git = (...args: string[]) => execFileSync("git", ["-C", dir, ...args], { stdio: "ignore" });
  git("init", "-q");
  git("config", "user.email", "t@example.com");
  git("config", "user.name", "t");
  writeFileSync(join(dir, "README.md"), "# app\n");
  git("add", "README.md");
  git("commit", "-qm", "start");
  return dir;
}

async function reins(dir: string, ...argv: string[]) {
  const io = memoryIo({ cwd: dir, env: { HOME: join(dir, "..", `${dir.split("/").pop()}-home`) } });
  const code = await run(argv, io);
  return { code, out: io.out.join(""), err: io.err.join("") };
}

const status = (dir: string) =>
  execFileSync("git", ["-C", dir, "status", "--porcelain", "--untracked-files=all"], { encoding: "utf8" });
const exclude = (dir: string) => readFileSync(join(dir, ".git", "info", "exclude"), "utf8");

describe("reins init and git", () => {
  it("keeps every file it writes out of git, so the tree is clean and reins run can start", async () => {
    const dir = repo();
    const before = exclude(dir);
    for (const args of [["claude"], ["codex"], ["gemini"], ["claude", "--mcp"], ["codex", "--mcp"]]) {
      const result = await reins(dir, "init", ...args);
      expect(result.code, result.err).toBe(0);
    }
    expect(status(dir)).toBe("");
    expect(await new Git(dir).dirtyFiles()).toEqual([]);
    for (const file of [
      ".claude/settings.local.json",
      ".codex/hooks.json",
      ".gemini/settings.json",
      ".mcp.json",
    ])
      expect(exclude(dir)).toContain(`/${file}\n`);
    expect(exclude(dir).startsWith(before)).toBe(true);
  });

  it("on --uninstall removes the files and folders it made and its exclude lines, and nothing of the user's", async () => {
    const dir = repo();
    const before = exclude(dir);
    // A file of the user's that reins adds to: it stays, with the user's content only.
    mkdirSync(join(dir, ".gemini"));
    writeFileSync(join(dir, ".gemini", "settings.json"), JSON.stringify({ theme: "dark" }));
    for (const agent of ["claude", "codex", "gemini"]) expect((await reins(dir, "init", agent)).code).toBe(0);
    const removed: string[] = [];
    for (const agent of ["claude", "codex", "gemini"]) {
      const result = await reins(dir, "init", agent, "--uninstall");
      expect(result.code, result.err).toBe(0);
      removed.push(result.out);
    }
    expect(removed.join("")).toMatch(/removed \.claude\/settings\.local\.json, which reins had made/);
    expect(existsSync(join(dir, ".claude"))).toBe(false);
    expect(existsSync(join(dir, ".codex"))).toBe(false);
    expect(JSON.parse(readFileSync(join(dir, ".gemini", "settings.json"), "utf8"))).toEqual({
      theme: "dark",
    });
    // The user's file was untracked and not excluded before: so it is again, once reins' hooks are out of it.
    expect(exclude(dir)).not.toContain("/.claude/settings.local.json");
    expect(exclude(dir)).not.toContain("/.codex/hooks.json");
    expect(status(dir)).toBe("?? .gemini/settings.json\n");
    expect(exclude(dir)).toBe(before);
  });

  it("leaves a tracked settings file tracked, and says that reins' hooks in it are a change to commit or not", async () => {
    const dir = repo();
    mkdirSync(join(dir, ".codex"));
    writeFileSync(join(dir, ".codex", "hooks.json"), "{}\n");
    execFileSync("git", ["-C", dir, "add", ".codex/hooks.json"]);
    execFileSync("git", ["-C", dir, "commit", "-qm", "codex hooks"]);
    const result = await reins(dir, "init", "codex");
    expect(result.out).toMatch(
      /\.codex\/hooks\.json is tracked by git: reins' hooks in it name this machine's paths/,
    );
    expect(exclude(dir)).not.toContain("/.codex/hooks.json");
  });

  it("says nothing of git outside a repository", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "reins-init-nogit-")));
    const result = await reins(dir, "init", "claude");
    expect(result.code).toBe(0);
    expect(result.out).not.toMatch(/out of git|tracked by git/);
    expect((await reins(dir, "init", "claude", "--uninstall")).out).toMatch(
      /removed \.claude\/settings\.local\.json/,
    );
    expect(existsSync(join(dir, ".claude"))).toBe(false);
  });

  it("never tells to commit a file that holds reins' hooks: reins run says to keep it out of git instead", async () => {
    const dir = repo();
    expect((await reins(dir, "init", "claude")).code).toBe(0);
    // What an older reins left: its hooks in an untracked file nothing keeps out of git.
    writeFileSync(join(dir, ".git", "info", "exclude"), "");
    writeFileSync(join(dir, "notes.txt"), "mine\n");
    const dirty = await new Git(dir).dirtyFiles();
    expect(dirty.sort()).toEqual([".claude/settings.local.json", "notes.txt"]);
    const line = dirtyTreeLine(dir, dirty, "reins run");
    expect(line).toMatch(
      /^the working tree has uncommitted changes \(notes\.txt\): commit or stash them before reins run/,
    );
    expect(line).toMatch(
      /; \.claude\/settings\.local\.json holds reins' hooks with this machine's paths \(or a secret\): never commit them/,
    );
    expect(line).not.toMatch(/commit or stash them[^;]*settings\.local/);
    // And once init ran again, only the user's own change is in the way.
    await reins(dir, "init", "claude");
    expect(await new Git(dir).dirtyFiles()).toEqual(["notes.txt"]);
  });
});
