/** A once-only lock file: many processes finding a background process gone start one, not one each. */
import { rmSync, statSync, writeFileSync } from "node:fs";

/** How long a start in progress keeps others from starting a second daemon beside it. */
const START_LOCK_MS = 10_000;

/**
 * Takes the lock file that says a start is under way: false when another start took it less than ten
 * seconds ago (many hooks finding their daemon gone at once start one, not one each). The started process
 * removes it once it listens or has failed to; a start that died leaves it to expire. Throws only when the
 * folder cannot be written.
 */
export function takeStartLock(lock: string): boolean {
  try {
    writeFileSync(lock, `${process.pid}\n`, { flag: "wx", mode: 0o600 });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  let age = Infinity;
  try {
    age = Date.now() - statSync(lock).mtimeMs;
  } catch {
    // gone meanwhile
  }
  if (age < START_LOCK_MS) return false;
  rmSync(lock, { force: true });
  try {
    writeFileSync(lock, `${process.pid}\n`, { flag: "wx", mode: 0o600 });
    return true;
  } catch {
    return false; // another start took the expired lock first
  }
}
