/** Captured runs of real agent CLIs, for the runners' tests. */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** A captured run of a real agent CLI from test/fixtures/agents (see its README): stdout, and stderr when kept. */
export function capturedRun(name: string): { raw: string; stderr: string } {
  const base = join(import.meta.dirname, "..", "fixtures", "agents", name);
  const stderr = existsSync(`${base}.stderr`) ? readFileSync(`${base}.stderr`, "utf8") : "";
  return { raw: readFileSync(`${base}.jsonl`, "utf8"), stderr };
}

/** The note the agent runner appends to stderr when it kills a run at its time limit. */
export const TIMED_OUT_NOTE = "[reins] timed out after 600000 ms: process group killed\n";
