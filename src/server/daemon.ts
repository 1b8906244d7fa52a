import { spawn } from "node:child_process";
import { mkdirSync, openSync } from "node:fs";
import { join } from "node:path";

/** The daemon's default address: loopback only. */
export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 7878;

/** Whether a reins daemon answers at host:port (within `timeoutMs`). */
export async function daemonUp(host: string, port: number, timeoutMs = 300): Promise<boolean> {
  try {
    const response = await fetch(`http://${host}:${port}/healthz`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * Makes sure the project's daemon runs: starts `reins serve` in the background (logging to
 * `.reins/serve.log`) when nothing answers, and waits up to `waitMs` for it. Returns whether it was
 * already running.
 */
export async function ensureDaemon(options: {
  root: string;
  bin: string;
  host: string;
  port: number;
  waitMs?: number;
}): Promise<"running" | "started" | "failed"> {
  const { root, bin, host, port } = options;
  if (await daemonUp(host, port)) return "running";
  mkdirSync(join(root, ".reins"), { recursive: true });
  const log = openSync(join(root, ".reins", "serve.log"), "a");
  const child = spawn(
    process.execPath,
    [bin, "--cwd", root, "serve", "--host", host, "--port", String(port)],
    {
      cwd: root,
      detached: true,
      stdio: ["ignore", log, log],
    },
  );
  child.unref();
  const deadline = Date.now() + (options.waitMs ?? 5_000);
  while (Date.now() < deadline) {
    if (await daemonUp(host, port)) return "started";
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return "failed";
}
