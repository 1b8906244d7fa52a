/** A reins server used as the store, through its HTTP API. */
import type { BatchResult, LogRecord, StoredAlert } from "../core/batch.js";
import type { Decision } from "../core/decision.js";
import type { Pipeline } from "../core/pipeline.js";
import { ReinsError } from "../core/errors.js";
import type { ReinsEvent } from "../core/reins-event.js";
import type { Policy } from "../core/policy.js";
import type { State } from "../core/state.js";
import type { Store, StoredRun } from "../core/store.js";
import { checkRunId, encodeRun } from "../core/stored-run.js";

/** How long a hook waits for a shared server before it answers without it. @default 2000 ms */
export const DEFAULT_REMOTE_TIMEOUT_MS = 2_000;

/**
 * A reins server (`reins serve`) used as the store: hooks on many machines record through one server's
 * API (`POST /api/decide`) and the server decides with its own policy and store. When the server
 * cannot be reached in time, or refuses the token, calls fail with `store_unavailable`, so the
 * governor answers allow with a warning and spools the events for exactly-once delivery later. Runs of
 * `reins run` are saved with `PUT /api/runs/:id`, which takes the people's token, not the agents'.
 *
 * `url` may list several servers of one fleet (comma-separated, all on one shared store): a call goes to
 * the one that answered last, and one that cannot be reached is passed over for the next, within the
 * call's one timeout. A server that answers at all (an error status included) is not passed over. A
 * retried event is applied once: the servers share the store, and events carry their ids. An entry that
 * names no server (empty, not a URL, not http or https) is skipped and named in `warning`; with none left
 * the store is an unavailable one, so a hook spools its events and honours `failClosed`.
 */
export class RemoteStore implements Store {
  readonly kind = "remote";
  /**
   * One line naming the entries of `url` that were skipped (empty, not a URL, not http or https), or "" when
   * none was. Every `store_unavailable` error of this store carries it too, so the governor's warning does.
   */
  readonly warning: string;
  /** The usable entries of `url`; with none, every call fails with `store_unavailable`. */
  readonly #servers: readonly string[];
  /** The skipped entries of `url`, each named once, or "". */
  readonly #skipped: string;
  /** The server that answered last: calls go there first. */
  #current = 0;
  readonly #token: string;
  readonly #timeoutMs: number;

  readonly #onAnswer: ((server: string) => void) | undefined;

  /**
   * `options.first` is the server to try first (the one that answered another process last), when it is
   * one of `url`'s; `options.onAnswer` hears of a server that answered when it was not the one tried first.
   */
  constructor(
    url: string,
    token: string,
    timeoutMs = DEFAULT_REMOTE_TIMEOUT_MS,
    options: { first?: string; onAnswer?: (server: string) => void } = {},
  ) {
    const entries = url.split(",").map(entryOf);
    const servers = entries.flatMap((e) => ("server" in e ? [e.server] : []));
    this.#skipped = skippedList(entries.flatMap((e) => ("skipped" in e ? [e.skipped] : [])));
    this.warning = this.#skipped === "" ? "" : `REINS_SERVER_URL: skipped ${this.#skipped}`;
    this.#servers = servers;
    this.#current = Math.max(0, options.first === undefined ? 0 : servers.indexOf(options.first));
    this.#onAnswer = options.onAnswer;
    this.#token = token;
    this.#timeoutMs = timeoutMs;
  }

  /** The server calls go to now, for messages: a URL without credentials. */
  get location(): string {
    return this.#servers[this.#current] ?? "REINS_SERVER_URL (no usable server)";
  }

