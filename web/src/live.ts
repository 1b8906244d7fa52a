import { useEffect, useState } from "preact/hooks";
import { storedToken } from "./api.js";
import { refreshAll } from "./ui.js";
import type { LogRecord } from "./types.js";

/**
 * The server's event stream (`GET /api/stream`), one connection for the whole page: an EventSource,
 * which reconnects by itself after a dropped connection (when the server refused it outright it is
 * closed for good, and opened again after a pause); or, once the person has given the API token, the
 * same stream through fetch with the token, which a server off loopback requires.
 */

export type LiveStatus = "connecting" | "live" | "reconnecting";

const listeners = new Set<(record: LogRecord) => void>();
const watchers = new Set<(status: LiveStatus) => void>();
let source: EventSource | "fetch" | null = null;
let status: LiveStatus = "connecting";

function setStatus(next: LiveStatus): void {
  // Back after a gap: records written meanwhile never came, so every panel reloads.
  if (next === "live" && status === "reconnecting") refreshAll();
  status = next;
  for (const w of watchers) w(next);
}

function deliver(data: string): void {
  let record: LogRecord;
  try {
    record = JSON.parse(data) as LogRecord;
  } catch {
    return;
  }
  for (const l of listeners) l(record);
}

function connect(): void {
  const token = storedToken();
  if (token !== null) {
    void follow(token);
    return;
  }
  const es = new EventSource("api/stream");
  source = es;
  es.onopen = () => setStatus("live");
  es.onerror = () => {
    setStatus("reconnecting");
    // Closed for good (the server refused it, e.g. 401 off loopback): try again later, with the token if
    // one has been given since.
    if (es.readyState === EventSource.CLOSED) {
      source = null;
      setTimeout(connect, 3_000);
    }
  };
  es.addEventListener("record", (message: MessageEvent<string>) => deliver(message.data));
}

/**
 * The same stream through fetch, which can send the token (EventSource cannot set headers): what a
 * dashboard off loopback needs. Reconnects after a pause when the stream ends or fails.
 */
async function follow(token: string): Promise<void> {
  source = "fetch";
  try {
    const response = await fetch("api/stream", { headers: { authorization: `Bearer ${token}` } });
    if (!response.ok || response.body === null) throw new Error(`stream answered ${response.status}`);
    setStatus("live");
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const lines = block.split("\n");
        if (!lines.includes("event: record")) continue;
        const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6));
        if (data.length > 0) deliver(data.join("\n"));
      }
    }
  } catch {
    // reported through the status; tried again below
  }
  setStatus("reconnecting");
  source = null;
  setTimeout(connect, 3_000);
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
