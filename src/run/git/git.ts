/** The git port of `reins run`, over the git CLI: branches, diffs, commits, worktrees, set-aside changes. */
import { execFile } from "node:child_process";
import { createReadStream } from "node:fs";
import { lstat, rm } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import pRetry from "p-retry";
import { ReinsError } from "../../base/core/errors.js";
import { firstLine } from "../../base/text/first-line.js";

/**
 * The git port of `reins run`, over the `git` CLI: stable English output (`LC_ALL=C`), never a prompt
 * (`GIT_TERMINAL_PROMPT=0`, `GIT_EDITOR=true`), and a few quick retries when another git holds
 * `index.lock`. reins' own state directory `.reins/` is never staged, cleaned or reported as a change.
 *
 * Identity: a repository without `user.name` / `user.email` (in any config git reads) still gets commits,
 * as `reins <reins@localhost>` through `-c user.name=reins -c user.email=reins@localhost`; a configured
 * identity (or `GIT_AUTHOR_*` / `GIT_COMMITTER_*` in the environment) wins.
 */

/** reins' state directory, relative to the working tree. */
const STATE_DIR = ".reins";

/** Pathspec for "everything but reins' state". */
const ALL_BUT_STATE = [".", `:(exclude)${STATE_DIR}`];

/** Default bound on `diff()` text. */
export const MAX_DIFF_BYTES = 256 * 1024;

/** Variables that would point git at another repository or index than this working tree's. */
export const REPO_OVERRIDES = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_COMMON_DIR",
  "GIT_PREFIX",
  "GIT_NAMESPACE",
];

/** A git command that failed: the command, its exit code and the first line of its stderr. */
export class GitError extends ReinsError {
  constructor(
    readonly command: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(
      "git_failed",
      `${command} failed${exitCode === null ? "" : ` (exit ${exitCode})`}: ${stderr || "no message"}`,
    );
    this.name = "GitError";
  }

  /** Whether the failure is another git holding the index lock: worth a retry. */
  get lockedIndex(): boolean {
    return /index\.lock/.test(this.stderr);
  }
}

export interface GitOptions {
  /** Added to git's environment (after the fixed `LC_ALL`, prompt and editor settings are applied under it). */
  env?: Record<string, string>;
  /** Retries while another git holds `index.lock`: the first after `minTimeoutMs`, doubling. @default { retries: 6, minTimeoutMs: 50 } */
  lockRetry?: { retries: number; minTimeoutMs: number };
  /** Longest one git command may take. @default 120000 */
  timeoutMs?: number;
}

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** The result of a cherry-pick: the new commit, or a conflict (already aborted, the tree as before). */
export type CherryPick = { ok: true; sha: string } | { ok: false; conflict: true; files: string[] };

/**
 * Git in one working tree. `cwd` must be the top of the repository or of a worktree: `.reins/` is found
 * there, and the paths it returns are relative to it.
 */
export class Git {
  readonly #env: NodeJS.ProcessEnv;
  readonly #retry: { retries: number; minTimeoutMs: number };
  readonly #timeoutMs: number;
  #identity: Promise<string[]> | undefined;

