/**
 * How a hook client talks to the user's hook daemon over its Unix socket: `POST /hooks/<agent>` with the
 * hook input as the body and these headers; the call is signed with the project's hook secret, and the
 * answer with the user's daemon key (docs/daemon-proof.md). The native client (src/client/reins-hook.c)
 * and the shell client (bin/reins-hook) speak it too.
 */

/**
 * The protocol version a client sends; a daemon answers 400 to any other, and the client falls back.
 * Version 1 sent the hook secret itself as a bearer token and took any answer carrying this header.
 */
export const PROTOCOL = "2";

/** The header names (lower case, as Node gives them). */
export const HEADERS = {
  /** The protocol version. */
  protocol: "x-reins-protocol",
  /** The project's root, percent-encoded: where the client found `.reins/hook-secret`. */
  root: "x-reins-root",
  /** The hook process's `REINS_*` variables, as `NAME=value&...` with both sides percent-encoded. */
  env: "x-reins-env",
  /** The client's nonce, `<unix seconds>-<32 hex digits>`: fresh for every call. */
  nonce: "x-reins-nonce",
  /** The client's proof that it holds the project's hook secret: see `callParts`. */
  auth: "x-reins-auth",
  /** The daemon's proof that it holds the user's daemon key: HMAC(key, nonce + "\n" + body). */
  proof: "x-reins-proof",
} as const;

/** A nonce as the clients make it. */
export const NONCE = /^(\d{1,12})-[0-9a-f]{32}$/;

/** How far a nonce's time may lie from the daemon's clock, in seconds (a replayed call is older). */
export const NONCE_WINDOW_S = 300;

/**
 * What a client signs with the project's hook secret (`x-reins-auth`), each part joined by a newline: the
 * nonce, the agent of the path, the root and env headers as sent (empty when absent), and the body. A call
 * taken by another program cannot be sent again, nor sent for another agent, project or variables.
 */
export function callParts(
  nonce: string,
  agent: string,
  rootHeader: string,
  envHeader: string,
  body: Buffer | string,
): (string | Buffer)[] {
  return [nonce, agent, rootHeader, envHeader, body];
}

/**
 * Variables of the daemon itself, never of a project: a client does not forward them, and the daemon
 * ignores them in what it is sent.
 */
export const DAEMON_VARIABLES: ReadonlySet<string> = new Set([
  "REINS_RUNTIME_DIR",
  "REINS_DAEMON_IDLE",
  "REINS_DAEMON_PROJECT_IDLE",
  "REINS_PORT",
]);

/** Whether `name` is a variable that shapes how a project's hooks are answered (policy, store, server). */
export function isProjectVariable(name: string): boolean {
  return name.startsWith("REINS_") && !DAEMON_VARIABLES.has(name);
}

/** The percent-encoding the clients use: every byte outside `A-Z a-z 0-9 - . _ ~ /` as `%XX`. */
export function encodeHeaderValue(text: string): string {
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~/]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/**
 * Reads a percent-encoded header value back into text. Node hands header bytes over 0x7f as Latin-1
 * characters, so a client that sends a path's UTF-8 bytes unencoded is read right too. Null when the value
 * is not valid UTF-8 once decoded or carries a NUL.
 */
export function decodeHeaderValue(value: string): string | null {
  const raw = Buffer.from(value, "latin1");
  const bytes: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const byte = raw[i]!;
    if (byte === 0x25 && i + 2 < raw.length) {
      const hex = Number.parseInt(raw.toString("latin1", i + 1, i + 3), 16);
      if (Number.isNaN(hex)) return null;
      bytes.push(hex);
      i += 2;
    } else bytes.push(byte);
  }
  const text = Buffer.from(bytes).toString("utf8");
  if (text.includes("\uFFFD") || text.includes("\0")) return null;
  return text;
}

/** The `REINS_*` variables of `env` that a project's answers depend on, encoded for the env header. */
export function encodeProjectEnv(env: NodeJS.ProcessEnv): string {
  return Object.keys(env)
    .filter(isProjectVariable)
    .sort()
    .map((name) => `${encodeHeaderValue(name)}=${encodeHeaderValue(env[name] ?? "")}`)
    .join("&");
}

/**
 * The project variables an env header carries; null when it is malformed. Names that are not project
 * variables are dropped, and an inherited name such as `__proto__` cannot reach a prototype.
 */
export function decodeProjectEnv(header: string | undefined): Record<string, string> | null {
  const env: Record<string, string> = Object.create(null) as Record<string, string>;
  if (header === undefined || header === "") return env;
  for (const pair of header.split("&")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) return null;
    const name = decodeHeaderValue(pair.slice(0, eq));
    const value = decodeHeaderValue(pair.slice(eq + 1));
    if (name === null || value === null) return null;
    if (isProjectVariable(name)) env[name] = value;
  }
  return env;
}
