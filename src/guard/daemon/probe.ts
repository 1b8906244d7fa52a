/** Asking a hook daemon over its socket: its status, proven with the user's daemon key, and to stop. */
import { randomBytes } from "node:crypto";
import { request, type IncomingHttpHeaders } from "node:http";
import { dirname } from "node:path";
import { macMatches, readDaemonKey } from "./key.js";
import type { ProjectSummary } from "./projects.js";
import { HEADERS } from "./protocol.js";

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
  /** The loopback port of Claude Code's http hooks (absent when they are off). */
  httpPort?: number;
}

/** What came back over a socket: the status code, the headers, the body as sent and parsed (null if not JSON). */
export interface SocketReply {
  status: number;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  body: unknown;
}

/** One request over a Unix socket: its reply, or null when none came in time. */
export function socketRequest(
  socket: string,
  method: "GET" | "POST",
  path: string,
  timeoutMs: number,
): Promise<SocketReply | null> {
  return new Promise((resolve) => {
    // No agent: a pooled connection to whatever held the path before must never carry the next request.
    const req = request({ socketPath: socket, method, path, timeout: timeoutMs, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const raw = Buffer.concat(chunks);
        let body: unknown = null;
        try {
          body = JSON.parse(raw.toString("utf8"));
        } catch {
          // not JSON: not a reins daemon
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, raw, body });
      });
      res.on("error", () => resolve(null));
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(null));
    req.end();
  });
}

/**
 * Who answers on a socket: nobody; a reins daemon that proved the user's daemon key (its `/status` signed
 * over a fresh nonce); or a program that answered without that proof, with what it said.
 */
export type SocketAnswer =
  { kind: "none" } | { kind: "proven"; status: DaemonStatus } | { kind: "unproven"; detail: string };

/**
 * Asks `socket` for its status with a fresh nonce and checks the proof against the key of the socket's
 * runtime folder (see key.ts): only a daemon holding the key answers as proven.
 */
export async function probeSocket(socket: string, timeoutMs = 1_000): Promise<SocketAnswer> {
  const nonce = randomBytes(16).toString("hex");
  const answer = await socketRequest(socket, "GET", `/status?nonce=${nonce}`, timeoutMs);
  if (answer === null) return { kind: "none" };
  const body = answer.body as Partial<DaemonStatus> | null;
  const key = readDaemonKey(dirname(socket));
  if (
    answer.status === 200 &&
    body?.kind === DAEMON_KIND &&
    key !== null &&
    macMatches(key, [nonce, answer.raw], answer.headers[HEADERS.proof])
  )
    return { kind: "proven", status: body as DaemonStatus };
  const claims = body?.kind === DAEMON_KIND ? `, claiming to be reins' daemon (pid ${String(body.pid)})` : "";
  const why = key === null ? "there is no daemon key to check it with" : "without the daemon key's proof";
  return { kind: "unproven", detail: `it answered ${answer.status}${claims}, ${why}` };
}

/** The status of the reins hook daemon on `socket`, or null when nothing answers there as one (proven). */
export async function probeDaemon(socket: string, timeoutMs = 1_000): Promise<DaemonStatus | null> {
  const answer = await probeSocket(socket, timeoutMs);
  return answer.kind === "proven" ? answer.status : null;
}
