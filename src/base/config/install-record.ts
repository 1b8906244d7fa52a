/**
 * What `reins init` installed in a project, kept in the user's state folder outside it (stateDir), where the
 * agent's boundary lets it neither read nor write: per agent the settings file and a hash of each hook
 * entry reins wrote there. The turn's tamper check and `reins doctor` compare the settings files with it.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stateDir } from "./user-dirs.js";

/** What reins installed for one agent: the settings file, and per hook event the hash of its entry. */
export interface AgentRecord {
  file: string;
  /** Event → sha256 of the hook entry's JSON, as written. */
  entries: Record<string, string>;
  /** When it was installed, epoch ms. */
  at: number;
}

/** What reins installed in one project. */
export interface InstallRecord {
  root: string;
  agents: Record<string, AgentRecord>;
}

function realRoot(root: string): string {
  try {
    return realpathSync(root);
  } catch {
    return root;
  }
}

/**
 * The folder of what reins keeps about the project at `root` outside it: `<stateDir>/projects/<hash>`, the
 * hash of the project's real path (so a symlinked path names the same project).
 */
export function projectStateDir(root: string, env: NodeJS.ProcessEnv): string {
  const id = createHash("sha256").update(realRoot(root)).digest("hex").slice(0, 16);
  return join(stateDir(env), "projects", id);
}

/** Writes `text` to `path` atomically (a temporary file renamed over it), the owner's alone. */
export function writePrivate(path: string, text: string): void {
  mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, text, { mode: 0o600 });
  renameSync(temp, path);
}

const recordPath = (root: string, env: NodeJS.ProcessEnv) => join(projectStateDir(root, env), "install.json");

/** The hash an installed hook entry is recorded by. */
export function entryHash(entry: unknown): string {
  return createHash("sha256").update(JSON.stringify(entry)).digest("hex");
}

/** The install record of the project at `root`, or null when reins recorded none (never set up, or unreadable). */
export function readInstallRecord(root: string, env: NodeJS.ProcessEnv): InstallRecord | null {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(recordPath(root, env), "utf8"));
  } catch {
    return null;
  }
  const record = data as Partial<InstallRecord> | null;
  if (record === null || typeof record !== "object" || typeof record.agents !== "object") return null;
  return { root: typeof record.root === "string" ? record.root : root, agents: record.agents ?? {} };
}

/**
 * Records what `reins init <agent>` wrote: the settings file and its hook entries by event. With no entries
 * (an uninstall), forgets the agent; the record goes when no agent is left.
 */
export function recordInstall(
  root: string,
  env: NodeJS.ProcessEnv,
  agent: string,
  file: string,
  entries: ReadonlyMap<string, unknown>,
  at: number,
): void {
  const record = readInstallRecord(root, env) ?? { root: realRoot(root), agents: {} };
  if (entries.size === 0) delete record.agents[agent];
  else
    record.agents[agent] = {
      file,
      entries: Object.fromEntries([...entries].map(([event, entry]) => [event, entryHash(entry)])),
      at,
    };
  if (Object.keys(record.agents).length === 0) rmSync(recordPath(root, env), { force: true });
  else writePrivate(recordPath(root, env), `${JSON.stringify(record, null, 2)}\n`);
}

/** What became of one agent's installed hooks: the settings file and what changed in it (empty: intact). */
export interface HookChanges {
  agent: string;
  file: string;
  /** `PreToolUse is gone`, `Stop was changed`, `the file is gone`... */
  changes: string[];
}

type Groups = Record<string, unknown>;

function hooksOf(file: string): Groups | string {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "the file is gone" : "it is not valid JSON";
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) return "it holds no JSON object";
  const hooks = (data as { hooks?: unknown }).hooks;
  return hooks !== null && typeof hooks === "object" && !Array.isArray(hooks) ? (hooks as Groups) : {};
}

/** The hook entries of one event in an agent's settings. */
function entriesOf(groups: unknown): unknown[] {
  if (!Array.isArray(groups)) return [];
  return groups.flatMap((g) => {
    const hooks = (g as { hooks?: unknown } | null)?.hooks;
    // Copilot CLI's hooks file lists the entries themselves, not groups of them.
    return Array.isArray(hooks)
      ? (hooks as unknown[])
      : g !== null && typeof g === "object"
        ? [g as unknown]
        : [];
  });
}

/** Each recorded agent's hooks as they are now against what reins installed. */
export function hookChanges(record: InstallRecord): HookChanges[] {
  return Object.entries(record.agents).map(([agent, installed]) => {
    const hooks = hooksOf(installed.file);
    if (typeof hooks === "string") return { agent, file: installed.file, changes: [hooks] };
    const changes: string[] = [];
    for (const [event, hash] of Object.entries(installed.entries)) {
      const now = entriesOf(hooks[event]);
      if (now.some((entry) => entryHash(entry) === hash)) continue;
      changes.push(`${event} ${now.length === 0 ? "is gone" : "was changed"}`);
    }
    return { agent, file: installed.file, changes };
  });
}
