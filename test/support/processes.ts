import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";

const root = join(import.meta.dirname, "..", "..");

/** Starts `test/fixtures/<script>` in a new Node process. */
export function startFixture(script: string, args: string[], cwd: string): ChildProcess {
  return spawn(process.execPath, [join(root, "test", "fixtures", script), ...args], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Waits for a process to exit; resolves with its code and everything it printed. */
export function finished(
  child: ChildProcess,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}