  /** A `store_unavailable` error with `message`, and the line on skipped entries when there is one. */
  #unavailable(message: string): ReinsError {
    return new ReinsError("store_unavailable", this.warning === "" ? message : `${message}; ${this.warning}`);
  }

  /**
   * The answer of `method path` with `body` (JSON text), or null when the server has no such thing (404
   * `not_found`).
   */
  async #call<T>(method: "GET" | "POST" | "PUT", path: string, body?: string): Promise<T | null> {
    const response = await this.#fetch(method, path, body);
    const text = await response.text();
    if (response.ok) return JSON.parse(text) as T;
    let message = text.slice(0, 300);
    let code: string | undefined;
    try {
      ({ message = message, error: code } = JSON.parse(text) as { message?: string; error?: string });
    } catch {
      // not JSON: keep the text
    }
    if (response.status === 404) {
      if (code === "not_found") return null;
      // Not a missing thing but a missing route: a server of an older reins. Null would read as "none".
      throw this.#unavailable(
        `reins server ${this.location} has no ${method} ${path.split("?")[0] ?? path} (an older reins?)`,
      );
    }
    if (response.status === 401)
      throw this.#unavailable(
        `reins server ${this.location} refused the token (401): set REINS_TOKEN to the server's API token`,
      );
    if (response.status === 400) throw new ReinsError("invalid_event", `reins server: ${message}`);
    throw this.#unavailable(`reins server ${this.location} answered ${response.status}: ${message}`);
  }

  /**
   * The first answer of the servers, from the one that answered last on: each unreachable one is passed
   * over, and each try has an even share of what is left of the timeout, so a server that hangs cannot
   * take the others' time.
   */
  async #fetch(method: string, path: string, body: string | undefined): Promise<Response> {
    // No server to try: the store is an unavailable one, so the governor spools and honours failClosed.
    if (this.#servers.length === 0)
      throw new ReinsError(
        "store_unavailable",
        `REINS_SERVER_URL names no usable server (e.g. http://reins.internal:7878)${this.#skipped === "" ? "" : `: skipped ${this.#skipped}`}`,
      );
    const deadline = Date.now() + this.#timeoutMs;
    const failures: string[] = [];
    const count = this.#servers.length;
    for (let tried = 0; tried < count; tried++) {
      const index = (this.#current + tried) % count;
      const server = this.#servers[index] ?? "";
      const share = Math.max(1, Math.floor((deadline - Date.now()) / (count - tried)));
      try {
        const response = await fetch(`${server}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${this.#token}`,
            ...(body !== undefined ? { "content-type": "application/json" } : {}),
          },
          ...(body !== undefined ? { body } : {}),
          signal: AbortSignal.timeout(share),
        });
        if (index !== this.#current) {
          this.#current = index;
          this.#onAnswer?.(server);
        }
        return response;
      } catch (error) {
        // fetch's own message is "fetch failed"; its cause says why (ECONNREFUSED, or "bad port" for a
        // port fetch never connects to, such as 9).
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        const why =
          (error as Error).name === "TimeoutError"
            ? `no answer in ${share} ms`
            : (cause?.code ?? cause?.message ?? (error as Error).message);
        failures.push(`${server} (${why})`);
      }
    }
    throw this.#unavailable(`reins server${count > 1 ? "s" : ""} unreachable: ${failures.join(", ")}`);
  }

  async append(
    scope: string,
    events: readonly ReinsEvent[],
    _policy: Policy,
    guards?: Pipeline,
  ): Promise<BatchResult> {
    if (guards !== undefined)
      throw new ReinsError(
        "usage",
        `reins server ${this.location} decides with its own guards: custom guards work with a memory, SQLite or Redis store`,
      );
    const answer = await this.#call<{ decisions: (Decision | null)[]; state: State | null }>(
      "POST",
      "/api/decide",
      JSON.stringify({ scope, events, include_state: true }),
    );
    if (answer === null) throw this.#unavailable(`reins server ${this.location} has no /api/decide`);
    return {
      answers: answer.decisions,
      states: new Map(answer.state !== null ? [[scope, answer.state]] : []),
      records: [],
      alerts: [],
    };
  }

  async state(scope: string): Promise<State | null> {
    const answer = await this.#call<{ state: State }>("GET", `/api/sessions/${encodeURIComponent(scope)}`);
    return answer?.state ?? null;
  }

  async events(scope: string, options: { from?: number; limit?: number } = {}): Promise<LogRecord[]> {
    const query = new URLSearchParams({
      from: String(options.from ?? 0),
      limit: String(options.limit ?? 1_000),
    });
    const answer = await this.#call<{ items: LogRecord[] }>(
      "GET",
      `/api/sessions/${encodeURIComponent(scope)}/events?${query.toString()}`,
    );
    return answer?.items ?? [];
  }

  async scopes(): Promise<string[]> {
    const answer = await this.#call<{ items: { scope: string }[] }>("GET", "/api/budgets?limit=1000");
    return answer?.items.map((s) => s.scope) ?? [];
  }

  async alerts(filter: { scope?: string; acknowledged?: boolean } = {}): Promise<StoredAlert[]> {
    const query = new URLSearchParams({ limit: "1000" });
    if (filter.scope !== undefined) query.set("budget_id", filter.scope);
    if (filter.acknowledged !== undefined) query.set("acknowledged", String(filter.acknowledged));
    const answer = await this.#call<{ items: StoredAlert[] }>("GET", `/api/alerts?${query.toString()}`);
    return answer?.items ?? [];
  }

  acknowledgeAlert(id: string, by: string): Promise<StoredAlert | null> {
    return this.#call<StoredAlert>(
      "POST",
      `/api/alerts/${encodeURIComponent(id)}/acknowledge`,
      JSON.stringify({ by }),
    );
  }

  async saveRun(run: StoredRun): Promise<void> {
    // Checked here as every store checks it, before any upload; the JSON is made once.
    const { id, status, updatedAt, summary, checkpoint } = encodeRun(run);
    const body = `{"status":${JSON.stringify(status)},"updatedAt":${updatedAt},"summary":${summary},"checkpoint":${checkpoint}}`;
    const answer = await this.#call<unknown>("PUT", `/api/runs/${encodeURIComponent(id)}`, body);
    if (answer === null) throw this.#unavailable(`reins server ${this.location} has no /api/runs`);
  }

  async run(id: string): Promise<StoredRun | null> {
    return this.#call<StoredRun>("GET", `/api/runs/${encodeURIComponent(checkRunId(id))}`);
  }

  async runs(): Promise<Omit<StoredRun, "checkpoint">[]> {
    const runs: Omit<StoredRun, "checkpoint">[] = [];
    for (;;) {
      const answer = await this.#call<{ total: number; items: Omit<StoredRun, "checkpoint">[] }>(
        "GET",
        `/api/runs?limit=1000&offset=${runs.length}`,
      );
      runs.push(...(answer?.items ?? []));
      if (answer === null || answer.items.length === 0 || runs.length >= answer.total) return runs;
    }
  }

  async close(): Promise<void> {}
}

