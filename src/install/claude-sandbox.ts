/**
 * `reins init claude` sets Claude Code's own sandbox so the agent's commands cannot reach reins' judges, and
 * takes out exactly what it added on `--uninstall` (docs/threat-model.md).
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { claudeBoundary, judgesOf, onPath, type ClaudeBoundary } from "../base/config/boundary.js";
import { reinsDir } from "../base/config/reins-dir.js";
import { readSettings } from "./agent-hooks.js";

/** What reins added to a settings file, kept in `.reins/` so `--uninstall` removes only that. */
interface Added {
  /** The sandbox's scalar keys reins set that the user had not set. */
  scalars: string[];
  denyRead: string[];
  denyWrite: string[];
  deny: string[];
  /** `network.allowedDomains: ["*"]`, set when the user had no network settings. */
  network: boolean;
}

const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value)
    ? { ...(value as Record<string, unknown>) }
    : {};

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];

function addedFile(root: string): string {
  return join(root, ".reins", "claude-sandbox.json");
}

function readAdded(path: string): Added | null {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Added;
  } catch {
    return null;
  }
}

/** Writes `data` to `path` through a rename, with `mode`, else the mode the file had (one with a secret stays 0600). */
function writeJson(path: string, data: unknown, mode?: number): void {
  let kept = mode;
  try {
    kept ??= statSync(path).mode & 0o777;
  } catch {
    // a new file: the default mode
  }
  const tmp = `${path}.reins-tmp`;
  writeFileSync(tmp, `${JSON.stringify(data, null, 2)}\n`, kept !== undefined ? { mode: kept } : {});
  if (kept !== undefined) chmodSync(tmp, kept);
  renameSync(tmp, path);
}

/** `list` with `more` appended, each once; and the ones it added. */
function union(list: string[], more: readonly string[]): { list: string[]; added: string[] } {
  const added = more.filter((item) => !list.includes(item));
  return { list: [...list, ...added], added };
}

/**
 * Merges the boundary into Claude Code's settings at `settingsPath` for the project at `root`: the sandbox on
 * with no way out, reins' paths denied to commands and to the file tools, the network left open (every
 * domain through the sandbox's proxy) unless the user set it. The user's own sandbox and permission settings
 * are kept. Returns the lines to print.
 */
export function containClaude(
  settingsPath: string,
  root: string,
  env: NodeJS.ProcessEnv,
  bin: string,
): string[] {
  reinsDir(root);
  return mergeBoundary(settingsPath, claudeBoundary(root, judgesOf(root, env, bin)), addedFile(root), env);
}

/**
 * Merges `wanted` into Claude Code's settings at `settingsPath`, keeping the user's own, and notes in
 * `addedPath` what it added (for removeBoundary). Returns the lines to print.
 */
export function mergeBoundary(
  settingsPath: string,
  wanted: ClaudeBoundary,
  addedPath: string,
  env: NodeJS.ProcessEnv,
): string[] {
  const settings = readSettings(settingsPath);
  const sandbox = record(settings.sandbox);
  const filesystem = record(sandbox.filesystem);
  const permissions = record(settings.permissions);
  const previous = readAdded(addedPath);
  const scalars: string[] = [...(previous?.scalars ?? [])];
  for (const key of ["enabled", "failIfUnavailable", "allowUnsandboxedCommands"] as const) {
    if (sandbox[key] === wanted.sandbox[key]) continue;
    if (!(key in sandbox) && !scalars.includes(key)) scalars.push(key);
    sandbox[key] = wanted.sandbox[key];
  }
  const denyRead = union(strings(filesystem.denyRead), wanted.sandbox.filesystem.denyRead);
  const denyWrite = union(strings(filesystem.denyWrite), wanted.sandbox.filesystem.denyWrite);
  const deny = union(strings(permissions.deny), wanted.permissions.deny);
  filesystem.denyRead = denyRead.list;
  filesystem.denyWrite = denyWrite.list;
  sandbox.filesystem = filesystem;
  // Claude Code's sandbox asks about every new domain; reins keeps the network as the user had it.
  const network = !("network" in sandbox);
  if (network) sandbox.network = { allowedDomains: ["*"] };
  permissions.deny = deny.list;
  settings.sandbox = sandbox;
  settings.permissions = permissions;
  const added: Added = {
    scalars,
    denyRead: [...(previous?.denyRead ?? []), ...denyRead.added],
    denyWrite: [...(previous?.denyWrite ?? []), ...denyWrite.added],
    deny: [...(previous?.deny ?? []), ...deny.added],
    network: network || previous?.network === true,
  };
  const changed =
    scalars.length !== (previous?.scalars.length ?? 0) ||
    denyRead.added.length + denyWrite.added.length + deny.added.length > 0 ||
    network;
  if (!changed) return [`Claude Code's sandbox already keeps reins' files in ${settingsPath}`];
  writeJson(settingsPath, settings);
  mkdirSync(dirname(addedPath), { recursive: true, mode: 0o700 });
  writeJson(addedPath, added, 0o600);
  const lines = [
    `contained: Claude Code's sandbox in ${settingsPath} keeps the agent's commands and file tools out of .reins/, the hook settings and reins' own folders`,
  ];
  if (process.platform === "linux") {
    const missing = ["bwrap", "socat"].filter((program) => !onPath(program, env));
    if (missing.length > 0)
      lines.push(
        `warning: Claude Code's sandbox needs ${missing.join(" and ")}: install them (apt-get install bubblewrap socat), or its Bash tool refuses to run`,
      );
  }
  return lines;
}

/** Removes from `settingsPath` exactly what containClaude added to it. Returns the lines to print. */
export function uncontainClaude(settingsPath: string, root: string): string[] {
  return removeBoundary(settingsPath, addedFile(root));
}

/** Removes from `settingsPath` exactly what mergeBoundary noted in `addedPath`. Returns the lines to print. */
export function removeBoundary(settingsPath: string, addedPath: string): string[] {
  const added = readAdded(addedPath);
  if (added === null || !existsSync(settingsPath)) return [];
  const settings = readSettings(settingsPath);
  const sandbox = record(settings.sandbox);
  const filesystem = record(sandbox.filesystem);
  const permissions = record(settings.permissions);
  const without = (list: unknown, drop: readonly string[]) => strings(list).filter((x) => !drop.includes(x));
  for (const key of added.scalars) delete sandbox[key];
  filesystem.denyRead = without(filesystem.denyRead, added.denyRead);
  filesystem.denyWrite = without(filesystem.denyWrite, added.denyWrite);
  for (const key of ["denyRead", "denyWrite"])
    if (strings(filesystem[key]).length === 0) delete filesystem[key];
  if (Object.keys(filesystem).length > 0) sandbox.filesystem = filesystem;
  else delete sandbox.filesystem;
  if (added.network) delete sandbox.network;
  permissions.deny = without(permissions.deny, added.deny);
  if (strings(permissions.deny).length === 0) delete permissions.deny;
  if (Object.keys(sandbox).length > 0) settings.sandbox = sandbox;
  else delete settings.sandbox;
  if (Object.keys(permissions).length > 0) settings.permissions = permissions;
  else delete settings.permissions;
  writeJson(settingsPath, settings);
  rmSync(addedPath, { force: true });
  return [`removed reins' sandbox settings from ${settingsPath}`];
}
