/** Where the user's hook daemon lives: a private folder of the user's, and a socket named after the install. */
import { chmodSync, lstatSync, mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { ReinsError } from "../../base/core/errors.js";
import { runtimeDir } from "../../base/config/user-dirs.js";

/** FNV-1a over the bytes of `text`, 32 bits, as 8 hex digits (the C client computes the same). */
export function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, "utf8")) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, "0");
}

/**
 * The name of the daemon of the reins installed at `bin` (its `bin/reins.js`): one daemon per install, so
 * two versions of reins on one machine never answer each other's hooks.
 */
export function daemonName(bin: string): string {
  let real = bin;
  try {
    real = realpathSync(bin);
  } catch {
    // a bin that is not there yet names itself as given
  }
  return `d-${fnv1a(real)}`;
}

/** The socket of the daemon named `name`. */
export function socketPath(env: NodeJS.ProcessEnv, name: string): string {
  return join(runtimeDir(env), `${name}.sock`);
}

/** The log of the daemon named `name`: what it could not answer, and why it stopped. */
export function logPath(env: NodeJS.ProcessEnv, name: string): string {
  return join(runtimeDir(env), `${name}.log`);
}

/**
 * Makes the runtime folder if needed and checks it is the user's alone (owned by this user, no access for
 * others): only then does a socket in it reach nobody else's process, and no one else's process can stand
 * in for the daemon. A ReinsError naming the folder otherwise.
 */
export function privateRuntimeDir(env: NodeJS.ProcessEnv): string {
  const dir = runtimeDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  const uid = process.getuid?.();
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid))
    throw new ReinsError(
      "usage",
      `${dir} is not a folder of this user's: reins keeps its daemon's socket only in a private folder (set REINS_RUNTIME_DIR)`,
    );
  if ((stat.mode & 0o077) !== 0) chmodSync(dir, 0o700);
  return dir;
}
