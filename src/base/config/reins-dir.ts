/** The project's `.reins/` folder: made on first use, private to its owner, ignored by git. */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The project's `.reins/` folder, made on first use: readable by its owner only (0700; it holds the
 * tokens, the database and the spool), and with a `.gitignore` of `*`, so `git add -A` never stages them.
 */
export function reinsDir(root: string): string {
  const dir = join(root, ".reins");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ignore = join(dir, ".gitignore");
  if (!existsSync(ignore)) {
    try {
      writeFileSync(ignore, "# reins' own files: tokens, the database, the spool. Never commit them.\n*\n", {
        flag: "wx",
      });
    } catch {
      // Another process wrote it first.
    }
  }
  return dir;
}
