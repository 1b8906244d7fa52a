/** The native command-hook client, compiled at `reins init` when a C compiler is there. */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * Builds the native command-hook client (src/client/reins-hook.c) into `<dir>/bin/reins-hook` with the
 * system C compiler, so a hook call costs a connect instead of a shell, curl and cat. Compiled aside and
 * renamed into place, so a hook running the old one meanwhile is not disturbed. Returns its path, or null
 * when no compiler is there (the shell client is used instead).
 */
export function buildClient(dir: string, source: string): string | null {
  if (!existsSync(source)) return null;
  const out = join(dir, "bin", "reins-hook");
  const aside = `${out}.${process.pid}.tmp`;
  mkdirSync(dirname(out), { recursive: true });
  for (const compiler of ["cc", "gcc", "clang"]) {
    try {
      execFileSync(compiler, ["-O2", "-o", aside, source], { stdio: "ignore", timeout: 30_000 });
      renameSync(aside, out);
      return out;
    } catch {
      // try the next compiler
    }
  }
  rmSync(aside, { force: true });
  return null;
}
