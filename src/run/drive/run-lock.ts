/**
 * One driver per run: the process driving a run holds `.reins/runs/<run>/driver.lock` (its pid). A second
 * `reins run --resume` of the same run refuses in one line; a lock left by a process that is gone (SIGKILL,
 * a crash) is taken over.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ReinsError } from "../../base/core/errors.js";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The pid of a live process driving the run in `dir` (`.reins/runs/<run>`), or null when none is. */
export function driverOf(dir: string): number | null {
  let holder = NaN;
  try {
    holder = Number(readFileSync(join(dir, "driver.lock"), "utf8").trim());
  } catch {
    return null;
  }
  return Number.isInteger(holder) && holder > 0 && alive(holder) ? holder : null;
}

/** Takes the run's lock in `dir` (`.reins/runs/<run>`); a ReinsError when a live process holds it. */
export function lockRun(dir: string, run: string): () => void {
  const path = join(dir, "driver.lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: "wx", mode: 0o600 });
      return () => {
        try {
          if (readFileSync(path, "utf8").trim() === String(process.pid)) rmSync(path, { force: true });
        } catch {
          // already gone
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    let holder = NaN;
    try {
      holder = Number(readFileSync(path, "utf8").trim());
    } catch {
      // removed meanwhile: try again
    }
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder))
      throw new ReinsError(
        "usage",
        `run ${run} is being driven by process ${holder}: a second driver would repeat its iterations and commits (stop that one first)`,
      );
    rmSync(path, { force: true });
  }
  throw new ReinsError("usage", `run ${run}: could not take its lock ${path}`);
}
