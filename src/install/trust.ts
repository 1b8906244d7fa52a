/** The agents' trust stores: Codex and Gemini CLI made to trust the project and reins' hooks, and undone. */
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import stripJsonComments from "strip-json-comments";
import { isTable, tomlGet, type TomlTable } from "./toml-lines.js";
import { canonical } from "../base/vocabulary/hash.js";

/*
 * The agents' own trust stores, which decide whether they run a project's hooks at all:
 * - Codex CLI (0.169.0) loads a project's `.codex/` only when `$CODEX_HOME/config.toml` (default
 *   `~/.codex/config.toml`) has `[projects."<dir>"] trust_level = "trusted"`, and runs a hook that is not
 *   managed only when `[hooks.state."<hooks.json path>:<event>:<group>:<handler>"] trusted_hash` equals the
 *   hook's hash (codex-rs/hooks/src/engine/discovery.rs, codex-rs/config/src/hook_edit.rs). Untrusted hooks
 *   are skipped without a word in `codex exec`.
 * - Gemini CLI (0.61.0) merges a project's `.gemini/settings.json`, hooks included, only in a trusted
 *   folder: `GEMINI_CLI_TRUST_WORKSPACE=true`, or a rule in `~/.gemini/trustedFolders.json`
 *   (`{ "<dir>": "TRUST_FOLDER" | "TRUST_PARENT" | "DO_NOT_TRUST" }`, longest matching path wins;
 *   packages/core/src/utils/trust.ts). `--skip-trust` does not help: it is seen after the settings merged.
 */

// ---------------------------------------------------------------------------------------------------
// Codex CLI

/** Codex's home: `$CODEX_HOME`, else `~/.codex`. */
export function codexHome(env: NodeJS.ProcessEnv, home: string): string {
  const set = env.CODEX_HOME;
  return set !== undefined && set !== "" ? resolve(set) : join(home, ".codex");
}

/** A path as the agents see it: symbolic links resolved when it exists (they key trust by real paths). */
export function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** `PreToolUse` → `pre_tool_use`, Codex's label of an event in hook keys and hashes. */
const eventLabel = (event: string) => event.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();

/**
 * The hash Codex trusts a command hook by (`command_hook_hash` → `version_for_toml`): sha256 of the
 * sorted-key JSON of the event's label, the matcher (none for UserPromptSubmit and Stop) and the hook with
 * its timeout as Codex runs it (default 600 s; SessionEnd's is clamped to 1..3 s) and `async`.
 */
export function codexHookHash(
  event: string,
  matcher: string | undefined,
  handler: { command: string; timeout?: number; async?: boolean },
): string {
  const timeout =
    event === "SessionEnd"
      ? Math.min(Math.max(handler.timeout ?? 1, 1), 3)
      : Math.max(handler.timeout ?? 600, 1);
  const identity = {
    event_name: eventLabel(event),
    ...(matcher !== undefined && event !== "UserPromptSubmit" && event !== "Stop" ? { matcher } : {}),
    hooks: [{ type: "command", command: handler.command, timeout, async: handler.async === true }],
  };
  return `sha256:${createHash("sha256").update(canonical(identity)).digest("hex")}`;
}

/** One command hook of a hooks.json, where Codex keeps its trust. */
export interface CodexHookSlot {
  /** `<hooks.json path>:<event label>:<group index>:<hook index>`, the key in `[hooks.state]`. */
  key: string;
  /** What the hook is, to follow it when another hook's removal moves it to another index. */
  identity: string;
  /** A hook reins installed, and the hash Codex must have trusted for it to run. */
  ours: boolean;
  hash: string;
}

