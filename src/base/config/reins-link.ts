/**
 * A project guarded only by the user-level hooks keeps its `.reins/` in reins' state folder, linked from
 * the project, so the user-level sandbox (which denies the state folder by its absolute path) keeps it from
 * the agent; a link the agent removed or replaced is put back and said (docs/user-install-hooks.md).
 */
import {
  appendFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { projectStateDir, writePrivate } from "./install-record.js";

/** The real folder behind a linked project's `.reins`: `<stateDir>/projects/<hash>/reins`. */
export function linkedReinsDir(root: string, env: NodeJS.ProcessEnv): string {
  return join(projectStateDir(root, env), "reins");
}

/** Whether the state folder holds a linked `.reins` for the project at `root` (it was made so). */
export function isLinkedProject(root: string, env: NodeJS.ProcessEnv): boolean {
  try {
    return lstatSync(linkedReinsDir(root, env)).isDirectory();
  } catch {
    return false;
  }
}

/** What `<root>/.reins` is: missing, the link to `target`, or something else (a folder, a file, another link). */
function reinsEntry(root: string, target: string): "missing" | "link" | "other" {
  let isLink: boolean;
  try {
    isLink = lstatSync(join(root, ".reins")).isSymbolicLink();
  } catch {
    return "missing";
  }
  if (!isLink) return "other";
  try {
    return readlinkSync(join(root, ".reins")) === target ? "link" : "other";
  } catch {
    return "other";
  }
}

/** Whether `<root>/.reins` is the link reins made into the state folder, intact. */
export function reinsLinkIntact(root: string, env: NodeJS.ProcessEnv): boolean {
  const target = linkedReinsDir(root, env);
  return reinsEntry(root, target) === "link" && isLinkedProject(root, env);
}

/**
 * The git exclude file of the repository at `root` (`.git/info/exclude`, a worktree's in its common
 * folder), or null when `root` holds no `.git`.
 */
function excludeFile(root: string): string | null {
  const git = join(root, ".git");
  try {
    if (statSync(git).isDirectory()) return join(git, "info", "exclude");
    const named = /^gitdir:\s*(.+)$/m.exec(readFileSync(git, "utf8"))?.[1]?.trim();
    if (named === undefined) return null;
    const dir = isAbsolute(named) ? named : resolve(root, named);
    let common = dir;
    try {
      common = resolve(dir, readFileSync(join(dir, "commondir"), "utf8").trim());
    } catch {
      // a submodule's own git folder: its exclude is its own
    }
    return join(common, "info", "exclude");
  } catch {
    return null;
  }
}

/**
 * Keeps git from listing the `.reins` link: a link is a file to git, so the `.gitignore` of `*` inside the
 * folder does not apply to it. `/.reins` goes into the repository's exclude file (once).
 */
function excludeLink(root: string): void {
  const file = excludeFile(root);
  if (file === null) return;
  try {
    const text = existsSync(file) ? readFileSync(file, "utf8") : "";
    if (text.split("\n").includes("/.reins")) return;
    mkdirSync(dirname(file), { recursive: true });
    appendFileSync(file, `${text === "" || text.endsWith("\n") ? "" : "\n"}/.reins\n`);
  } catch {
    // git then shows `.reins` as a new file; nothing reins relies on
  }
}

/** Makes the state folder's side of the link: the real folder (0700) and a `root` file naming the project. */
function makeTarget(root: string, env: NodeJS.ProcessEnv, target: string): void {
  mkdirSync(target, { recursive: true, mode: 0o700 });
  const named = join(projectStateDir(root, env), "root");
  if (!existsSync(named)) writePrivate(named, `${root}\n`);
}

/**
 * With `make` (a project the user-level hooks guard), for a project with no `.reins` yet: makes its `.reins`
 * a link to a folder in the state folder. The link is made first, its target next, so a hook running at the
 * same moment never sees a recorded target without its link (which it would take for tampering). A link
 * whose target is gone (the state folder removed) gets its target again, an empty one. A `.reins` of the
 * project's own is left as it is. Returns whether `.reins` is now such a link.
 */
export function linkReinsDir(root: string, env: NodeJS.ProcessEnv, make: boolean): boolean {
  const target = linkedReinsDir(root, env);
  const entry = reinsEntry(root, target);
  if (entry === "other" || (entry === "missing" && !make)) return false;
  if (entry === "missing") {
    // A target recorded with no link is the agent's doing: restoreReinsLink's to put back and say.
    if (isLinkedProject(root, env)) return false;
    try {
      symlinkSync(target, join(root, ".reins"));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (reinsEntry(root, target) !== "link") return false;
    }
    excludeLink(root);
  }
  makeTarget(root, env, target);
  return true;
}

/** What restoreReinsLink found: the link intact (or none recorded), or what it put right. */
export type LinkRepair =
  { kind: "intact" } | { kind: "restored"; found: "removed" | "replaced"; aside?: string; line: string };

/** The line the model and the person are told of a `.reins` link put back. */
export function restoredLine(root: string, found: "removed" | "replaced", aside?: string): string {
  const what =
    found === "removed" ? "was removed" : `was replaced (what stood in its place is now ${aside ?? "gone"})`;
  return `reins: ${join(root, ".reins")}, the link to this project's store in reins' state folder, ${what}; reins put the link back, and the store, the hook secret and the budget are as reins kept them. Something tried to switch guarding off.`;
}

/**
 * For a project whose `.reins` the state folder records as a link: puts the link back when it was removed
 * or replaced, moving what replaced it aside (`.reins.replaced-<ms>`), so no hook opens a store or trusts a
 * secret the agent put there. A few `lstat`s when intact; nothing for a project with no link recorded.
 */
export function restoreReinsLink(root: string, env: NodeJS.ProcessEnv, now: number): LinkRepair {
  const target = linkedReinsDir(root, env);
  if (!isLinkedProject(root, env)) return { kind: "intact" };
  const entry = reinsEntry(root, target);
  if (entry === "link") return { kind: "intact" };
  let aside: string | undefined;
  if (entry === "other") {
    aside = join(root, `.reins.replaced-${now}`);
    renameSync(join(root, ".reins"), aside);
  }
  try {
    symlinkSync(target, join(root, ".reins"));
  } catch (error) {
    // Another hook put it back first.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST" || reinsEntry(root, target) !== "link")
      throw error;
  }
  const found = entry === "missing" ? "removed" : "replaced";
  return {
    kind: "restored",
    found,
    ...(aside !== undefined ? { aside } : {}),
    line: restoredLine(root, found, aside),
  };
}

/**
 * Where the hook secret of the project at `root` is to be trusted from: the linked folder in the state
 * folder when the project is linked (a secret in a `.reins` the agent replaced is never trusted), else
 * `<root>/.reins/hook-secret`.
 */
export function trustedSecretPath(root: string, env: NodeJS.ProcessEnv): string {
  return isLinkedProject(root, env)
    ? join(linkedReinsDir(root, env), "hook-secret")
    : join(root, ".reins", "hook-secret");
}
