import { randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Where a project's hook secret lives (mode 0600): it authenticates hook calls to the daemon. */
export function secretPath(root: string): string {
  return join(root, ".reins", "hook-secret");
}

/** Where a project's API token lives (mode 0600): it authorises changes through the HTTP API. */
export function tokenPath(root: string): string {
  return join(root, ".reins", "api-token");
}

/** The project's hook secret, created on first use. */
export function hookSecret(root: string): string {
  return readOrCreate(secretPath(root)).value;
}

/** The project's API token and whether this call created it (so `reins serve` prints it once). */
export function apiToken(root: string): { value: string; created: boolean } {
  return readOrCreate(tokenPath(root));
}

/** A 0600 file holding a random secret, created on first use; concurrent creators agree on one. */
function readOrCreate(path: string): { value: string; created: boolean } {
  try {
    const existing = readFileSync(path, "utf8").trim();
    if (existing.length >= 32) return { value: existing, created: false };
  } catch {
    // not there yet
  }
  mkdirSync(dirname(path), { recursive: true });
  const secret = randomBytes(24).toString("hex");
  try {
    writeFileSync(path, `${secret}\n`, { mode: 0o600, flag: "wx" });
  } catch {
    // Another process created it first: use theirs.
    return { value: readFileSync(path, "utf8").trim(), created: false };
  }
  chmodSync(path, 0o600);
  return { value: secret, created: true };
}

/** Compares a presented bearer token with any of the accepted secrets in constant time. */
export function authorized(header: string | undefined, ...secrets: string[]): boolean {
  if (header === undefined || !header.startsWith("Bearer ")) return false;
  const given = Buffer.from(header.slice(7).trim());
  let ok = false;
  for (const secret of secrets) {
    const expected = Buffer.from(secret);
    if (given.length === expected.length && timingSafeEqual(given, expected)) ok = true;
  }
  return ok;
}
