/** The hooks' cache of the project's validated policy and its problems, used until what it was made from changes. */
import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Policy } from "../core/policy.js";
import {
  findPolicyFile,
  findRoot,
  policyFromText,
  readPolicySource,
  type PolicySource,
} from "./load-policy.js";
import { policyCachePath, readCacheEntry, writeCacheEntry, type LastValid } from "./policy-cache-entry.js";
import { projectStamp } from "./project-files.js";

export { policyCachePath } from "./policy-cache-entry.js";

/**
 * What the effective policy is made of, hashed: the code that validates it (this file's path, size and
 * mtime: a new build of reins changes it), the project, its policy file's path and full text (or why it
 * could not be read), every `REINS_*` environment variable, and the stamp of the manifests the project's
 * check commands come from.
 */
function cacheKey(
  root: string,
  file: string | null,
  source: PolicySource | null,
  env: NodeJS.ProcessEnv,
): string {
  const code = fileURLToPath(import.meta.url);
  const { size, mtimeMs } = statSync(code);
  const vars = Object.entries(env)
    .filter(([name]) => name.startsWith("REINS_"))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash("sha256")
    .update(JSON.stringify([code, size, mtimeMs, root, file, source, vars, projectStamp(root)]))
    .digest("hex");
}

/** The effective policy and what is wrong with the config it came from (one line per problem). */
export interface CheckedPolicy {
  policy: Policy;
  /** Empty when the config is valid; else each problem as `reins config` and the hooks' notices say it. */
  problems: readonly string[];
}

/**
 * The effective policy, as `loadPolicy` gives it, validated once rather than per call: the result and the
 * config's problems (their lines computed then, not per call) are kept in the project's
 * `.reins/cache/policy.json` under a hash of everything they were made from (see `cacheKey`) and used again
 * only while that hash is unchanged. A bad config never throws: its invalid parts take their defaults, and
 * a file that no longer parses is answered with the last valid one the cache kept, else the defaults.
 */
export function loadPolicyChecked(options: { cwd: string; env?: NodeJS.ProcessEnv }): CheckedPolicy {
  const root = findRoot(options.cwd);
  const env = options.env ?? {};
  const file = findPolicyFile(root);
  const source = file === null ? null : readPolicySource(root, file);
  const key = cacheKey(root, file, source, env);
  const path = policyCachePath(root);
  const cached = readCacheEntry(path);
  if (cached?.key === key) return { policy: cached.policy, problems: cached.problems };
  const previous = cached?.lastValid ?? null;
  const kept = file !== null && previous?.file === file ? previous : null;
  const loaded = policyFromText(root, file, source, env, () => kept?.text ?? null);
  const lastValid: LastValid | null =
    file !== null && loaded.validText !== null ? { file, text: loaded.validText } : kept;
  writeCacheEntry(path, { key, policy: loaded.policy, problems: loaded.problems, lastValid });
  return { policy: loaded.policy, problems: loaded.problems };
}

/** The effective policy alone, as loadPolicyChecked gives it. */
export function loadPolicyCached(options: { cwd: string; env?: NodeJS.ProcessEnv }): Policy {
  return loadPolicyChecked(options).policy;
}
