import { useEffect, useState } from "preact/hooks";
import type { LogRecord } from "./types.js";

/**
 * The server's event stream (`GET /api/stream`), one EventSource for the whole page. EventSource
 * reconnects by itself after a dropped connection; when the server refused it outright (it is then
 * closed for good) it is opened again after a pause.
 */

export type LiveStatus = "connecting" | "live" | "reconnecting";

const listeners = new Set<(record: LogRecord) => void>();
const watchers = new Set<(status: LiveStatus) => void>();
let source: EventSource | null = null;
let status: LiveStatus = "connecting";

function setStatus(next: LiveStatus): void {
  status = next;
  for (const w of watchers) w(next);
}

function connect(): void {
  source = new EventSource("api/stream");
  source.onopen = () => setStatus("live");
  source.onerror = () => {
    setStatus("reconnecting");
    if (source?.readyState === EventSource.CLOSED) {
      source = null;
      setTimeout(connect, 3_000);
    }
  };
  source.addEventListener("record", (message: MessageEvent<string>) => {
    let record: LogRecord;
    try {
      record = JSON.parse(message.data) as LogRecord;
    } catch {
      return;
    }
    for (const l of listeners) l(record);
  });
}

/** Calls `listener` for every record the server writes from now on; returns the unsubscribe. */
export function subscribe(listener: (record: LogRecord) => void): () => void {
  if (source === null) connect();
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Subscribes for the life of a component. */
export function useLive(listener: (record: LogRecord) => void, deps: unknown[]): void {
  useEffect(() => subscribe(listener), deps);
}

/** The stream's connection state, for the header. */
export function useLiveStatus(): LiveStatus {
  const [value, setValue] = useState(status);
  useEffect(() => {
    watchers.add(setValue);
    if (source === null) connect();
    return () => void watchers.delete(setValue);
  }, []);
  return value;
}
