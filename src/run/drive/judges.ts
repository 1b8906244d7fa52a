/**
 * What judges an agent's work, kept out of its reach: the branch and commit the run left the tree on,
 * every other branch (the user's), the repository's hooks, and the plan file. Taken before an iteration
 * and compared after it: whatever the agent changed there (a commit, a checkout, a reset, a branch moved,
 * a hook written, the plan edited) is undone, its tree kept as uncommitted changes for the checks to
 * judge, and said in one line each.
 */
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { Git } from "../git/git.js";

/** The judges as an iteration starts (plain JSON: recorded in the trace). */
export interface Judges {
  branch: string | null;
  head: string | null;
  /** Every branch and the commit it names. */
  branches: Record<string, string>;
  /** The files of the hooks folders (see Git.hooksDirs), by path, and their contents (base64). */
  hooks: Record<string, string>;
  /**
   * The plan file in the tree and its content (base64; null when it is not there). The run judges by the
   * plan it started with; an edit would be committed with the task and read by the next run.
   */
  plan?: { path: string; content: string | null };
}

function readPlanFile(path: string): string | null {
  try {
    return readFileSync(path).toString("base64");
  } catch {
    return null;
  }
}

function readHooks(dirs: readonly string[]): Record<string, string> {
  const hooks: Record<string, string> = {};
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const path = join(dir, name);
      try {
        if (statSync(path).isFile()) hooks[path] = readFileSync(path).toString("base64");
      } catch {
        // gone meanwhile
      }
    }
  }
  return hooks;
}

async function branchesOf(git: Git): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const { ref, sha } of await git.refs("refs/heads/")) out[ref.slice("refs/heads/".length)] = sha;
  return out;
}

/** The judges of the tree `git` works in, now, with the plan file at `planPath` when given. */
export async function judgesOf(git: Git, planPath?: string): Promise<Judges> {
  return {
    branch: await git.currentBranch(),
    head: await git.head(),
    branches: await branchesOf(git),
    hooks: readHooks(await git.hooksDirs()),
    ...(planPath !== undefined ? { plan: { path: planPath, content: readPlanFile(planPath) } } : {}),
  };
}

const short = (sha: string | null) => (sha === null ? "none" : sha.slice(0, 12));

/**
 * Puts back every judge the agent changed since `before`, keeping the tree it left as uncommitted changes,
 * and says what it undid, one line each (none when it changed nothing). `scratch` is a ref to hold the
 * agent's tree while the branch is put back. `runBranch` moves with the run's own commits (other tasks'
 * under WIP): it is judged through HEAD, never as one of the other branches.
 */
export async function restoreJudges(
  git: Git,
  before: Judges,
  scratch: string,
  runBranch: string,
): Promise<string[]> {
  const said: string[] = [];
  const now = readHooks(await git.hooksDirs());
  for (const [path, content] of Object.entries(now)) {
    const was = before.hooks[path];
    if (was === content) continue;
    if (was === undefined) {
      rmSync(path, { force: true });
      said.push(`the agent wrote the git hook ${basename(path)}: removed`);
    } else {
      writeFileSync(path, Buffer.from(was, "base64"));
      said.push(`the agent changed the git hook ${basename(path)}: put back`);
    }
  }
  for (const [path, content] of Object.entries(before.hooks))
    if (now[path] === undefined) {
      writeFileSync(path, Buffer.from(content, "base64"), { mode: 0o755 });
      said.push(`the agent removed the git hook ${basename(path)}: put back`);
    }

  const branch = await git.currentBranch();
  const head = await git.head();
  if (before.head !== null && (branch !== before.branch || head !== before.head)) {
    const saved = await git.saveTree(
      scratch,
      "reins: the agent's tree, kept while its git actions are undone",
    );
    if (branch !== before.branch)
      said.push(
        `the agent checked out ${branch ?? `a detached HEAD (${short(head)})`}: back on ${before.branch ?? short(before.head)}`,
      );
    else
      said.push(
        `the agent moved ${branch ?? "HEAD"} from ${short(before.head)} to ${short(head)} (a commit or a reset): put back, its changes kept uncommitted for the checks`,
      );
    if (before.branch !== null) {
      await git.setRef(`refs/heads/${before.branch}`, before.head);
      await git.forceCheckout(before.branch);
    }
    // Its work is what it changed from where its commits and moves started: a commit on top keeps its
    // content; a reset or a checkout keeps only what it changed after it, never the files they moved.
    const from = head === null ? before.head : ((await git.mergeBase(head, before.head)) ?? before.head);
    await git.resetHard(before.head);
    await git.putFiles(saved, await git.changedBetween(from, saved));
    await git.deleteRef(scratch);
  }

  const after = await branchesOf(git);
  for (const [name, sha] of Object.entries(before.branches))
    if (name !== runBranch && after[name] !== sha) {
      await git.setRef(`refs/heads/${name}`, sha);
      said.push(
        `the agent ${after[name] === undefined ? "deleted" : "moved"} branch ${name}: put back at ${short(sha)}`,
      );
    }
  for (const name of Object.keys(after))
    if (name !== runBranch && before.branches[name] === undefined) {
      await git.deleteRef(`refs/heads/${name}`);
      said.push(`the agent made branch ${name}: removed`);
    }

  // Last: undoing a commit or a reset may have brought the agent's edit of the plan back into the tree.
  if (before.plan !== undefined) {
    const { path, content } = before.plan;
    if (readPlanFile(path) !== content) {
      if (content === null) rmSync(path, { force: true });
      else writeFileSync(path, Buffer.from(content, "base64"));
      said.push(
        `the agent edited the plan ${basename(path)}, which judges its work: put back as the run started`,
      );
    }
  }
  return said;
}
