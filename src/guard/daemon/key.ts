/**
 * The user's daemon key: 32 random bytes, as 64 hex digits in `daemon.key` of the runtime folder (mode 0600),
 * with which a hook daemon proves to a client that it is reins' (docs/daemon-proof.md). The boundary keeps
 * the agent from reading the runtime folder, so a program the agent starts cannot make the proof.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { closeSync, fstatSync, linkSync, openSync, readSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The key's file in the runtime folder; the clients read it there too. */
export const KEY_FILE = "daemon.key";

const KEY = /^[0-9a-f]{64}$/;

/** Where the key of the runtime folder `runtime` is kept. */
export function keyPath(runtime: string): string {
  return join(runtime, KEY_FILE);
}

/**
 * The key of the runtime folder `runtime`, or null when there is none or it is not one: not 64 hex digits,
 * or readable by anyone but this user (then no proof made with it means anything).
 */
export function readDaemonKey(runtime: string): string | null {
  let fd: number;
  try {
    fd = openSync(keyPath(runtime), "r");
  } catch {
    return null;
  }
  try {
    const stat = fstatSync(fd);
    const uid = process.getuid?.();
    if (!stat.isFile() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o077) !== 0) return null;
    const buffer = Buffer.alloc(80);
    const text = buffer.toString("latin1", 0, readSync(fd, buffer, 0, buffer.length, 0)).trim();
    return KEY.test(text) ? text : null;
  } finally {
    closeSync(fd);
  }
}

/**
 * The key of the runtime folder `runtime`, made if there is none: written aside with mode 0600 and linked
 * into place, so two daemons starting at once agree on one key (the second's link fails and it reads the
 * first's). Throws when the folder cannot hold one.
 */
export function ensureDaemonKey(runtime: string): string {
  const found = readDaemonKey(runtime);
  if (found !== null) return found;
  const path = keyPath(runtime);
  const aside = `${path}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(aside, `${randomBytes(32).toString("hex")}\n`, { mode: 0o600, flag: "wx" });
  try {
    linkSync(aside, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    // Another made it first, or a bad one is in the way (not 64 hex digits, or not private): a bad one is
    // replaced, so a daemon never runs without a key a client can check.
    if (readDaemonKey(runtime) === null) {
      rmSync(path, { force: true });
      try {
        linkSync(aside, path);
      } catch (again) {
        // another daemon replaced it first: theirs is read below
        if ((again as NodeJS.ErrnoException).code !== "EEXIST") throw again;
      }
    }
  } finally {
    rmSync(aside, { force: true });
  }
  const key = readDaemonKey(runtime);
  if (key === null) throw new Error(`${path}: the daemon key could not be made`);
  return key;
}

/** HMAC-SHA256 under `key` (its text as the key's bytes) of `parts` joined by newlines, as hex. */
export function mac(key: string, parts: readonly (string | Buffer)[]): string {
  const hmac = createHmac("sha256", key);
  parts.forEach((part, i) => {
    if (i > 0) hmac.update("\n");
    hmac.update(part);
  });
  return hmac.digest("hex");
}

/** Whether `given` is the MAC `mac(key, parts)`, compared in constant time. */
export function macMatches(key: string, parts: readonly (string | Buffer)[], given: unknown): boolean {
  if (typeof given !== "string" || given.length !== 64) return false;
  return timingSafeEqual(Buffer.from(mac(key, parts)), Buffer.from(given.toLowerCase()));
}

/** A fresh nonce as a client sends it: the time in seconds and 16 random bytes (`<seconds>-<32 hex>`). */
export function freshNonce(now = Date.now()): string {
  return `${Math.floor(now / 1000)}-${randomBytes(16).toString("hex")}`;
}
