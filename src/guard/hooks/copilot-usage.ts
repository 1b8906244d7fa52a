/** The token usage of Copilot CLI's model calls, as its session store records each one. */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type Database from "better-sqlite3";
import type { UsageRecord } from "../../base/vocabulary/usage.js";

const requireCjs = createRequire(import.meta.url);
const count = (n: unknown) => (typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0);

/** At most this many model calls are read per hook call; the rest wait for the next call. */
const MAX_ROWS = 10_000;

/**
 * The session store of the Copilot CLI whose session's events file is `transcriptPath`
 * (`$COPILOT_HOME/session-state/<id>/events.jsonl`): `$COPILOT_HOME/session-store.db`.
 */
export function copilotStorePath(transcriptPath: string): string {
  return join(dirname(dirname(dirname(transcriptPath))), "session-store.db");
}

/** One row of Copilot's `assistant_usage_events`, as far as usage goes. */
interface Row {
  id: number;
  model: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  created_at: string | null;
}

/**
 * The model calls of `session` that Copilot CLI's session store (`session-store.db`, SQLite) recorded after
 * row `after` of its `assistant_usage_events` table, and the last row read. Copilot writes a row as each call
 * ends, before the hooks that follow it run; its events file (`events.jsonl`) is written in batches, and the
 * last calls of a session only once it has exited, so it is not read. `input_tokens` counts the cached tokens
 * too, as the OpenAI API's `prompt_tokens` it comes from. Opened read-only; no store, no table or a busy one
 * gives nothing (read again next time).
 */
export function copilotStoreUsage(
  path: string,
  session: string,
  after: number,
): { records: UsageRecord[]; last: number } {
  let db: Database.Database | undefined;
  try {
    const Driver = requireCjs("better-sqlite3") as typeof Database;
    db = new Driver(path, { readonly: true, fileMustExist: true, timeout: 1_000 });
    const rows = db
      .prepare(
        `SELECT id, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, created_at
         FROM assistant_usage_events WHERE session_id = ? AND id > ? ORDER BY id LIMIT ${MAX_ROWS}`,
      )
      .all(session, after) as Row[];
    const records = rows.map((r): UsageRecord => {
      const cacheRead = count(r.cache_read_tokens);
      return {
        id: `copilot/${session}/${r.id}/${r.created_at ?? ""}`,
        input: Math.max(0, count(r.input_tokens) - cacheRead),
        output: count(r.output_tokens),
        cacheRead,
        cacheWrite: count(r.cache_write_tokens),
        ...(typeof r.model === "string" && r.model !== "" ? { model: r.model } : {}),
      };
    });
    return { records, last: rows.at(-1)?.id ?? after };
  } catch {
    return { records: [], last: after };
  } finally {
    db?.close();
  }
}
