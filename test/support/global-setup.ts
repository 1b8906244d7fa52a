/**
 * Vitest's global setup: every hook daemon a test starts with this process's environment lives in a runtime
 * folder of this run's own (REINS_RUNTIME_DIR), never the user's, and is stopped when the run ends; what
 * reins keeps outside projects goes to a state folder of the run's own (REINS_STATE_DIR).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stopHookDaemons } from "./processes.js";

export function setup(): () => Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "reins-test-runtime-"));
  process.env.REINS_RUNTIME_DIR = dir;
  // What reins keeps outside projects (install records, high-water marks) goes to this run's own folder too.
  const state = mkdtempSync(join(tmpdir(), "reins-test-state-"));
  process.env.REINS_STATE_DIR = state;
  return async () => {
    await stopHookDaemons({ REINS_RUNTIME_DIR: dir });
    rmSync(dir, { recursive: true, force: true });
    rmSync(state, { recursive: true, force: true });
  };
}
