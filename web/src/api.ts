/**
 * The dashboard's only way to the server: JSON over fetch, the API token from sessionStorage (asked
 * for once, when the server first answers 401), and every failure as an ApiError with the server's words.
 */

/**
 * Where the token is kept: one per project. Under `reins serve --all` every project's dashboard is on one
 * origin (`/p/<id>/`), and one project's token must not be sent to another's API.
 */
const TOKEN_KEY = `reins.apiToken${/^\/p\/[0-9a-f]{16}\//.exec(location.pathname)?.[0] ?? ""}`;

/** A request the server refused or could not answer. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }

  override toString(): string {
    return this.status === 0 ? this.message : `${this.status} ${this.code}: ${this.message}`;
  }
}

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

let askToken: (why: string) => Promise<string | null> = () => Promise.resolve(null);

/** Sets how the app asks the person for the API token (a dialog); null means they declined. */
export function onTokenNeeded(ask: (why: string) => Promise<string | null>): void {
  askToken = ask;
}

async function send(method: string, path: string, body: unknown, token: string | null): Promise<Response> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token !== null) headers.authorization = `Bearer ${token}`;
  try {
    return await fetch(path, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch (error) {
    throw new ApiError(0, "unreachable", `the reins server did not answer (${String(error)})`);
  }
}

/** Calls the API; on a 401 asks for the token once, keeps it, and tries again. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response = await send(method, path, body, storedToken());
  if (response.status === 401) {
    const token = await askToken(
      storedToken() === null
        ? "This action needs the API token (printed by `reins serve`, kept in .reins/api-token)."
        : "The server refused the API token: enter it again.",
    );
    if (token !== null) {
      storeToken(token);
      response = await send(method, path, body, token);
    }
  }
  const text = await response.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: reported below with the status
  }
  if (!response.ok) {
    const e = (json ?? {}) as { error?: unknown; message?: unknown };
    throw new ApiError(
      response.status,
      typeof e.error === "string" ? e.error : "error",
      typeof e.message === "string" ? e.message : text.slice(0, 200) || response.statusText,
    );
  }
  return json as T;
}

/** Encodes a scope id (`session:abc`) for a path segment. */
export const enc = encodeURIComponent;

/** A query string from the defined values of `params`. */
export function query(params: Record<string, string | number | undefined | string[]>): string {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === "") continue;
    if (Array.isArray(value)) for (const v of value) q.append(key, v);
    else q.set(key, String(value));
  }
  const s = q.toString();
  return s === "" ? "" : `?${s}`;
}
