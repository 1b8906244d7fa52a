/**
 * The fingerprint of a working tree: the git tree id its content would have if every change (tracked,
 * untracked, deleted; ignored files and `.reins/` aside) were staged. It is taken in a temporary index, so
 * the project's own index and HEAD are left as they are, and it does not move when the work is committed:
 * it names the content, not the history.
 */
import { execFile } from "node:child_process";
import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ReinsError } from "../../base/core/errors.js";
import { REPO_OVERRIDES } from "../git/git.js";

/** git's id of the empty tree: the base of a repository without commits. */
export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of REPO_OVERRIDES) delete env[name];
  return { ...env, LC_ALL: "C", GIT_TERMINAL_PROMPT: "0", ...extra };
}

/** Runs git in `cwd`; an exit code outside `ok` is a ReinsError naming the command and git's first line. */
function git(
  cwd: string,
  args: string[],
  options: { env?: Record<string, string>; ok?: readonly number[] } = {},
): Promise<{ code: number; stdout: string }> {
  const ok = options.ok ?? [0];
  return new Promise((done, fail) => {
    const child = execFile(
      "git",
      args,
      { cwd, env: gitEnv(options.env), encoding: "utf8", maxBuffer: 16 * 1024 * 1024, timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : error.code;
        if (typeof code === "number" && ok.includes(code)) return done({ code, stdout });
        const line = stderr.split("\n").find((l) => l.trim() !== "") ?? error?.message ?? "";
        fail(new ReinsError("git_failed", `git ${args[0] ?? ""} failed in ${cwd}: ${line.trim()}`));
      },
    );
    child.stdin?.end();
  });
}

/** Whether `root` is inside a git working tree. */
export async function isGitTree(root: string): Promise<boolean> {
  try {
    return (await git(root, ["rev-parse", "--is-inside-work-tree"])).stdout.trim() === "true";
  } catch {
    return false;
  }
}

/** The commit HEAD points at, or null in a repository without commits. */
export async function headCommit(root: string): Promise<string | null> {
  const ran = await git(root, ["rev-parse", "-q", "--verify", "HEAD^{commit}"], { ok: [0, 1] });
  return ran.code === 0 ? ran.stdout.trim() : null;
}

/**
 * The tree id of the working tree under `root` as it is now (see the file's comment). Equal fingerprints
 * mean the same content; any edit, new file or deletion changes it.
 */
export async function treeFingerprint(root: string): Promise<string> {
  if (!(await isGitTree(root)))
    throw new ReinsError(
      "usage",
      `${root} is not a git working tree: reins tells an edit after a verify by git, so it needs one (git init)`,
    );
  const dir = await mkdtemp(join(tmpdir(), "reins-tree-"));
  const index = join(dir, "index");
  try {
    // Starting from the project's index keeps git's stat cache: only changed files are hashed again.
    const own = resolve(root, (await git(root, ["rev-parse", "--git-path", "index"])).stdout.trim());
    await copyFile(own, index).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
    });
    const env = { GIT_INDEX_FILE: index };
    // An exclusion naming an ignored path makes `git add` fail; an ignored `.reins/` stays out on its own.
    const ignored = (await git(root, ["check-ignore", "-q", ".reins"], { ok: [0, 1] })).code === 0;
    await git(root, ["add", "-A", "--", ".", ...(ignored ? [] : [":(exclude).reins"])], { env });
    // The project's index may hold `.reins/` files (committed by mistake): they are not the work either.
    await git(root, ["rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", ".reins"], { env });
    return (await git(root, ["write-tree"], { env })).stdout.trim();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The paths that differ between two fingerprints (tree ids) of the same repository, at most `max`. */
export async function changedBetween(root: string, from: string, to: string, max = 20): Promise<string[]> {
  try {
    const ran = await git(root, ["diff-tree", "-r", "-z", "--no-renames", "--name-only", from, to]);
    return ran.stdout
      .split("\0")
      .filter((f) => f !== "")
      .slice(0, max);
  } catch {
    return [];
  }
}