/** The command hooks of hooks.json content (`settings`), keyed as Codex keys them. */
export function codexHookSlots(
  hooksPath: string,
  settings: unknown,
  isOurs: (hook: Record<string, unknown>) => boolean,
): CodexHookSlot[] {
  const hooks = isTable(settings) && isTable(settings.hooks) ? settings.hooks : {};
  const slots: CodexHookSlot[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) continue;
    groups.forEach((group: unknown, g) => {
      if (!isTable(group) || !Array.isArray(group.hooks)) return;
      const matcher = typeof group.matcher === "string" ? group.matcher : undefined;
      group.hooks.forEach((hook: unknown, h) => {
        if (!isTable(hook) || hook.type !== "command" || typeof hook.command !== "string") return;
        const timeout = typeof hook.timeout === "number" ? hook.timeout : undefined;
        slots.push({
          key: `${hooksPath}:${eventLabel(event)}:${g}:${h}`,
          identity: canonical({ event, matcher, hook }),
          ours: isOurs(hook),
          hash: codexHookHash(event, matcher, {
            command: hook.command,
            ...(timeout !== undefined ? { timeout } : {}),
            ...(hook.async === true ? { async: true } : {}),
          }),
        });
      });
    });
  }
  return slots;
}

/**
 * How `[hooks.state]` must change when hooks.json changes from `before` to `after`: reins' hooks trusted
 * by their hash (and the trust reins gave hooks that are gone removed), and a user's hook that moved to
 * another index keeps its trust. `null` removes a key's `trusted_hash`.
 */
export function codexTrustChanges(
  before: readonly CodexHookSlot[],
  after: readonly CodexHookSlot[],
  trusted: ReadonlyMap<string, string>,
): Map<string, string | null> {
  const cleared = new Set<string>();
  const set = new Map<string, string>();
  const afterAt = new Map(after.map((s) => [s.key, s]));
  const taken = new Set<string>();
  for (const b of before) {
    const hash = trusted.get(b.key);
    if (hash === undefined || afterAt.get(b.key)?.identity === b.identity) continue;
    if (b.ours) {
      if (hash === b.hash) cleared.add(b.key);
      continue;
    }
    const moved = after.find((a) => !a.ours && a.identity === b.identity && !taken.has(a.key));
    if (moved === undefined) continue;
    taken.add(moved.key);
    set.set(moved.key, hash);
    cleared.add(b.key);
  }
  for (const a of after) if (a.ours) set.set(a.key, a.hash);
  const changes = new Map<string, string | null>();
  for (const key of cleared) if (!set.has(key)) changes.set(key, null);
  for (const [key, hash] of set) if (trusted.get(key) !== hash) changes.set(key, hash);
  return changes;
}

/** The `trusted_hash` of every key in `[hooks.state]`. */
export function codexTrustedHashes(root: TomlTable): Map<string, string> {
  const state = tomlGet(root, ["hooks", "state"]);
  const out = new Map<string, string>();
  if (isTable(state))
    for (const [key, entry] of Object.entries(state))
      if (isTable(entry) && typeof entry.trusted_hash === "string") out.set(key.trim(), entry.trusted_hash);
  return out;
}

/** The nearest folder from `dir` up that holds `.git`: Codex's project root by default. */
function gitRoot(dir: string): string | undefined {
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (existsSync(join(d, ".git"))) return d;
    if (dirname(d) === d) return undefined;
  }
}

/**
 * The `trust_level` Codex's config gives the `.codex/` folder in `dir`, as Codex looks it up: the folder
 * itself (by its real path or as written), then its project root (the enclosing git checkout).
 */