  constructor(
    readonly cwd: string,
    options: GitOptions = {},
  ) {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of REPO_OVERRIDES) delete env[name];
    this.#env = {
      ...env,
      LC_ALL: "C",
      GIT_TERMINAL_PROMPT: "0",
      GIT_EDITOR: "true",
      GIT_SEQUENCE_EDITOR: "true",
      GIT_MERGE_AUTOEDIT: "no",
      GIT_PAGER: "cat",
      ...options.env,
    };
    this.#retry = options.lockRetry ?? { retries: 6, minTimeoutMs: 50 };
    this.#timeoutMs = options.timeoutMs ?? 120_000;
  }

  /** Whether `cwd` is inside a git working tree. */
  async isRepo(): Promise<boolean> {
    try {
      const ran = await this.#git(["rev-parse", "--is-inside-work-tree"], { ok: [0, 128] });
      return ran.code === 0 && ran.stdout.trim() === "true";
    } catch {
      return false; // no such directory, no git
    }
  }

  /** Changed, staged and untracked files (not ignored ones, not `.reins/`); empty means a clean tree. */
  async dirtyFiles(): Promise<string[]> {
    const ran = await this.#git([
      "status",
      "--porcelain=v1",
      "-z",
      "--untracked-files=all",
      "--",
      ...ALL_BUT_STATE,
    ]);
    const files: string[] = [];
    const entries = ran.stdout.split("\0");
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i] ?? "";
      if (entry.length < 4) continue;
      files.push(entry.slice(3));
      // A rename or copy is followed by its source path.
      if (/[RC]/.test(entry.slice(0, 2))) files.push(entries[++i] ?? "");
    }
    return [...new Set(files.filter((f) => f !== "" && !isState(f)))];
  }

  /** The commit HEAD points at, or null in a repository without commits. */
  async head(): Promise<string | null> {
    const ran = await this.#git(["rev-parse", "-q", "--verify", "HEAD^{commit}"], { ok: [0, 1] });
    return ran.code === 0 ? ran.stdout.trim() : null;
  }

  /** The checked-out branch's short name, or null on a detached HEAD. */
  async currentBranch(): Promise<string | null> {
    const ran = await this.#git(["symbolic-ref", "-q", "--short", "HEAD"], { ok: [0, 1] });
    return ran.code === 0 ? ran.stdout.trim() : null;
  }

  async branchExists(name: string): Promise<boolean> {
    const ran = await this.#git(["show-ref", "--verify", "--quiet", `refs/heads/${name}`], { ok: [0, 1] });
    return ran.code === 0;
  }

  /** Creates branch `name` at `from` (a commit or ref) without checking it out. */
  async createBranch(name: string, from: string): Promise<void> {
    await this.#git(["branch", "--no-track", name, from]);
  }

  async checkout(name: string): Promise<void> {
    await this.#git(["checkout", "-q", name]);
  }

  /**
   * Stages every change but `.reins/` and commits it; returns the new commit, or null when there was nothing
   * to commit (unless `allowEmpty`: a task proven with no change still gets its commit). The message is kept as given (trailers such as `Reins-Task: <run>/<task>` included); the
   * repository's commit hooks run, so a hook that refuses fails the commit with a GitError.
   */
  async commitAll(message: string, options: { allowEmpty?: boolean } = {}): Promise<string | null> {
    // `git add` fails when a pathspec names an ignored path, as the exclusion does when `.reins/` is
    // ignored (the usual case): then the ignore rule keeps it out on its own.
    const ignored = await this.#git(["check-ignore", "-q", STATE_DIR], { ok: [0, 1] });
    await this.#git(["add", "-A", "--", ...(ignored.code === 0 ? ["."] : ALL_BUT_STATE)]);
    const staged = await this.#git(["diff", "--cached", "--quiet"], { ok: [0, 1] });
    if (staged.code === 0 && options.allowEmpty !== true) return null;
    await this.#git([
      ...(await this.#identityArgs()),
      "commit",
      "-q",
      "--cleanup=whitespace",
      ...(staged.code === 0 ? ["--allow-empty"] : []),
      "-m",
      message,
    ]);
    const head = await this.head();
    if (head === null) throw new GitError("git commit", null, "no commit after committing");
    return head;
  }

  /**
   * Puts the tree back at `sha`: tracked files reset, untracked files removed (ignored files and `.reins/`
   * are kept).
   */
  async resetHard(sha: string): Promise<void> {
    await this.#git(["reset", "-q", "--hard", sha]);
    await this.clean();
  }

  /** Removes untracked files and directories, never ignored ones and never `.reins/`. */
  async clean(): Promise<void> {
    await this.#git(["clean", "-q", "-f", "-d", "-e", `/${STATE_DIR}`, "--", ...ALL_BUT_STATE]);
  }

  /**
   * The files changed against `base` (staged, unstaged and untracked, `.reins/` aside) and the lines changed:
   * added plus deleted for tracked files, every line of an untracked text file. Binary files count no lines.
   */
  async diffStat(base: string): Promise<{ files: string[]; lines: number }> {
    const numstat = await this.#git([
      "diff",
      "--numstat",
      "-z",
      "--no-renames",
      base,
      "--",
      ...ALL_BUT_STATE,
    ]);
    const files: string[] = [];
    let lines = 0;
    for (const entry of numstat.stdout.split("\0")) {
      const m = /^(\d+|-)\t(\d+|-)\t(.*)$/s.exec(entry);
      if (m === null) continue;
      files.push(m[3] ?? "");
      lines += (m[1] === "-" ? 0 : Number(m[1])) + (m[2] === "-" ? 0 : Number(m[2]));
    }
    for (const file of await this.#untracked()) {
      files.push(file);
      lines += await countLines(join(this.cwd, file));
    }
    return { files: [...new Set(files)], lines };
  }

  /**
   * The diff of the tree against `base` as text (untracked files as new files), cut at `maxBytes` with a
   * closing line saying so.
   */
  async diff(base: string, maxBytes = MAX_DIFF_BYTES): Promise<string> {
    const tracked = await this.#git(
      ["diff", "--no-color", "--no-ext-diff", "--no-renames", base, "--", ...ALL_BUT_STATE],
      {
        maxBuffer: maxBytes,
      },
    );
    let text = tracked.stdout;
    for (const file of await this.#untracked()) {
      if (Buffer.byteLength(text) >= maxBytes) break;
      const added = await this.#git(
        ["diff", "--no-color", "--no-ext-diff", "--no-index", "--", "/dev/null", file],
        {
          ok: [0, 1],
          maxBuffer: maxBytes,
        },
      );
      text += added.stdout;
    }
    const bytes = Buffer.from(text);
    if (bytes.length <= maxBytes) return text;
    return `${bytes.subarray(0, maxBytes).toString("utf8")}\n[… diff cut at ${maxBytes} bytes]\n`;
  }

  /** The diff of `files` in the tree against `base` as text, cut at `maxBytes`. */
  async diffFiles(base: string, files: readonly string[], maxBytes = MAX_DIFF_BYTES): Promise<string> {
    const ran = await this.#git(
      [
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-renames",
        base,
        "--",
        ...files.map((f) => `:(literal)${f}`),
      ],
      { maxBuffer: maxBytes * 2 },
    );
    return Buffer.from(ran.stdout).subarray(0, maxBytes).toString("utf8");
  }

  /**
   * The newest commit reachable from HEAD whose message has `line` as one of its lines (exactly, after
   * trimming), such as the trailer `Reins-Task: <run>/<task>`; null when none has.
   */
  async findCommit(line: string): Promise<string | null> {
    if ((await this.head()) === null) return null;
    const wanted = line.trim();
    const ran = await this.#git([
      "log",
      "--format=%H%x00%B%x00",
      "--fixed-strings",
      `--grep=${wanted}`,
      "HEAD",
    ]);
    const parts = ran.stdout.split("\0");
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const sha = (parts[i] ?? "").trim();
      if ((parts[i + 1] ?? "").split("\n").some((l) => l.trim() === wanted)) return sha;
    }
    return null;
  }

  /** Adds a worktree at `path` checked out at `ref`: detached, or on a new branch `branch` when given. */
  async worktreeAdd(path: string, ref: string, options: { branch?: string } = {}): Promise<void> {
    const where = options.branch === undefined ? ["--detach"] : ["-b", options.branch];
    await this.#git(["worktree", "add", "-q", ...where, path, ref]);
  }

  /** Removes the worktree at `path`, changes and all; a worktree whose directory is already gone is pruned. */
  async worktreeRemove(path: string): Promise<void> {
    const ran = await this.#git(["worktree", "remove", "--force", "--force", path], { ok: [0, 128] });
    if (ran.code !== 0) {
      const exists = await lstat(path).then(
        () => true,
        () => false,
      );
      if (exists) throw new GitError(`git worktree remove ${path}`, ran.code, firstLine(ran.stderr));
      await this.#git(["worktree", "prune"]);
    }
  }

  /**
   * Applies commit `sha` on top of HEAD, keeping its message (and so its trailers). On a conflict the
   * cherry-pick is aborted, leaving the tree as it was, and the conflicting files are returned. A commit
   * whose change is already there still gets a (empty) commit, so its trailer is found on the branch.
   */
  async cherryPick(sha: string): Promise<CherryPick> {
    const ran = await this.#git(
      [...(await this.#identityArgs()), "cherry-pick", "--keep-redundant-commits", sha],
      {
        ok: [0, 1],
      },
    );
    if (ran.code === 0) return { ok: true, sha: (await this.head()) ?? "" };
    const unmerged = await this.#git(["diff", "--name-only", "-z", "--diff-filter=U"]);
    const files = unmerged.stdout.split("\0").filter((f) => f !== "");
    const picking = await this.#git(["rev-parse", "-q", "--verify", "CHERRY_PICK_HEAD"], { ok: [0, 1] });
    if (picking.code !== 0) throw new GitError(`git cherry-pick ${sha}`, ran.code, firstLine(ran.stderr));
    await this.#git(["cherry-pick", "--abort"]);
    return { ok: false, conflict: true, files };
  }

  /**
   * The files the tree changed against `base` (tracked and untracked, `.reins/` aside), each with whether it
   * is gone from the tree (deleted).
   */
  async changes(base: string): Promise<{ path: string; gone: boolean; added: boolean }[]> {
    const ran = await this.#git([
      "diff",
      "--name-status",
      "-z",
      "--no-renames",
      base,
      "--",
      ...ALL_BUT_STATE,
    ]);
    const fields = ran.stdout.split("\0");
    const out: { path: string; gone: boolean; added: boolean }[] = [];
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const status = fields[i] ?? "";
      const path = fields[i + 1] ?? "";
      if (path !== "" && !isState(path))
        out.push({ path, gone: status.startsWith("D"), added: status.startsWith("A") });
    }
    const seen = new Set(out.map((c) => c.path));
    for (const path of await this.#untracked())
      if (!seen.has(path)) out.push({ path, gone: false, added: true });
    return out;
  }

  /**
   * Saves the whole working tree (tracked and untracked files, ignored ones and `.reins/` aside) as a commit
   * object under `ref`, with `message`, through an index of its own: neither the real index nor the tree is
   * touched, and no hook runs. Returns the commit.
   */
  async saveTree(ref: string, message: string): Promise<string> {
    const gitPath = (
      await this.#git(["rev-parse", "--git-path", `reins-index-${process.pid}`])
    ).stdout.trim();
    const index = isAbsolute(gitPath) ? gitPath : join(this.cwd, gitPath);
    const env = { GIT_INDEX_FILE: index };
    try {
      await this.#git(["read-tree", "HEAD"], { env });
      const ignored = await this.#git(["check-ignore", "-q", STATE_DIR], { ok: [0, 1] });
      await this.#git(["add", "-A", "--", ...(ignored.code === 0 ? ["."] : ALL_BUT_STATE)], { env });
      const tree = (await this.#git(["write-tree"], { env })).stdout.trim();
      const commit = (
        await this.#git([...(await this.#identityArgs()), "commit-tree", tree, "-p", "HEAD", "-m", message])
      ).stdout.trim();
      await this.#git(["update-ref", ref, commit]);
      return commit;
    } finally {
      await rm(index, { force: true });
    }
  }

  /**
   * Puts `files` into the working tree as they are in the commit `source`, and removes those of them it
   * does not hold; the index is left as it is.
   */
  async putFiles(source: string, files: readonly string[]): Promise<void> {
    for (let i = 0; i < files.length; i += 200) {
      const chunk = files.slice(i, i + 200);
      const listed = await this.#git([
        "--literal-pathspecs",
        "ls-tree",
        "-r",
        "-z",
        "--name-only",
        source,
        "--",
        ...chunk,
      ]);
      const held = new Set(listed.stdout.split("\0").filter((f) => f !== ""));
      const present = chunk.filter((f) => held.has(f));
      if (present.length > 0)
        await this.#git([
          "--literal-pathspecs",
          "restore",
          `--source=${source}`,
          "--worktree",
          "--",
          ...present,
        ]);
      for (const file of chunk) if (!held.has(file)) await rm(join(this.cwd, file), { force: true });
    }
  }

  /** The files the commit `commit` holds (`.reins/` aside). */
  async filesAt(commit: string): Promise<string[]> {
    const ran = await this.#git(["ls-tree", "-r", "-z", "--name-only", commit]);
    return ran.stdout.split("\0").filter((f) => f !== "" && !isState(f));
  }

  /** The text of `path` as the commit `commit` holds it; null when it holds no such file. */
  async fileAt(commit: string, path: string): Promise<string | null> {
    const ran = await this.#git(["show", `${commit}:${path}`], { ok: [0, 128] });
    return ran.code === 0 ? ran.stdout : null;
  }

  /**
   * Which of `patterns` (fixed strings) occur in `paths` as the commit `commit` holds them: the set of
   * those found. Paths are taken literally, 200 at a time.
   */
  async occurring(
    commit: string,
    patterns: readonly string[],
    paths: readonly string[],
  ): Promise<Set<string>> {
    const found = new Set<string>();
    if (patterns.length === 0) return found;
    for (let i = 0; i < paths.length; i += 200) {
      const ran = await this.#git(
        [
          "--literal-pathspecs",
          "grep",
          "--no-color",
          "-h",
          "-o",
          "-F",
          "-I",
          ...patterns.flatMap((p) => ["-e", p]),
          commit,
          "--",
          ...paths.slice(i, i + 200),
        ],
        { ok: [0, 1] },
      );
      for (const line of ran.stdout.split("\n")) if (line !== "") found.add(line);
    }
    return found;
  }

  /**
   * The tree object of the working tree as it is (tracked and untracked files, `.reins/` aside), through
   * an index of its own: a hash of its content, for caching what a check said of it.
   */
  async worktreeTree(): Promise<string> {
    const gitPath = (
      await this.#git(["rev-parse", "--git-path", `reins-tree-index-${process.pid}`])
    ).stdout.trim();
    const index = isAbsolute(gitPath) ? gitPath : join(this.cwd, gitPath);
    const env = { GIT_INDEX_FILE: index };
    try {
      await this.#git(["read-tree", "HEAD"], { env });
      const ignored = await this.#git(["check-ignore", "-q", STATE_DIR], { ok: [0, 1] });
      await this.#git(["add", "-A", "--", ...(ignored.code === 0 ? ["."] : ALL_BUT_STATE)], { env });
      return (await this.#git(["write-tree"], { env })).stdout.trim();
    } finally {
      await rm(index, { force: true });
    }
  }

  /** Applies the patch in the file `patch` to the working tree (reversed when `reverse`); the index is left. */
  async applyPatch(patch: string, reverse: boolean): Promise<void> {
    await this.#git(["apply", ...(reverse ? ["-R"] : []), "--whitespace=nowarn", patch]);
  }

  /** The refs under `prefix` (`refs/reins/...`) and the commits they name. */
  async refs(prefix: string): Promise<{ ref: string; sha: string }[]> {
    const ran = await this.#git(["for-each-ref", "--format=%(refname) %(objectname)", prefix]);
    return ran.stdout
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => {
        const [ref = "", sha = ""] = line.split(" ");
        return { ref, sha };
      });
  }

  /** Points `ref` at `sha` (made or moved). */
  async setRef(ref: string, sha: string): Promise<void> {
    await this.#git(["update-ref", ref, sha]);
  }

  /** Checks out `branch` whatever the tree holds (what it held is lost: save it first). */
  async forceCheckout(branch: string): Promise<void> {
    await this.#git(["checkout", "-q", "-f", branch]);
  }

  /** The files that differ between two commits. */
  async changedBetween(a: string, b: string): Promise<string[]> {
    const ran = await this.#git(["diff", "--name-only", "-z", "--no-renames", a, b, "--", ...ALL_BUT_STATE]);
    return ran.stdout.split("\0").filter((f) => f !== "" && !isState(f));
  }

  /**
   * The folders git would take hooks from in this repository: its hooks folder (`.git/hooks`, shared by
   * worktrees) and, when the repository's own config names one, its `core.hooksPath`. Absolute.
   */
  async hooksDirs(): Promise<string[]> {
    const common = (await this.#git(["rev-parse", "--git-common-dir"])).stdout.trim();
    const dirs = [join(isAbsolute(common) ? common : join(this.cwd, common), "hooks")];
    const configured = await this.#git(["config", "--local", "--get", "core.hooksPath"], { ok: [0, 1] });
    const path = configured.stdout.trim();
    if (configured.code === 0 && path !== "") dirs.push(isAbsolute(path) ? path : join(this.cwd, path));
    return dirs;
  }

  /** The best common ancestor of two commits, or null when they have none. */
  async mergeBase(a: string, b: string): Promise<string | null> {
    const ran = await this.#git(["merge-base", a, b], { ok: [0, 1] });
    return ran.code === 0 ? ran.stdout.trim() : null;
  }

  /** Whether commit `a` is `b` or one of its ancestors (false when either is unknown). */
  async isAncestor(a: string, b: string): Promise<boolean> {
    const ran = await this.#git(["merge-base", "--is-ancestor", a, b], { ok: [0, 1, 128] });
    return ran.code === 0;
  }

  /** The parents of a commit. */
  async parents(sha: string): Promise<string[]> {
    const ran = await this.#git(["rev-list", "--parents", "-n", "1", sha]);
    return ran.stdout.trim().split(" ").slice(1);
  }

  /** The commits of a range (`a..b`), newest first. */
  async revList(range: string): Promise<string[]> {
    const ran = await this.#git(["rev-list", range]);
    return ran.stdout.split("\n").filter((line) => line !== "");
  }

  /** Deletes a ref; nothing when it is not there. */
  async deleteRef(ref: string): Promise<void> {
    await this.#git(["update-ref", "-d", ref], { ok: [0, 1] });
  }

  /** The full message of a commit. */
  async message(sha: string): Promise<string> {
    return (await this.#git(["log", "-1", "--format=%B", sha])).stdout;
  }

  /** Untracked files, not ignored, outside `.reins/`. */
  async #untracked(): Promise<string[]> {
    const ran = await this.#git(["ls-files", "--others", "--exclude-standard", "-z", "--", ...ALL_BUT_STATE]);
    return ran.stdout.split("\0").filter((f) => f !== "" && !isState(f));
  }

  /** `-c user.name=reins` / `-c user.email=reins@localhost` for whichever the configuration lacks. */
  #identityArgs(): Promise<string[]> {
    this.#identity ??= (async () => {
      const args: string[] = [];
      for (const [key, fallback] of [
        ["user.name", "reins"],
        ["user.email", "reins@localhost"],
      ] as const) {
        const ran = await this.#git(["config", "--get", key], { ok: [0, 1] });
        if (ran.code !== 0 || ran.stdout.trim() === "") args.push("-c", `${key}=${fallback}`);
      }
      return args;
    })();
    return this.#identity;
  }

  /** Runs git, retrying while another git holds index.lock; exit codes outside `ok` throw a GitError. */
  #git(
    args: string[],
    options: { ok?: number[]; maxBuffer?: number; env?: Record<string, string> } = {},
  ): Promise<Ran> {
    return pRetry(() => this.#once(args, options), {
      retries: this.#retry.retries,
      minTimeout: this.#retry.minTimeoutMs,
      factor: 2,
      maxTimeout: 2_000,
      randomize: false,
      shouldRetry: ({ error }) => error instanceof GitError && error.lockedIndex,
    });
  }

  #once(
    args: string[],
    {
      ok = [0],
      maxBuffer = 64 * 1024 * 1024,
      env,
    }: { ok?: number[]; maxBuffer?: number; env?: Record<string, string> },
  ): Promise<Ran> {
    return new Promise((resolve, reject) => {
      const child = execFile(
        "git",
        // reins' own git calls run with the repository's hooks off: a hook an agent wrote can change
        // nothing reins commits, checks out or resets.
        ["-c", "core.hooksPath=/dev/null", ...args],
        {
          cwd: this.cwd,
          env: env === undefined ? this.#env : { ...this.#env, ...env },
          encoding: "utf8",
          maxBuffer,
          timeout: this.#timeoutMs,
        },
        (error, stdout, stderr) => {
          const code = error === null ? 0 : error.code;
          // A bounded read (diff) that reached maxBuffer keeps what it got.
          if (code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER") return resolve({ code: 0, stdout, stderr });
          if (typeof code === "number" && ok.includes(code)) return resolve({ code, stdout, stderr });
          const message = firstLine(stderr) || (error?.message ?? "");
          reject(new GitError(describe(args), typeof code === "number" ? code : null, message));
        },
      );
      child.stdin?.end();
    });
  }
}

/** Whether a path (relative to the tree) is reins' state. */
const isState = (file: string) => file === STATE_DIR || file.startsWith(`${STATE_DIR}/`);

/** The command for messages: `git` and its arguments, long ones (commit messages) cut. */
function describe(args: string[]): string {
  return [
    "git",
    ...args.map((a) => (a.length > 60 ? `${a.slice(0, 57).split("\n")[0]}…` : a.split("\n")[0])),
  ].join(" ");
}

/**
 * The lines of a file as git counts them: newlines, plus one for a last line without one; a binary file
 * (a NUL in its first 8000 bytes) counts none, a symbolic link one.
 */
async function countLines(path: string): Promise<number> {
  const stat = await lstat(path).catch(() => null);
  if (stat === null) return 0;
  if (stat.isSymbolicLink()) return 1;
  if (!stat.isFile() || stat.size === 0) return 0;
  let lines = 0;
  let seen = 0;
  let last = 0x0a;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    if (seen < 8000 && chunk.subarray(0, 8000 - seen).includes(0)) return 0;
    seen += chunk.length;
    for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) lines++;
    last = chunk[chunk.length - 1] ?? last;
  }
  return last === 0x0a ? lines : lines + 1;
}
