/** Tests of the git port of `reins run` on real repositories. */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ReinsError } from "../../base/core/errors.js";
import { Git, GitError } from "./git.js";

/** No user or system config: the tests see the identity fallback and no one's aliases or hooks. */
const ISOLATED = { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };

let root: string;
let repo: string;
let git: Git;

const sh = (args: string[], cwd = repo) =>
  execFileSync("git", args, {
    cwd,
    env: { ...process.env, ...ISOLATED, LC_ALL: "C" },
    encoding: "utf8",
  }).trim();
const write = (file: string, text: string, cwd = repo) => {
  mkdirSync(join(cwd, file, ".."), { recursive: true });
  writeFileSync(join(cwd, file), text);
};
const read = (file: string, cwd = repo) => readFileSync(join(cwd, file), "utf8");

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "reins-git-"));
  repo = join(root, "repo");
  mkdirSync(repo);
  sh(["init", "-q", "-b", "main"]);
  git = new Git(repo, { env: ISOLATED });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A repository with one commit: a three-line file, a .gitignore (ignoring `*.log` and `.reins/`). */
async function seeded(): Promise<string> {
  write("src/app.txt", "one\ntwo\nthree\n");
  write(".gitignore", "*.log\n");
  const sha = await git.commitAll("seed");
  if (sha === null) throw new Error("no seed commit");
  return sha;
}

describe("Git: repository and branches", () => {
  it("tells a repository from a plain or missing directory", async () => {
    expect(await git.isRepo()).toBe(true);
    expect(await new Git(root, { env: ISOLATED }).isRepo()).toBe(false);
    expect(await new Git(join(root, "missing"), { env: ISOLATED }).isRepo()).toBe(false);
  });

  it("has no head before the first commit, then the commit's sha", async () => {
    expect(await git.head()).toBeNull();
    const sha = await seeded();
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    expect(await git.head()).toBe(sha);
    expect(await git.currentBranch()).toBe("main");
  });

  it("creates a branch from a commit, checks it out, and knows which exist", async () => {
    const sha = await seeded();
    expect(await git.branchExists("reins/run-1")).toBe(false);
    await git.createBranch("reins/run-1", sha);
    expect(await git.branchExists("reins/run-1")).toBe(true);
    expect(await git.currentBranch()).toBe("main");
    await git.checkout("reins/run-1");
    expect(await git.currentBranch()).toBe("reins/run-1");
    await git.checkout(sha);
    expect(await git.currentBranch()).toBeNull();
  });

  it("throws a GitError with the command, exit code and stderr's first line", async () => {
    await seeded();
    const error = await git.checkout("no-such-branch").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitError);
    expect(ReinsError.is(error)).toBe(true);
    const gitError = error as GitError;
    expect(gitError.code).toBe("git_failed");
    expect(gitError.command).toBe("git checkout -q no-such-branch");
    expect(gitError.exitCode).toBe(1);
    expect(gitError.stderr).toBe("error: pathspec 'no-such-branch' did not match any file(s) known to git");
    expect(gitError.message).toBe(`git checkout -q no-such-branch failed (exit 1): ${gitError.stderr}`);
  });
});

describe("Git: dirty tree", () => {
  it("is clean after a commit", async () => {
    await seeded();
    expect(await git.dirtyFiles()).toEqual([]);
  });

  it("lists modified, staged, deleted and untracked files, but not ignored ones or .reins/", async () => {
    await seeded();
    write("src/app.txt", "changed\n");
    write("staged.txt", "new\n");
    sh(["add", "staged.txt"]);
    write("notes/deep/todo.md", "untracked\n");
    write("debug.log", "ignored\n");
    write(".reins/runs/r1/state.json", "{}");
    write(".reins/reins.db", "x");
    expect((await git.dirtyFiles()).sort()).toEqual(["notes/deep/todo.md", "src/app.txt", "staged.txt"]);
  });

  it("lists both paths of a staged rename, and odd file names as they are", async () => {
    await seeded();
    sh(["mv", "src/app.txt", "src/renamed app.txt"]);
    write("tab\there.txt", "x\n");
    expect((await git.dirtyFiles()).sort()).toEqual(["src/app.txt", "src/renamed app.txt", "tab\there.txt"]);
  });

  it("counts a dirty tree in a repository without commits", async () => {
    write("a.txt", "a\n");
    expect(await git.dirtyFiles()).toEqual(["a.txt"]);
  });
});

