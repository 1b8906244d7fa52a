/**
 * The one judge of a project the user-level sandbox cannot keep by its state folder or Claude Code's own
 * protections: the project's policy file. A user-level hook adds its absolute path to the user's Claude Code
 * sandbox when a turn opens (docs/user-install-hooks.md, "Containment"), noted for `--uninstall`.
 */
import { chmodSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { stateDir } from "./user-dirs.js";

/** Where `reins init --user claude` notes what it added to the user's settings (install/claude-user-sandbox.ts). */
export function userSandboxRecord(env: NodeJS.ProcessEnv): string {
  return join(stateDir(env), "claude-user-sandbox.json");
}

/** The user's Claude Code settings file. */
export function userClaudeSettings(env: NodeJS.ProcessEnv): string {
  const home = env.HOME !== undefined && env.HOME !== "" ? env.HOME : homedir();
  return join(home, ".claude", "settings.json");
}

/** What the user's settings must hold for the policy file of the project at `root`: not written by commands nor file tools. */
export function policyDenyEntries(root: string): { denyWrite: string; deny: string } {
  const file = join(root, "reins.config.json");
  return { denyWrite: file, deny: `Edit(/${file})` };
}

const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

const list = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];

function readJson(path: string): Record<string, unknown> | null {
  try {
    const data = JSON.parse(readFileSync(path, "utf8")) as unknown;
    return data !== null && typeof data === "object" && !Array.isArray(data)
      ? (data as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** Writes `data` as JSON through a rename, keeping the file's mode. */
function writeJson(path: string, data: unknown): void {
  let mode: number | undefined;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    // a new file
  }
  const temp = `${path}.${process.pid}.reins-tmp`;
  writeFileSync(temp, `${JSON.stringify(data, null, 2)}\n`, mode !== undefined ? { mode } : {});
  if (mode !== undefined) chmodSync(temp, mode);
  renameSync(temp, path);
}

/**
 * Adds the policy file of the project at `root` to the user's Claude Code sandbox (`denyWrite`) and
 * permission rules (`Edit(…)` denied), when the user-level boundary is installed (its record exists) and
 * they lack it; notes the entries in that record, so `reins init --user claude --uninstall` takes them out.
 * Claude Code applies the change to the session's next commands (tried with 2.1.330). Returns whether it
 * wrote. Read on every turn's start: one small file, written once per project.
 */
export function denyProjectPolicy(root: string, env: NodeJS.ProcessEnv): boolean {
  const noted = readJson(userSandboxRecord(env));
  if (noted === null) return false;
  const path = userClaudeSettings(env);
  const settings = readJson(path);
  if (settings === null) return false;
  const sandbox = record(settings.sandbox);
  if (sandbox.enabled !== true) return false;
  const filesystem = record(sandbox.filesystem);
  const permissions = record(settings.permissions);
  const wanted = policyDenyEntries(root);
  const denyWrite = list(filesystem.denyWrite);
  const deny = list(permissions.deny);
  const addWrite = !denyWrite.includes(wanted.denyWrite);
  const addDeny = !deny.includes(wanted.deny);
  if (!addWrite && !addDeny) return false;
  if (addWrite) filesystem.denyWrite = [...denyWrite, wanted.denyWrite];
  if (addDeny) permissions.deny = [...deny, wanted.deny];
  sandbox.filesystem = filesystem;
  settings.sandbox = sandbox;
  settings.permissions = permissions;
  writeJson(path, settings);
  const notedWrite = list(noted.denyWrite);
  const notedDeny = list(noted.deny);
  if (!notedWrite.includes(wanted.denyWrite)) noted.denyWrite = [...notedWrite, wanted.denyWrite];
  if (!notedDeny.includes(wanted.deny)) noted.deny = [...notedDeny, wanted.deny];
  writeJson(userSandboxRecord(env), noted);
  return true;
}
