/**
 * Vitest's global setup: every hook daemon a test starts with this process's environment lives in a runtime
 * folder of this run's own (REINS_RUNTIME_DIR), never the user's, and is stopped when the run ends.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stopHookDaemons } from "./processes.js";

export function setup(): () => Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "reins-test-runtime-"));
  process.env.REINS_RUNTIME_DIR = dir;
  return async () => {
    await stopHookDaemons({ REINS_RUNTIME_DIR: dir });
    rmSync(dir, { recursive: true, force: true });
  };
}