describe("Git: commits", () => {
  it("commits every change but .reins/, untracked files included", async () => {
    await seeded();
    write("src/app.txt", "one\n");
    write("src/new.txt", "new\n");
    write(".reins/state.json", "{}");
    const sha = await git.commitAll("task 1\n\nReins-Task: r1/t1\n");
    expect(sha).toBe(await git.head());
    expect(sh(["show", "--name-only", "--format=", "HEAD"]).split("\n").sort()).toEqual([
      "src/app.txt",
      "src/new.txt",
    ]);
    expect(sh(["ls-files", ".reins"])).toBe("");
    expect(sh(["log", "-1", "--format=%B"])).toBe("task 1\n\nReins-Task: r1/t1");
  });

  it("returns null when there is nothing to commit (changes under .reins/ are not changes)", async () => {
    const seed = await seeded();
    write(".reins/state.json", "{}");
    expect(await git.commitAll("nothing")).toBeNull();
    expect(await git.head()).toBe(seed);
  });

  it("commits as reins <reins@localhost> when no identity is configured, else as configured", async () => {
    await seeded();
    expect(sh(["log", "-1", "--format=%an <%ae> / %cn <%ce>"])).toBe(
      "reins <reins@localhost> / reins <reins@localhost>",
    );
    sh(["config", "user.name", "Ada"]);
    sh(["config", "user.email", "ada@example.com"]);
    const configured = new Git(repo, { env: ISOLATED });
    write("b.txt", "b\n");
    await configured.commitAll("by ada");
    expect(sh(["log", "-1", "--format=%an <%ae>"])).toBe("Ada <ada@example.com>");
  });

  it("finds the newest commit on the current branch with an exact trailer line", async () => {
    await seeded();
    write("t1.txt", "1\n");
    const t1 = await git.commitAll("task one\n\nReins-Task: run-7/t1");
    write("t10.txt", "10\n");
    const t10 = await git.commitAll("task ten\n\nReins-Task: run-7/t10");
    expect(await git.findCommit("Reins-Task: run-7/t1")).toBe(t1);
    expect(await git.findCommit("Reins-Task: run-7/t10")).toBe(t10);
    expect(await git.findCommit("Reins-Task: run-7/t")).toBeNull();
    expect(await git.findCommit("Reins-Task: run-8/t1")).toBeNull();
    // Not on the current branch: not found.
    await git.createBranch("other", "HEAD~2");
    await git.checkout("other");
    expect(await git.findCommit("Reins-Task: run-7/t1")).toBeNull();
  });

  it("tells whether a commit is on the current branch", async () => {
    await seeded();
    const first = (await git.head())!;
    write("t1.txt", "1\n");
    const second = (await git.commitAll("task one"))!;
    expect(await git.isAncestor(first, "HEAD")).toBe(true);
    await git.createBranch("other", first);
    await git.checkout("other");
    expect(await git.isAncestor(second, "HEAD")).toBe(false);
    expect(await git.isAncestor("0".repeat(40), "HEAD")).toBe(false);
  });

  it("finds nothing in a repository without commits", async () => {
    expect(await git.findCommit("Reins-Task: r/t")).toBeNull();
  });
});

