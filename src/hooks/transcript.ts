import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import type { EventInput } from "../core/events.js";
import type { Policy } from "../core/policy.js";
import { costOf, hashOf } from "./common.js";

/** Reads at most this much new transcript per hook call; the rest waits for the next call. */
const MAX_READ = 8 * 1024 * 1024;

interface Cursor {
  path: string;
  offset: number;
}

/**
 * Token usage read incrementally from an agent's JSONL transcript. The byte offset reached is kept per
 * session under `.reins/transcripts/`; each API message becomes one `usage.recorded` whose id is derived
 * from the message and request ids, so a message seen twice (a lost cursor, two hooks at once) counts once.
 */
export class TranscriptReader {
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = dir;
  }

  #cursorFile(session: string): string {
    return join(this.#dir, `${hashOf(session)}.json`);
  }

  #load(session: string, path: string): Cursor {
    try {
      const cursor = JSON.parse(readFileSync(this.#cursorFile(session), "utf8")) as Cursor;
      return cursor.path === path && Number.isSafeInteger(cursor.offset) ? cursor : { path, offset: 0 };
    } catch {
      return { path, offset: 0 };
    }
  }

  #save(session: string, cursor: Cursor): void {
    mkdirSync(this.#dir, { recursive: true });
    const file = this.#cursorFile(session);
    writeFileSync(`${file}.${process.pid}`, JSON.stringify(cursor));
    renameSync(`${file}.${process.pid}`, file);
  }

  /** New usage events of `session` since the last call; a missing or unreadable transcript gives none. */
  read(session: string, path: string | undefined, policy: Policy): EventInput[] {
    if (path === undefined || path === "") return [];
    const cursor = this.#load(session, path);
    let text: string;
    try {
      const fd = openSync(path, "r");
      try {
        const size = fstatSync(fd).size;
        if (size < cursor.offset) cursor.offset = 0; // the file was replaced: start over (ids keep counts exact)
        const length = Math.min(size - cursor.offset, MAX_READ);
        if (length <= 0) return [];
        const buffer = Buffer.alloc(length);
        readSync(fd, buffer, 0, length, cursor.offset);
        // Only whole lines: the agent may be writing the last one right now.
        const end = buffer.lastIndexOf(0x0a);
        if (end < 0) return [];
        text = buffer.subarray(0, end + 1).toString("utf8");
        cursor.offset += end + 1;
      } finally {
        closeSync(fd);
      }
    } catch {
      return [];
    }
    const events = parseUsage(text, policy);
    this.#save(session, cursor);
    return events;
  }
}

interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

const count = (n: unknown) => (typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0);

/** Usage events from transcript lines: one per assistant API message (by message id and request id). */
export function parseUsage(text: string, policy: Policy): EventInput[] {
  const byId = new Map<string, EventInput>();
  for (const line of text.split("\n")) {
    if (!line.includes('"usage"')) continue;
    let entry: {
      type?: string;
      requestId?: string;
      message?: { id?: string; model?: string; usage?: Usage };
    };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    const message = entry.message;
    if (entry.type !== "assistant" || message?.usage === undefined) continue;
    const key = `${message.id ?? hashOf(line)}/${entry.requestId ?? ""}`;
    const u = message.usage;
    const usage = {
      input: count(u.input_tokens),
      output: count(u.output_tokens),
      cacheRead: count(u.cache_read_input_tokens),
      cacheWrite: count(u.cache_creation_input_tokens),
    };
    // A message split over several lines repeats its usage; the last line holds the final output count.
    byId.set(key, {
      kind: "usage.recorded",
      id: `usage:${hashOf(key)}`,
      inputTokens: usage.input,
      outputTokens: usage.output,
      cacheReadTokens: usage.cacheRead,
      cacheWriteTokens: usage.cacheWrite,
      costUsd: costOf(policy, message.model, usage),
      ...(message.model !== undefined ? { model: message.model } : {}),
    });
  }
  return [...byId.values()];
}
