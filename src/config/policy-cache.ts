/** The hooks' cache of the project's validated policy, used until what it was made from changes. */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Policy } from "../core/policy.js";
import { findPolicyFile, findRoot, policyFromText, readPolicyText } from "./load-policy.js";
import { projectStamp } from "./project-files.js";

/** Where the validated policy of the project at `root` is kept between hook calls. */
export function policyCachePath(root: string): string {
  return join(root, ".reins", "cache", "policy.json");
}

interface CacheEntry {
  key: string;
  policy: Policy;
  /** A digest of the key and the policy as written: an entry edited afterwards no longer matches it. */
  digest: string;
}

/** The digest an entry carries: the cached policy is used only while the file still holds what was written. */
function digestOf(key: string, policyText: string): string {
  return createHash("sha256").update(key).update("\n").update(policyText).digest("hex");
}

/**
 * What the effective policy is made of, hashed: the code that validates it (this file's path, size and
 * mtime: a new build of reins changes it), the project, its policy file's path and full text, every
 * `REINS_*` environment variable, and the stamp of the manifests the project's check commands come from.
 */
function cacheKey(root: string, file: string | null, text: string | null, env: NodeJS.ProcessEnv): string {
  const code = fileURLToPath(import.meta.url);
  const { size, mtimeMs } = statSync(code);
  const vars = Object.entries(env)
    .filter(([name]) => name.startsWith("REINS_"))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash("sha256")
    .update(JSON.stringify([code, size, mtimeMs, root, file, text, vars, projectStamp(root)]))
    .digest("hex");
}

function readEntry(path: string, key: string): Policy | null {
  try {
    const entry = JSON.parse(readFileSync(path, "utf8")) as Partial<CacheEntry> | null;
    if (entry?.key !== key || typeof entry.policy !== "object" || entry.policy === null) return null;
    // An entry edited by hand (or by an agent that got past self-protection) is validated afresh, never trusted.
    return entry.digest === digestOf(key, JSON.stringify(entry.policy)) ? entry.policy : null;
  } catch {
    return null;
  }
}

function writeEntry(path: string, entry: CacheEntry): void {
  // Hooks run in parallel: write aside, then rename, so a reader sees a whole file or none.
  const temp = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    // 0600: the policy's store spec may carry a Redis password taken from REINS_STORE.
    writeFileSync(temp, JSON.stringify(entry), { mode: 0o600 });
    renameSync(temp, path);
  } catch {
    // A cache that cannot be written only costs the next call a validation.
  }
}

/**
 * The effective policy, as `loadPolicy` gives it, validated once rather than per call: the result is kept
 * in the project's `.reins/cache/policy.json` under a hash of everything it was made from (see
 * `cacheKey`) and used again only while that hash is unchanged. An invalid policy throws like
 * `loadPolicy` and is not cached.
 */
export function loadPolicyCached(options: { cwd: string; env?: NodeJS.ProcessEnv }): Policy {
  const root = findRoot(options.cwd);
  const env = options.env ?? {};
  const file = findPolicyFile(root);
  const text = file === null ? null : readPolicyText(file);
  const key = cacheKey(root, file, text, env);
  const path = policyCachePath(root);
  const cached = readEntry(path, key);
  if (cached !== null) return cached;
  const { policy } = policyFromText(root, file, text, env);
  writeEntry(path, { key, policy, digest: digestOf(key, JSON.stringify(policy)) });
  return policy;
}