describe("Git: rollback", () => {
  it("resets to the last green commit: tracked files restored, new untracked files removed, ignored files and .reins/ kept", async () => {
    const green = await seeded();
    write("src/app.txt", "one\ntwo\n");
    write("src/wip.txt", "half done\n");
    await git.commitAll("red attempt");
    write("src/app.txt", "broken\n");
    write("scratch/deep/tmp.txt", "junk\n");
    write("new.txt", "junk\n");
    sh(["add", "new.txt"]);
    write("build.log", "kept: ignored\n");
    write(".reins/runs/r1/trace.jsonl", "kept: reins state\n");

    await git.resetHard(green);

    expect(await git.head()).toBe(green);
    expect(read("src/app.txt")).toBe("one\ntwo\nthree\n");
    expect(existsSync(join(repo, "src/wip.txt"))).toBe(false);
    expect(existsSync(join(repo, "scratch"))).toBe(false);
    expect(existsSync(join(repo, "new.txt"))).toBe(false);
    expect(read("build.log")).toBe("kept: ignored\n");
    expect(read(".reins/runs/r1/trace.jsonl")).toBe("kept: reins state\n");
    expect(await git.dirtyFiles()).toEqual([]);
  });
});

describe("Git: diffs", () => {
  it("counts staged, unstaged and untracked changes against a base, untracked files by their lines", async () => {
    const base = await seeded();
    write("src/app.txt", "one\nTWO\nthree\nfour\n"); // -1 +2
    write("staged.txt", "a\nb\n"); // +2
    sh(["add", "staged.txt"]);
    write("src/untracked.txt", "x\ny\nz"); // 3 lines, the last without a newline
    write("image.bin", "\u0000\u0001\u0002binary");
    write(".reins/state.json", "{\n}\n");
    write("ignored.log", "1\n2\n");
    const stat = await git.diffStat(base);
    expect(stat.files.sort()).toEqual(["image.bin", "src/app.txt", "src/untracked.txt", "staged.txt"]);
    expect(stat.lines).toBe(3 + 2 + 3);
  });

  it("counts committed changes since the base too", async () => {
    const base = await seeded();
    write("src/app.txt", "one\n");
    await git.commitAll("trim");
    expect(await git.diffStat(base)).toEqual({ files: ["src/app.txt"], lines: 2 });
    expect(await git.diffStat("HEAD")).toEqual({ files: [], lines: 0 });
  });

  it("shows the diff as text, untracked files as new files, bounded", async () => {
    const base = await seeded();
    write("src/app.txt", "one\ntwo\nthree\nfour\n");
    write("added.txt", "brand new\n");
    const text = await git.diff(base);
    expect(text).toContain("+four");
    expect(text).toContain("+++ b/added.txt");
    expect(text).toContain("+brand new");
    write("big.txt", "line\n".repeat(10_000));
    const bounded = await git.diff(base, 1_000);
    expect(Buffer.byteLength(bounded)).toBeLessThan(1_100);
    expect(bounded).toMatch(/\[… diff cut at 1000 bytes\]\n$/);
  });
});