/** How a message names an empty entry of REINS_SERVER_URL (`a,,b`, a trailing comma, spaces). */
const EMPTY = "an empty entry";

/**
 * One entry of REINS_SERVER_URL: the server as calls address it (its origin and path, without a trailing
 * slash), or what to say of an entry that names none (empty, not a URL, not http or https).
 */
function entryOf(text: string): { server: string } | { skipped: string } {
  const entry = text.trim();
  if (entry === "") return { skipped: EMPTY };
  let parsed: URL;
  try {
    parsed = new URL(entry);
  } catch {
    return { skipped: `"${withoutPassword(entry)}" (not a URL)` };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    return { skipped: `"${withoutPassword(entry)}" (not http or https)` };
  return { server: parsed.origin + parsed.pathname.replace(/\/+$/, "") };
}

/** An entry as messages show it: a password in it (`scheme://user:password@`) hidden. */
function withoutPassword(entry: string): string {
  return entry.replace(/^([^:/]*:\/\/[^:@/]*):[^@/]*@/, "$1:***@");
}

/** The skipped entries, each named once and the empty ones counted, as a list for a message; "" for none. */
function skippedList(skipped: readonly string[]): string {
  const empty = skipped.filter((s) => s === EMPTY).length;
  const named = [...new Set(skipped.filter((s) => s !== EMPTY))];
  if (empty > 0) named.push(empty === 1 ? EMPTY : `${empty} empty entries`);
  return named.join(", ");
}
