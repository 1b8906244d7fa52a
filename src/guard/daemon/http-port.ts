/**
 * The loopback port on which the user's hook daemon answers Claude Code's native http hooks: derived once
 * per user, runtime folder and install, recorded beside the socket, moved only when another program holds
 * it; and the per-project token those hooks carry (docs/performance.md, "The http hook").
 */
import { createHmac } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runtimeDir } from "../../base/config/user-dirs.js";
import { fnv1a } from "./paths.js";

/** The ports a derived port is drawn from: below Linux's ephemeral range (32768-60999), above most services. */
const FIRST = 20_000;
const SPAN = 12_000;

/** The file in the runtime folder that records the daemon `name`'s port. */
export function portFile(env: NodeJS.ProcessEnv, name: string): string {
  return join(runtimeDir(env), `${name}.port`);
}

/** The port derived for the daemon `name` of this user and runtime folder: the same on every call. */
export function derivedPort(env: NodeJS.ProcessEnv, name: string): number {
  const uid = process.getuid?.() ?? 0;
  return FIRST + (Number.parseInt(fnv1a(`${uid}\n${runtimeDir(env)}\n${name}`), 16) % SPAN);
}

/** The recorded port of the daemon `name`, or null when none is recorded (or the record is not a port). */
export function recordedPort(env: NodeJS.ProcessEnv, name: string): number | null {
  try {
    const port = Number(readFileSync(portFile(env, name), "utf8").trim());
    return Number.isInteger(port) && port > 0 && port <= 65_535 ? port : null;
  } catch {
    return null;
  }
}

/** The port the hooks of the daemon `name` post to: the recorded one, else the derived one. */
export function hookPort(env: NodeJS.ProcessEnv, name: string): number {
  return recordedPort(env, name) ?? derivedPort(env, name);
}

/** Records `port` as the daemon `name`'s (the runtime folder must exist). Never throws. */
export function recordPort(env: NodeJS.ProcessEnv, name: string, port: number): void {
  const file = portFile(env, name);
  try {
    writeFileSync(`${file}.tmp`, `${port}\n`, { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  } catch {
    // the hooks keep the port they have; the next daemon records it again
  }
}

/** The URL of Claude Code's http hooks to the daemon on `port`. */
export function hookUrl(port: number, agent = "claude"): string {
  return `http://127.0.0.1:${port}/hooks/${agent}`;
}

/**
 * The token a project's http hooks carry (`Authorization: Bearer <token>`): an HMAC of the project's root
 * under its hook secret. It proves "this project's hook" and nothing more: the secret itself, which signs
 * the command client's calls, never leaves `.reins/`.
 */
export function httpHookToken(secret: string, root: string): string {
  return createHmac("sha256", secret).update(`claude-http-hook\n${root}`).digest("hex");
}
