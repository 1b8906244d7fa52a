import { randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Where a project's hook secret lives (mode 0600): it authenticates hook calls to the daemon. */
export function secretPath(root: string): string {
  return join(root, ".reins", "hook-secret");
}

/** The project's hook secret, created on first use. */
export function hookSecret(root: string): string {
  const path = secretPath(root);
  try {
    const existing = readFileSync(path, "utf8").trim();
    if (existing.length >= 32) return existing;
  } catch {
    // not there yet
  }
  mkdirSync(dirname(path), { recursive: true });
  const secret = randomBytes(24).toString("hex");
  try {
    writeFileSync(path, `${secret}\n`, { mode: 0o600, flag: "wx" });
  } catch {
    // Another process created it first: use theirs.
    return readFileSync(path, "utf8").trim();
  }
  chmodSync(path, 0o600);
  return secret;
}

/** Compares a presented bearer token with the secret in constant time. */
export function authorized(header: string | undefined, secret: string): boolean {
  if (header === undefined || !header.startsWith("Bearer ")) return false;
  const given = Buffer.from(header.slice(7).trim());
  const expected = Buffer.from(secret);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
