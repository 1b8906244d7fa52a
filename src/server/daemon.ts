import { spawn } from "node:child_process";
import { openSync } from "node:fs";
import { join } from "node:path";
import { reinsDir } from "../shell/reins-dir.js";

/** The daemon's default address: loopback only. */
export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 7878;

/** What answers at host:port: nothing, this project's daemon, or another project's. */
export async function daemonAt(
  host: string,
  port: number,
  root: string,
  timeoutMs = 300,
): Promise<"none" | "ours" | "other"> {
  let response: Response;
  try {
    response = await fetch(`http://${host}:${port}/healthz`, { signal: AbortSignal.timeout(timeoutMs) });
  } catch {
    return "none";
  }
  // Whatever answers HTTP holds the port, even when its answer is not a reins daemon's JSON.
  try {
    const body = (await response.json()) as { root?: unknown } | null;
    // Ours even when it reports its store down (503): it answers hooks, spooling, and says why.
    return body?.root === root ? "ours" : "other";
  } catch {
    return "other";
  }
}

/**
 * Makes sure the project's daemon runs: starts `reins serve` in the background (logging to
 * `.reins/serve.log`) when nothing answers, and waits up to `waitMs` for it. Returns whether it was
 * already running, or that the port belongs to something else.
 */
export async function ensureDaemon(options: {
  root: string;
  bin: string;
  host: string;
  port: number;
  waitMs?: number;
}): Promise<"running" | "started" | "failed" | "port taken"> {
  const { root, bin, host, port } = options;
  const found = await daemonAt(host, port, root);
  if (found === "ours") return "running";
  // Another project's daemon (or another program) holds the port: answering through it would use the wrong store.
  if (found === "other") return "port taken";
  reinsDir(root);
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
    if ((await daemonAt(host, port, root)) === "ours") return "started";
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return "failed";
}
