/** What an agent's own record adds since the last hook call: Claude Code's transcript, Codex's rollout. */
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { EventInput } from "../../base/core/reins-event.js";
import type { Policy } from "../../base/core/policy.js";
import { hashOf } from "../../base/vocabulary/hash.js";
import { rolloutExit, rolloutModel, rolloutUsage } from "./rollout.js";
import { copilotStoreUsage } from "./copilot-usage.js";
import { usageEvent, type UsageRecord } from "../../base/vocabulary/usage.js";
import { qwenLineUsage } from "./qwen-transcript.js";
import { finishedCalls, type FinishedCall } from "./finished-calls.js";

/** Reads at most this much new transcript per hook call; the rest waits for the next call. */
const MAX_READ = 8 * 1024 * 1024;

/** What a Codex hook learns from the session's rollout since the last call: usage, and commands' exit codes. */
export interface RolloutNews {
  usage: EventInput[];
  /** The exit code of a command the rollout says ended (now or in the last calls), by its call id. */
  exitCode(callId: string): number | undefined;
}

/**
 * Where a hook reads what the agent's own record holds and its hook input does not: token usage from Claude
 * Code's transcript, usage and exit codes from Codex's rollout. On disk in a live hook; the log itself in a
 * replay.
 */
export interface UsageReader {
  /**
   * New usage events of `session` since the last call (a Claude Code transcript). With `calls`, the tool
   * calls the same lines say finished are kept for `finishedCalls` (only at a turn's start: it parses the
   * tool results' lines, which a tool call's hook has no need of).
   */
  read(
    session: string,
    path: string | undefined,
    policy: Policy,
    options?: { calls?: boolean },
  ): EventInput[];
  /** The finished tool calls a `read(..., { calls: true })` of `session` found. @default none */
  finishedCalls?(session: string): readonly FinishedCall[];
  /** What a Codex rollout says since the last call. */
  readRollout(session: string, path: string | undefined, policy: Policy): RolloutNews;
  /**
   * New usage events of a Copilot CLI session since the last call, from its session store (`path`; when
   * undefined, the one the session's last reading named). @default none
   */
  readCopilot?(session: string, path: string | undefined, policy: Policy): EventInput[];
}

interface Cursor {
  path: string;
  offset: number;
  /** Exit codes of the latest commands (Codex), kept because the call that ended may be asked for later. */
  exits?: Record<string, number>;
  /** The model the rollout last named (Codex), to price its usage. */
  model?: string;
}

/** The two ends of a line too long to read whole, each at most LONG_EDGE bytes. */
interface LongLine {
  head: string;
  tail: string;
}

/** How much of each end of an over-long line is kept: ids come first in a line, usage last. */
const LONG_EDGE = 64 * 1024;

/** The offset of the first newline at or after `from`, or -1 when the file has none yet. */
function findNewline(fd: number, from: number, size: number): number {
  const window = Buffer.alloc(1024 * 1024);
  for (let at = from; at < size; at += window.length) {
    const n = readSync(fd, window, 0, Math.min(window.length, size - at), at);
    const i = window.subarray(0, n).indexOf(0x0a);
    if (i >= 0) return at + i;
  }
  return -1;
}

/** The usage of an assistant line too long to parse, from its ends: ids in the head, usage in the tail. */
function longLineUsage(line: LongLine): UsageRecord | null {
  if (!/"type":"assistant"/.test(line.head)) return null;
  const usage = [...line.tail.matchAll(/"usage":(\{(?:[^{}]|\{[^{}]*\})*\})/g)].at(-1)?.[1];
  if (usage === undefined) return null;
  const id = /"message":\{"id":"([^"]+)"/.exec(line.head)?.[1];
  const model = /"model":"([^"]+)"/.exec(line.head)?.[1];
  const requestId = [...line.tail.matchAll(/"requestId":"([^"]+)"/g)].at(-1)?.[1];
  try {
    return entryUsage(
      {
        type: "assistant",
        ...(requestId !== undefined ? { requestId } : {}),
        message: {
          ...(id !== undefined ? { id } : {}),
          ...(model !== undefined ? { model } : {}),
          usage: JSON.parse(usage) as Usage,
        },
      },
      () => hashOf(line.head.slice(0, 4_096)),
    );
  } catch {
    return null;
  }
}

