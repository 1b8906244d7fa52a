/**
 * The projects reins knows of this user's, from its records in the state folder (stateDir): each folder
 * `<stateDir>/projects/<id>/` holds what `reins init` installed there (`install.json`) and, once the hook
 * daemon has answered for the project, `served.json` (its root and when the daemon last opened it). What
 * `reins status --all` and `reins serve --all` read when they list every project, the daemon up or down.
 */
import { readFileSync, readdirSync } from "node:fs";
import { basename, join } from "node:path";
import { projectStateDir, writePrivate } from "./install-record.js";
import { stateDir } from "./user-dirs.js";

/** One project of the records: its root, its id (its state folder's name), when a daemon last served it. */
export interface KnownProject {
  id: string;
  root: string;
  /** When the hook daemon last opened the project, epoch ms; null when it never has (set up only). */
  servedAt: number | null;
}

/** The id of the project at `root`: the name of its state folder (a hash of its real path). */
export function projectId(root: string, env: NodeJS.ProcessEnv): string {
  return basename(projectStateDir(root, env));
}

/**
 * Notes that the hook daemon opened the project at `root` at `at`: once per opening (not per call), so
 * the hot path pays nothing. Never throws: a state folder that cannot be written loses only the record.
 */
export function recordServed(root: string, env: NodeJS.ProcessEnv, at: number): void {
  try {
    writePrivate(join(projectStateDir(root, env), "served.json"), `${JSON.stringify({ root, at })}\n`);
  } catch {
    // the record is a convenience of `reins status --all`; guarding does not depend on it
  }
}

function rootIn(file: string): { root: string; at: number | null } | null {
  try {
    const data = JSON.parse(readFileSync(file, "utf8")) as { root?: unknown; at?: unknown } | null;
    if (typeof data?.root !== "string" || data.root === "") return null;
    return { root: data.root, at: typeof data.at === "number" ? data.at : null };
  } catch {
    return null;
  }
}

/** Every project of the records, the most recently served first, then by root. */
export function knownProjects(env: NodeJS.ProcessEnv): KnownProject[] {
  const dir = join(stateDir(env), "projects");
  let ids: string[];
  try {
    ids = readdirSync(dir);
  } catch {
    return [];
  }
  const out: KnownProject[] = [];
  for (const id of ids) {
    const served = rootIn(join(dir, id, "served.json"));
    const installed = rootIn(join(dir, id, "install.json"));
    const root = served?.root ?? installed?.root;
    if (root !== undefined) out.push({ id, root, servedAt: served?.at ?? null });
  }
  return out.sort((a, b) => (b.servedAt ?? 0) - (a.servedAt ?? 0) || a.root.localeCompare(b.root));
}