describe("Git: worktrees and cherry-pick", () => {
  it("applies a task's commit from a worktree onto the branch, trailer and all", async () => {
    await seeded();
    const path = join(root, "wt-a");
    await git.worktreeAdd(path, "main");
    const wt = new Git(path, { env: ISOLATED });
    expect(await wt.currentBranch()).toBeNull();
    write("feature.txt", "feature\n", path);
    const picked = await wt.commitAll("feature\n\nReins-Task: r1/a");
    const result = await git.cherryPick(picked ?? "");
    expect(result).toEqual({ ok: true, sha: await git.head() });
    expect(read("feature.txt")).toBe("feature\n");
    expect(await git.findCommit("Reins-Task: r1/a")).toBe(await git.head());
    await git.worktreeRemove(path);
    expect(existsSync(path)).toBe(false);
    expect(sh(["worktree", "list"]).split("\n")).toHaveLength(1);
  });

  it("adds a worktree on a new branch when asked", async () => {
    await seeded();
    const path = join(root, "wt-b");
    await git.worktreeAdd(path, "main", { branch: "reins/r1/b" });
    expect(await new Git(path, { env: ISOLATED }).currentBranch()).toBe("reins/r1/b");
  });

  it("reports a conflict, aborts it and leaves the tree as it was", async () => {
    await seeded();
    const a = join(root, "wt-a");
    const b = join(root, "wt-b");
    await git.worktreeAdd(a, "main");
    await git.worktreeAdd(b, "main");
    write("src/app.txt", "one\nTWO by a\nthree\n", a);
    write("src/app.txt", "one\nTWO by b\nthree\n", b);
    const shaA = await new Git(a, { env: ISOLATED }).commitAll("a");
    const shaB = await new Git(b, { env: ISOLATED }).commitAll("b");
    expect(await git.cherryPick(shaA ?? "")).toMatchObject({ ok: true });
    const head = await git.head();
    expect(await git.cherryPick(shaB ?? "")).toEqual({ ok: false, conflict: true, files: ["src/app.txt"] });
    expect(await git.head()).toBe(head);
    expect(await git.dirtyFiles()).toEqual([]);
    expect(read("src/app.txt")).toBe("one\nTWO by a\nthree\n");
    expect(existsSync(join(repo, ".git/CHERRY_PICK_HEAD"))).toBe(false);
  });

  it("keeps a commit whose change is already on the branch, so its trailer is found", async () => {
    await seeded();
    const path = join(root, "wt");
    await git.worktreeAdd(path, "main");
    write("same.txt", "same\n", path);
    const sha = await new Git(path, { env: ISOLATED }).commitAll("dup\n\nReins-Task: r1/dup");
    write("same.txt", "same\n");
    await git.commitAll("already here");
    const result = await git.cherryPick(sha ?? "");
    expect(result).toMatchObject({ ok: true });
    expect(await git.findCommit("Reins-Task: r1/dup")).toBe(await git.head());
  });

  it("prunes a worktree whose directory is already gone", async () => {
    await seeded();
    const path = join(root, "wt-gone");
    await git.worktreeAdd(path, "main");
    rmSync(path, { recursive: true, force: true });
    await git.worktreeRemove(path);
    expect(sh(["worktree", "list"]).split("\n")).toHaveLength(1);
  });
});

describe("Git: index.lock", () => {
  it("retries while another git holds index.lock, and commits once it is released", async () => {
    await seeded();
    write("more.txt", "more\n");
    const lock = join(repo, ".git/index.lock");
    writeFileSync(lock, "");
    const released = new Promise<void>((done) =>
      setTimeout(() => {
        unlinkSync(lock);
        done();
      }, 100),
    );
    const started = Date.now();
    const sha = await git.commitAll("after the lock");
    await released;
    expect(Date.now() - started).toBeGreaterThanOrEqual(90); // it waited for the lock
    expect(sha).toBe(await git.head());
    expect(sh(["log", "-1", "--format=%s"])).toBe("after the lock");
  });

  it("gives up with a GitError naming the lock when it is never released", async () => {
    await seeded();
    write("more.txt", "more\n");
    writeFileSync(join(repo, ".git/index.lock"), "");
    const impatient = new Git(repo, { env: ISOLATED, lockRetry: { retries: 2, minTimeoutMs: 10 } });
    const error = (await impatient.commitAll("never").catch((e: unknown) => e)) as GitError;
    expect(error).toBeInstanceOf(GitError);
    expect(error.lockedIndex).toBe(true);
    expect(error.command).toBe("git add -A -- . :(exclude).reins");
    expect(error.stderr).toMatch(/^fatal: Unable to create '.*index\.lock': File exists\.$/);
  });

  it("does not retry other failures", async () => {
    await seeded();
    const started = Date.now();
    await expect(git.checkout("missing")).rejects.toBeInstanceOf(GitError);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
