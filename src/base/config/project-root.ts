/** Finding a project's root from a folder in it: light, so the status line and the hooks load nothing else. */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** The policy files reins reads, in order of preference, relative to the project root. */
export const POLICY_FILES = ["reins.config.json", join(".reins", "config.json")] as const;

/** The project root: the nearest folder, from `cwd` up, with a policy file, a `.reins` folder or `.git`. */
export function findRoot(cwd: string): string {
  let dir = resolve(cwd);
  for (;;) {
    if (
      POLICY_FILES.some((f) => existsSync(join(dir, f))) ||
      existsSync(join(dir, ".reins")) ||
      existsSync(join(dir, ".git"))
    ) {
      return dir;
    }
    const up = dirname(dir);
    if (up === dir) return resolve(cwd);
    dir = up;
  }
}
