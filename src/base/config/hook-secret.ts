/** The project's secrets on disk: the hook secret, the people's API token and the agents' token. */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { linkSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ReinsError } from "../core/errors.js";
import { reinsDir } from "./reins-dir.js";
import { trustedSecretPath } from "./reins-link.js";

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

/**
 * The project's hook secret if there is one it can trust, without making one ("" otherwise). For a project
 * whose `.reins` is a link into the state folder it is read from there, so a secret in a `.reins` the agent
 * replaced is never trusted (base/config/reins-link.ts).
 */
export function existingHookSecret(root: string, env: NodeJS.ProcessEnv = process.env): string {
  try {
    return readSecret(trustedSecretPath(root, env)) ?? "";
  } catch {
    return ""; // too short to trust
  }
}

/** Where a project's agent token lives (mode 0600): what agents and remote hooks hold; never a person's powers. */
export function agentTokenPath(root: string): string {
  return join(root, ".reins", "agent-token");
}

/** The project's agent token (ingest, decide, hooks) and whether this call created it. */
export function agentToken(root: string): { value: string; created: boolean } {
  return readOrCreate(agentTokenPath(root));
}

/** The project's API token and whether this call created it (so `reins serve` prints it once). */
export function apiToken(root: string): { value: string; created: boolean } {
  return readOrCreate(tokenPath(root));
}

/**
 * The people's token as a CLI command reads it to show that a person acts (docs/person-actions.md): the
 * project's API token, made on first use. Null where it can be neither read nor made: inside the agent's
 * boundary, which hides `.reins/` and keeps it from being written. A file that can be read but holds no
 * secret is a ReinsError, as for every secret.
 */
export function personToken(root: string): string | null {
  const path = tokenPath(root);
  try {
    return readOrCreate(path).value;
  } catch (error) {
    if (ReinsError.is(error) && readable(path)) throw error;
    return null;
  }
}

function readable(path: string): boolean {
  try {
    readFileSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Whether two secrets are the same, in time that does not tell how much of them matched. */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return expected.length > 0 && a.length === b.length && timingSafeEqual(a, b);
}

/** The shortest secret reins trusts from a file: anything shorter was not made by reins, or was cut. */
export const MIN_SECRET = 32;

/**
 * A 0600 file holding a random secret, created on first use. It is written aside and linked into place, so
 * a concurrent reader never sees it empty, and concurrent creators agree on the first one linked. A file
 * holding less than MIN_SECRET characters (empty, cut, written by hand) is refused, never trusted.
 */
function readOrCreate(path: string): { value: string; created: boolean } {
  const existing = readSecret(path);
  if (existing !== null) return { value: existing, created: false };
  reinsDir(dirname(dirname(path)));
  const secret = randomBytes(24).toString("hex");
  const temp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(temp, `${secret}\n`, { mode: 0o600, flag: "wx" });
  try {
    linkSync(temp, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    // Another process linked its secret first: use theirs, which is whole.
    const theirs = readSecret(path);
    if (theirs === null) throw tooShort(path);
    return { value: theirs, created: false };
  } finally {
    rmSync(temp, { force: true });
  }
  return { value: secret, created: true };
}

/** The secret in `path`, or null when there is no such file; a ReinsError when it is too short to trust. */
function readSecret(path: string): string | null {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return null;
  }
  const value = text.trim();
  if (value.length < MIN_SECRET || /\s/.test(value)) throw tooShort(path);
  return value;
}

function tooShort(path: string): ReinsError {
  return new ReinsError(
    "usage",
    `${path} does not hold a secret reins can trust (at least ${MIN_SECRET} characters, no spaces); remove it and reins makes a new one`,
  );
}

/** The token of an `Authorization: Bearer <token>` header (the scheme in any case, spaces around), or null. */
export function bearerToken(header: string | undefined): string | null {
  const match = /^[ \t]*bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? "");
  return match?.[1] ?? null;
}

/**
 * A check of `Authorization` headers against secrets fixed at startup, built once: each request then only
 * reads its token and compares it with each secret in constant time. Empty secrets never match.
 */
export function bearerCheck(...secrets: string[]): (header: string | undefined) => boolean {
  const expected = secrets.filter((secret) => secret.length > 0).map((secret) => Buffer.from(secret));
  return (header) => {
    const token = bearerToken(header);
    if (token === null) return false;
    const given = Buffer.from(token);
    // Every secret is compared, so the time does not tell which one matched.
    let ok = false;
    for (const secret of expected)
      if (given.length === secret.length && timingSafeEqual(given, secret)) ok = true;
    return ok;
  };
}