/** How long a hook waits for a model reply's line the agent still owes, and how often it looks. */
const OWED_LINE_WAIT_MS = 2_000;
const OWED_LINE_POLL_MS = 10;

/** How many commands' exit codes a cursor keeps. */
const KEPT_EXITS = 64;

/**
 * Reads an agent's JSONL record incrementally: the byte offset reached is kept per session under
 * `.reins/transcripts/`. Each API message becomes one `usage.recorded` whose id is derived from the message
 * and request ids (the response id for Codex), so a message seen twice (a lost cursor, two hooks at once)
 * counts once.
 *
 * Where a reader got to is saved only by `commit()`, which a hook calls once the call's events are in the
 * store or the spool: a call that dies before (a daemon killed, a full disk) leaves those lines to the next
 * call, instead of losing their usage for good. Use one reader per hook call (`forCall()`).
 */
export class TranscriptReader implements UsageReader {
  readonly #dir: string;
  /** Where this reader got to, by session, since it was made or last committed. */
  readonly #moved = new Map<string, Cursor>();
  /** The finished calls a reading with `calls` found, by session. */
  readonly #finished = new Map<string, FinishedCall[]>();

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** A reader for one hook call, on the same folder of cursors. */
  forCall(): TranscriptReader {
    return new TranscriptReader(this.#dir);
  }

  /**
   * Saves where this reader got to. Best effort: a cursor that cannot be saved (a full disk) costs only a
   * re-read of the same lines next time, which their ids count once, never the hook call.
   */
  commit(): void {
    for (const [session, cursor] of this.#moved) {
      try {
        this.#save(session, cursor);
      } catch {
        // Read again next time.
      }
    }
    this.#moved.clear();
  }

  #cursorFile(session: string): string {
    return join(this.#dir, `${hashOf(session)}.json`);
  }

  #load(session: string, path: string): Cursor {
    const moved = this.#moved.get(session);
    if (moved?.path === path) return moved;
    try {
      const cursor = JSON.parse(readFileSync(this.#cursorFile(session), "utf8")) as Cursor;
      return cursor.path === path && Number.isSafeInteger(cursor.offset) ? cursor : { path, offset: 0 };
    } catch {
      return { path, offset: 0 };
    }
  }

  /** The path the session's cursor was last saved for, if any. */
  #lastPath(session: string): string | undefined {
    const moved = this.#moved.get(session);
    if (moved !== undefined) return moved.path;
    try {
      const cursor = JSON.parse(readFileSync(this.#cursorFile(session), "utf8")) as Partial<Cursor>;
      return typeof cursor.path === "string" && cursor.path !== "" ? cursor.path : undefined;
    } catch {
      return undefined;
    }
  }

  #save(session: string, cursor: Cursor): void {
    mkdirSync(this.#dir, { recursive: true });
    const file = this.#cursorFile(session);
    const temporary = `${file}.${process.pid}`;
    try {
      writeFileSync(temporary, JSON.stringify(cursor));
      renameSync(temporary, file);
    } finally {
      rmSync(temporary, { force: true }); // a torn write on a full disk
    }
  }

  /**
   * The whole lines written to `path` since the cursor, advancing it; none when there are none or no file.
   * A line longer than one read (a 9 MB Write's tool call) comes as its two ends, where a transcript line
   * keeps its ids and its usage, and is stepped over: it must never stop the reading of the lines after it.
   */
  #next(cursor: Cursor): { text: string; long: LongLine | null } {
    const none = { text: "", long: null };
    try {
      // Only a regular file: opening a FIFO blocks until a writer comes, which would freeze the hook (and a
      // daemon answering every session) on one hostile transcript_path.
      if (!statSync(cursor.path).isFile()) return none;
      const fd = openSync(cursor.path, "r");
      try {
        const stat = fstatSync(fd);
        if (!stat.isFile()) return none;
        const size = stat.size;
        if (size < cursor.offset) cursor.offset = 0; // the file was replaced: start over (ids keep counts exact)
        const length = Math.min(size - cursor.offset, MAX_READ);
        if (length <= 0) return none;
        const buffer = Buffer.alloc(length);
        readSync(fd, buffer, 0, length, cursor.offset);
        // Only whole lines: the agent may be writing the last one right now.
        const end = buffer.lastIndexOf(0x0a);
        if (end >= 0) {
          cursor.offset += end + 1;
          return { text: buffer.subarray(0, end + 1).toString("utf8"), long: null };
        }
        if (length < MAX_READ) return none;
        const stop = findNewline(fd, cursor.offset + length, size);
        if (stop < 0) return none; // still being written
        const tailStart = Math.max(cursor.offset, stop - LONG_EDGE);
        const tail = Buffer.alloc(stop - tailStart);
        readSync(fd, tail, 0, tail.length, tailStart);
        const long = { head: buffer.subarray(0, LONG_EDGE).toString("utf8"), tail: tail.toString("utf8") };
        cursor.offset = stop + 1;
        return { text: "", long };
      } finally {
        closeSync(fd);
      }
    } catch {
      return none;
    }
  }

  /**
   * Waits, at most OWED_LINE_WAIT_MS, until `path` holds a whole model reply line (`"type":"assistant"`)
   * after the session's cursor: the line of a reply the agent has made but may still be writing (Qwen Code
   * queues its transcript writes and fires its Stop hook at once). Reads nothing for good; true once it is
   * there, false when the bound passed or there is no transcript.
   */
  async awaitReplyLine(session: string, path: string): Promise<boolean> {
    if (path === "") return false;
    for (let waited = 0; ; waited += OWED_LINE_POLL_MS) {
      const peek = { ...this.#load(session, path) };
      const { text, long } = this.#next(peek);
      if (long !== null || /"type":"assistant"/.test(text)) return true;
      if (waited >= OWED_LINE_WAIT_MS) return false;
      await sleep(OWED_LINE_POLL_MS);
    }
  }

  /** New usage events of `session` since the last call; a missing or unreadable transcript gives none. */
  read(
    session: string,
    path: string | undefined,
    policy: Policy,
    options?: { calls?: boolean },
  ): EventInput[] {
    if (options?.calls === true) this.#finished.delete(session);
    if (path === undefined || path === "") return [];
    const cursor = this.#load(session, path);
    const { text, long } = this.#next(cursor);
    if (text === "" && long === null) return [];
    if (options?.calls === true) {
      const calls = finishedCalls(text);
      if (calls.length > 0) this.#finished.set(session, calls);
    }
    const events = transcriptUsage(text).map((u) => usageEvent(u, policy));
    const usage = long === null ? null : longLineUsage(long);
    if (usage !== null) events.push(usageEvent(usage, policy));
    this.#moved.set(session, cursor);
    return events;
  }

  /** Takes what the last `read(..., { calls: true })` of `session` found: a second call gives none. */
  finishedCalls(session: string): readonly FinishedCall[] {
    const calls = this.#finished.get(session) ?? [];
    this.#finished.delete(session);
    return calls;
  }

  readCopilot(session: string, path: string | undefined, policy: Policy): EventInput[] {
    // No path in this hook's input: the store the session's last reading named, if any.
    const known = path !== undefined && path !== "" ? path : this.#lastPath(session);
    if (known === undefined) return [];
    const cursor = this.#load(session, known);
    const { records, last } = copilotStoreUsage(cursor.path, session, cursor.offset);
    if (records.length === 0) return [];
    this.#moved.set(session, { ...cursor, offset: last });
    return records.map((u) => usageEvent(u, policy));
  }

  readRollout(session: string, path: string | undefined, policy: Policy): RolloutNews {
    const exits = new Map<string, number>();
    const news = { usage: [] as EventInput[], exitCode: (id: string) => exits.get(id) };
    if (path === undefined || path === "") return news;
    const cursor = this.#load(session, path);
    for (const [id, code] of Object.entries(cursor.exits ?? {})) exits.set(id, code);
    // A long line of a rollout is a command's output or a prompt: nothing reins reads is in it.
    const { text, long } = this.#next(cursor);
    if (text === "" && long === null) return news;
    let model = cursor.model;
    for (const line of text.split("\n")) {
      // Only the lines that can matter are parsed: a rollout also holds every prompt and output in full.
      if (!/"type":"(?:token_usage_record|turn_context|event_msg)"/.test(line.slice(0, 200))) continue;
      let row: Record<string, unknown>;
      try {
        row = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      model = rolloutModel(row) ?? model;
      const usage = rolloutUsage(row, model, () => hashOf(line));
      if (usage !== null) news.usage.push(usageEvent(usage, policy));
      const exit = rolloutExit(row);
      if (exit !== null) exits.set(exit[0], exit[1]);
    }
    cursor.exits = Object.fromEntries([...exits].slice(-KEPT_EXITS));
    if (model !== undefined) cursor.model = model;
    this.#moved.set(session, cursor);
    return news;
  }
}

interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

const count = (n: unknown) => (typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0);

/** One Claude Code transcript entry (a parsed line), as far as usage goes. */
export interface TranscriptEntry {
  type?: unknown;
  /** Qwen Code's: the model call's usage, Gemini-style. */
  usageMetadata?: unknown;
  requestId?: unknown;
  message?: { id?: unknown; model?: unknown; usage?: Usage };
}

/**
 * The usage an assistant entry reports, keyed by its message and request ids (`fallbackKey` for a message
 * without an id: a function, for a key that costs something to compute, only when it is needed); null for
 * any other entry.
 */
export function entryUsage(entry: TranscriptEntry, fallbackKey: string | (() => string)): UsageRecord | null {
  const message = entry.message;
  if (entry.type !== "assistant" || message?.usage === undefined || message.usage === null) return null;
  const id =
    typeof message.id === "string"
      ? message.id
      : typeof fallbackKey === "string"
        ? fallbackKey
        : fallbackKey();
  const u = message.usage;
  return {
    id: `${id}/${typeof entry.requestId === "string" ? entry.requestId : ""}`,
    input: count(u.input_tokens),
    output: count(u.output_tokens),
    cacheRead: count(u.cache_read_input_tokens),
    cacheWrite: count(u.cache_creation_input_tokens),
    ...(typeof message.model === "string" ? { model: message.model } : {}),
  };
}

/**
 * Usage records from Claude Code transcript lines: one per assistant API message (by message and request id);
 * and from Qwen Code's, one per line with a `usageMetadata` (by the line's uuid).
 */
function transcriptUsage(text: string): UsageRecord[] {
  const byId = new Map<string, UsageRecord>();
  for (const line of text.split("\n")) {
    if (!line.includes('"usage')) continue;
    let entry: TranscriptEntry;
    try {
      entry = JSON.parse(line) as TranscriptEntry;
    } catch {
      continue;
    }
    const usage =
      "usageMetadata" in entry
        ? qwenLineUsage(entry as Record<string, unknown>, () => hashOf(line))
        : entryUsage(entry, () => hashOf(line));
    // A message split over several lines repeats its usage; the last line holds the final output count.
    if (usage !== null) byId.set(usage.id, usage);
  }
  return [...byId.values()];
}
