/** Asking a hook daemon over its socket: its status, and to stop. */
import { request } from "node:http";
import type { ProjectSummary } from "./projects.js";

/** The kind a daemon's status names itself by, so a client tells it from any other program on the socket. */
export const DAEMON_KIND = "reins-hook-daemon";

/** What `GET /status` answers. */
export interface DaemonStatus {
  kind: typeof DAEMON_KIND;
  pid: number;
  version: string;
  /** The reins whose daemon this is (its `bin/reins.js`). */
  bin: string;
  socket: string;
  startedAt: number;
  lastCallAt: number;
  calls: number;
  idleMs: number;
  rssBytes: number;
  projects: ProjectSummary[];
}

/** One request over a Unix socket: the status code and the parsed JSON body, or null when none came in time. */
export function socketRequest(
  socket: string,
  method: "GET" | "POST",
  path: string,
  timeoutMs: number,
): Promise<{ status: number; body: unknown } | null> {
  return new Promise((resolve) => {
    // No agent: a pooled connection to whatever held the path before must never carry the next request.
    const req = request({ socketPath: socket, method, path, timeout: timeoutMs, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        let body: unknown = null;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
          // not JSON: not a reins daemon
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
      res.on("error", () => resolve(null));
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(null));
    req.end();
  });
}

/** The status of the reins hook daemon on `socket`, or null when nothing answers there as one. */
export async function probeDaemon(socket: string, timeoutMs = 1_000): Promise<DaemonStatus | null> {
  const answer = await socketRequest(socket, "GET", "/status", timeoutMs);
  const body = answer?.body as Partial<DaemonStatus> | null | undefined;
  return answer?.status === 200 && body?.kind === DAEMON_KIND ? (body as DaemonStatus) : null;
}