export function codexProjectTrust(root: TomlTable, dir: string): string | undefined {
  const projects = tomlGet(root, ["projects"]);
  if (!isTable(projects)) return undefined;
  const git = gitRoot(dir);
  const keys = [realPath(dir), resolve(dir), ...(git !== undefined ? [realPath(git), git] : [])];
  for (const key of new Set(keys)) {
    const entry = projects[key];
    if (isTable(entry) && typeof entry.trust_level === "string") return entry.trust_level;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// Gemini CLI

/** Gemini's trusted folders file: `$GEMINI_CLI_TRUSTED_FOLDERS_PATH`, else `<$GEMINI_CLI_HOME or home>/.gemini/trustedFolders.json`. */
export function geminiTrustedFoldersPath(env: NodeJS.ProcessEnv, home: string): string {
  const set = env.GEMINI_CLI_TRUSTED_FOLDERS_PATH;
  if (set !== undefined && set !== "") return resolve(set);
  const geminiHome = env.GEMINI_CLI_HOME;
  return join(
    geminiHome !== undefined && geminiHome !== "" ? geminiHome : home,
    ".gemini",
    "trustedFolders.json",
  );
}

/**
 * The rules of a trusted folders file (`{}` when there is none), whether it is plain JSON reins may rewrite,
 * and then its whole content (`document`, to rewrite it with every entry kept).
 */
export function readTrustedFolders(path: string): {
  rules: Record<string, string>;
  plain: boolean;
  document?: Record<string, unknown>;
} {
  if (!existsSync(path)) return { rules: {}, plain: true };
  const text = readFileSync(path, "utf8");
  let plain = true;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    plain = false;
    data = JSON.parse(stripJsonComments(text)); // as Gemini reads it
  }
  if (!isTable(data)) throw new Error(`${path} must hold a JSON object`);
  const rules: Record<string, string> = {};
  for (const [k, v] of Object.entries(data)) if (typeof v === "string") rules[k] = v;
  return plain ? { rules, plain, document: data } : { rules, plain };
}

const within = (parent: string, child: string) =>
  child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);

/**
 * Whether Gemini's rules trust `folder`, as Gemini decides: the longest matching rule wins (TRUST_PARENT
 * applies to the rule's parent folder), DO_NOT_TRUST on a tie; undefined when no rule matches.
 */
export function geminiFolderTrust(rules: Record<string, string>, folder: string): boolean | undefined {
  const location = realPath(resolve(folder));
  let best = -1;
  let level: string | undefined;
  const rank = (l: string | undefined) => ["TRUST_PARENT", "TRUST_FOLDER", "DO_NOT_TRUST"].indexOf(l ?? "");
  for (const [rule, trust] of Object.entries(rules)) {
    if (!["TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST"].includes(trust)) continue;
    const boundary = realPath(resolve(trust === "TRUST_PARENT" ? dirname(rule) : rule));
    if (!within(boundary, location)) continue;
    if (boundary.length > best || (boundary.length === best && rank(trust) > rank(level))) {
      best = boundary.length;
      level = trust;
    }
  }
  return level === undefined ? undefined : level !== "DO_NOT_TRUST";
}

// ---------------------------------------------------------------------------------------------------
// Writing, and remembering what reins added

/**
 * Writes `text` to `path` through a temporary file and a rename, following a symbolic link to its target
 * (as Codex does) and keeping the file's mode (new files are the owner's alone: they hold trust decisions).
 */
export function writeAtomically(path: string, text: string): void {
  const target = realPath(path);
  mkdirSync(dirname(target), { recursive: true });
  const mode = existsSync(target) ? statSync(target).mode & 0o777 : 0o600;
  const tmp = `${target}.reins-tmp`;
  writeFileSync(tmp, text, { mode });
  renameSync(tmp, target);
}

/** What reins added to the agents' trust for a project, so `--uninstall` removes exactly that. */
export interface TrustRecord {
  codex?: { config: string; project: string };
  gemini?: { file: string; folder: string };
}

const recordPath = (reinsDir: string) => join(reinsDir, "agent-trust.json");

/** The project's record of the trust reins added (`.reins/agent-trust.json`). */
export function readTrustRecord(reinsDir: string): TrustRecord {
  try {
    const data = JSON.parse(readFileSync(recordPath(reinsDir), "utf8")) as unknown;
    return isTable(data) ? data : {};
  } catch {
    return {};
  }
}

/** Saves the record (removing the file when it says nothing). */
export function writeTrustRecord(reinsDir: string, record: TrustRecord): void {
  const path = recordPath(reinsDir);
  if (record.codex === undefined && record.gemini === undefined) {
    rmSync(path, { force: true });
    return;
  }
  writeFileSync(path, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
}
