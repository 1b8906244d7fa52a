/** The policy cache's file: one entry (the policy, its problems, the last valid policy file), digest-checked. */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Policy } from "../core/policy.js";

/** Where the validated policy of the project at `root` is kept between hook calls. */
export function policyCachePath(root: string): string {
  return join(root, ".reins", "cache", "policy.json");
}

/** The text of the policy file the last time it held no problem, kept for when it stops parsing. */
export interface LastValid {
  file: string;
  text: string;
}

/** One cached policy: what it was made from (`key`), the policy, and the config's problems as said. */
export interface CacheEntry {
  key: string;
  policy: Policy;
  /** One line per problem of the config, computed when it was loaded (see policy-problems.ts). */
  problems: string[];
  lastValid: LastValid | null;
  /** A digest of the rest as written: an entry edited afterwards no longer matches it. */
  digest: string;
}

/** The digest an entry carries: the entry is used only while the file still holds what was written. */
export function digestOf(entry: Omit<CacheEntry, "digest">): string {
  return createHash("sha256")
    .update(entry.key)
    .update("\n")
    .update(JSON.stringify([entry.policy, entry.problems, entry.lastValid]))
    .digest("hex");
}

function isLastValid(value: unknown): value is LastValid {
  const v = value as Partial<LastValid> | null;
  return typeof v?.file === "string" && typeof v.text === "string";
}

/** The entry in the cache file at `path`, or null when there is none, it is damaged or was edited. */
export function readCacheEntry(path: string): CacheEntry | null {
  try {
    const entry = JSON.parse(readFileSync(path, "utf8")) as Partial<CacheEntry> | null;
    if (typeof entry?.key !== "string" || typeof entry.digest !== "string") return null;
    if (typeof entry.policy !== "object" || entry.policy === null) return null;
    if (!Array.isArray(entry.problems) || !entry.problems.every((p) => typeof p === "string")) return null;
    const lastValid = isLastValid(entry.lastValid) ? entry.lastValid : null;
    const whole = { key: entry.key, policy: entry.policy, problems: entry.problems, lastValid };
    // An entry edited by hand (or by an agent that got past the boundary) is validated afresh, never trusted.
    return entry.digest === digestOf(whole) ? { ...whole, digest: entry.digest } : null;
  } catch {
    return null;
  }
}

/** Writes `entry` whole or not at all (hooks run in parallel: a reader sees a whole file or none). */
export function writeCacheEntry(path: string, entry: Omit<CacheEntry, "digest">): void {
  const temp = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    // 0600: the policy's store spec may carry a Redis password taken from REINS_STORE.
    writeFileSync(temp, JSON.stringify({ ...entry, digest: digestOf(entry) }), { mode: 0o600 });
    renameSync(temp, path);
  } catch {
    // A cache that cannot be written only costs the next call a validation.
  }
}

/** The last text of `file` that held no problem, as the cache of the project at `root` keeps it, or null. */
export function lastValidText(root: string, file: string): string | null {
  const lastValid = readCacheEntry(policyCachePath(root))?.lastValid ?? null;
  return lastValid !== null && lastValid.file === file ? lastValid.text : null;
}
