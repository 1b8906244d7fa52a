/**
 * Finding this project's server process (`reins serve`, not the user's hook daemon of guard/daemon/): its
 * address, and the proof by the hook secret that it is this project's.
 */
import { spawn } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import { reinsDir } from "../base/config/reins-dir.js";
import { takeStartLock } from "../base/config/start-lock.js";
import { existingHookSecret } from "../base/config/hook-secret.js";

/** The server's default address: loopback only. */
export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 7878;

/** The answer to a challenge that only a holder of the project's hook secret can give. */
export function proofOf(secret: string, nonce: string): string {
  // The "reins-daemon:" prefix is the wire format a running server and its hooks share: kept as it was.
  return createHmac("sha256", secret).update(`reins-daemon:${nonce}`).digest("hex");
}

/** The proof this project's server gives for `nonce`, from the hook secret on disk ("" when there is none). */
function challengeProof(root: string, nonce: string): string {
  const secret = existingHookSecret(root);
  return secret === "" ? "" : proofOf(secret, nonce);
}

/**
 * What answers at host:port: nothing (the connection is refused), this project's server (proven by the hook
 * secret), something else, or something that holds the port but did not answer within `timeoutMs` (busy:
 * starting another server beside it would only lose the race for the port).
 */
export async function serverAt(
  host: string,
  port: number,
  root: string,
  timeoutMs = 300,
): Promise<"none" | "ours" | "other" | "busy"> {
  const nonce = randomBytes(16).toString("hex");
  let response: Response;
  try {
    response = await fetch(`http://${host}:${port}/healthz?challenge=${nonce}`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const code = ((error as { cause?: { code?: unknown } }).cause?.code ?? "") as string;
    return (error as Error).name === "TimeoutError" || code === "UND_ERR_HEADERS_TIMEOUT" ? "busy" : "none";
  }
  // Whatever answers HTTP holds the port, even when its answer is not a reins server's JSON.
  try {
    const body = (await response.json()) as { root?: unknown; proof?: unknown } | null;
    // Ours only if it proves it holds the project's hook secret: anything can claim a root. Ours even when
    // it reports its store down (503): it answers hooks, spooling, and says why.
    return body?.root === root && typeof body.proof === "string" && body.proof === challengeProof(root, nonce)
      ? "ours"
      : "other";
  } catch {
    return "other";
  }
}

/** The lock a start of the project's server holds until the server listens (or failed to). */
export function serveStartLock(root: string): string {
  return join(root, ".reins", "serve.starting");
}

/**
 * Makes sure the project's server runs: starts `reins serve` in the background (logging to
 * `.reins/serve.log`) when nothing answers, and waits up to `waitMs` for it. Returns whether it was
 * already running, or that the port belongs to something else.
 */
export async function ensureServer(options: {
  root: string;
  bin: string;
  host: string;
  port: number;
  waitMs?: number;
}): Promise<"running" | "started" | "failed" | "port taken"> {
  const { root, bin, host, port } = options;
  const deadline = Date.now() + (options.waitMs ?? 5_000);
  let found = await serverAt(host, port, root);
  // Something holds the port and is slow to answer (a server under load): wait for its answer.
  while (found === "busy" && Date.now() < deadline) found = await serverAt(host, port, root, 1_000);
  if (found === "ours") return "running";
  // Another project's server (or another program) holds the port: answering through it would use the wrong store.
  if (found === "other") return "port taken";
  if (found === "busy") return "failed";
  reinsDir(root);
  // Sessions that find the server gone at once start one, not one each: the others only wait for it.
  if (takeStartLock(serveStartLock(root))) {
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
    closeSync(log);
  }
  while (Date.now() < deadline) {
    if ((await serverAt(host, port, root)) === "ours") return "started";
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return "failed";
}
