/** The stream of what the server records, and the store wrapper that feeds it and the latency histogram. */
import type { ServerResponse } from "node:http";
import type { LogRecord } from "../base/core/batch.js";
import type { Store } from "../base/core/store.js";

/** A listener that buffers more than this many bytes is too slow to follow and is dropped. */
const MAX_BUFFERED = 4 * 1024 * 1024;

/**
 * Server-sent events of every record this server writes (hooks, ingest, decide, human actions). Each
 * record goes out once as `event: record` with `{ scope, seq, event, decision }`; a comment every
 * `heartbeatMs` keeps proxies from closing an idle stream. Clients reconnect by themselves (EventSource).
 */
export class EventHub {
  readonly #clients = new Set<ServerResponse>();
  readonly #timer: NodeJS.Timeout;

  constructor(heartbeatMs = 15_000) {
    this.#timer = setInterval(() => this.#broadcast(": ping\n\n"), heartbeatMs);
    this.#timer.unref();
  }

  get size(): number {
    return this.#clients.size;
  }

  /** Takes over a response as an event stream until the client leaves or the hub closes. */
  attach(res: ServerResponse): void {
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    res.write("retry: 2000\n: connected\n\n");
    this.#clients.add(res);
    res.on("close", () => this.#clients.delete(res));
  }

  publish(records: readonly LogRecord[]): void {
    if (this.#clients.size === 0 || records.length === 0) return;
    let text = "";
    for (const r of records)
      // The id line carries the scope encoded: a raw line break in it would start a forged event.
      text += `id: ${encodeURIComponent(r.scope)} ${r.seq}\nevent: record\ndata: ${JSON.stringify({ scope: r.scope, seq: r.seq, event: r.event, decision: r.decision })}\n\n`;
    this.#broadcast(text);
  }

  #broadcast(text: string): void {
    for (const res of this.#clients) {
      if (res.writableLength > MAX_BUFFERED) res.destroy();
      else res.write(text);
    }
  }

  /** Ends every stream (on shutdown, so that closing the server does not wait for them). */
  close(): void {
    clearInterval(this.#timer);
    for (const res of this.#clients) res.end();
    this.#clients.clear();
  }
}

/**
 * The server's store: the real one, plus the time each append takes (for the latency histogram) and
 * the records it wrote (for the event stream). Everything the server records goes through it.
 */
export function observedStore(
  store: Store,
  onAppend: (records: readonly LogRecord[], seconds: number) => void,
): Store {
  return {
    kind: store.kind,
    location: store.location,
    async append(scope, events, policy) {
      const started = process.hrtime.bigint();
      const result = await store.append(scope, events, policy);
      onAppend(result.records, Number(process.hrtime.bigint() - started) / 1e9);
      return result;
    },
    state: (scope) => store.state(scope),
    events: (scope, options) => store.events(scope, options),
    scopes: () => store.scopes(),
    alerts: (filter) => store.alerts(filter),
    acknowledgeAlert: (id, by) => store.acknowledgeAlert(id, by),
    saveRun: (run) => store.saveRun(run),
    run: (id) => store.run(id),
    runs: () => store.runs(),
    close: () => store.close(),
  };
}
