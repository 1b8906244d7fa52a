/**
 * How a SQLite store's rows read: a scope's head, worked out from its snapshot and its log (no row is
 * rewritten per append to hold it), and a log record's decision in the form the store keeps it.
 *
 * A log record's decision as a SQLite store keeps it: without what the row's columns already hold (the
 * seq) and what most decisions share (a guard's pass, its name alone; no instructions, no alerts, no
 * person asked), so a record (about 450 bytes) fits half a 1 KiB page rather than spilling into a second.
 * The event is kept as it came.
 *
 * A decision of 15 passes is 734 bytes of JSON as the API serves it and about 250 here
 * (docs/performance.md, "No head row, and a decision kept without its passes"). Records written before (the
 * whole decision, its seq included) are read as they are.
 */
import type { Decision, GuardVerdict } from "../core/decision.js";
import { EMPTY } from "../core/empty.js";
import { recordedPass } from "../core/recorded.js";

/**
 * The seq after the last record of the scope of the snapshot row `s` (the scope's head): the last record's
 * plus one, or the snapshot's when no record follows it (`reins gc` removed the ones before it). Every
 * scope has a snapshot row (its first append writes one), and records after it are never removed.
 */
const HEAD_SEQ = "max(s.seq, coalesce((SELECT max(e.seq) + 1 FROM events e WHERE e.scope = s.scope), 0))";

/** The time of the last event of the scope of the snapshot row `s`: its last record's, else the snapshot's. */
const LAST_AT =
  "coalesce((SELECT e.at FROM events e WHERE e.scope = s.scope ORDER BY e.seq DESC LIMIT 1), json_extract(s.state, '$.lastAt'), 0)";

/** A scope's head (`seq`) with its last snapshot (`state`, `policy_id`, `policy`); the scope bound once. */
export const HEAD_SQL = `SELECT ${HEAD_SEQ} AS seq, s.state, s.policy_id, s.policy FROM snapshots s WHERE s.scope = ?`;

/** A scope's head alone. */
export const HEAD_SEQ_SQL = `SELECT ${HEAD_SEQ} AS seq FROM snapshots s WHERE s.scope = ?`;

/** The scopes, the one written last first. */
export const SCOPES_SQL = `SELECT s.scope FROM snapshots s ORDER BY ${LAST_AT} DESC, s.scope`;

/** Every scope's head, last time and snapshot's seq, for `reins gc`. */
export const HEADS_SQL = `SELECT s.scope, ${HEAD_SEQ} AS seq, ${LAST_AT} AS last_at, s.seq AS snapshot FROM snapshots s`;

/** A row if the scope bound first has had no event since the time bound second. */
export const IDLE_SQL = `SELECT 1 AS one FROM snapshots s WHERE s.scope = ? AND ${LAST_AT} < ?`;

/** A decision as stored: a pass is its guard's name; the fields a decision most often has empty, left out. */
interface StoredDecision {
  verdict: Decision["verdict"];
  needsHuman?: true;
  results: (string | GuardVerdict)[];
  instructions?: readonly string[];
  alerts?: Decision["alerts"];
}

/** Whether `result` is a bare pass: its guard's name says all of it. */
function isPass(result: GuardVerdict): boolean {
  if (result.verdict !== "allow") return false;
  for (const key in result) if (key !== "guard" && key !== "verdict") return false;
  return true;
}

/** The JSON a SQLite store keeps of `decision` (read back by `decisionFromJson`). */
export function decisionJson(decision: Decision): string {
  const stored: StoredDecision = {
    verdict: decision.verdict,
    results: decision.results.map((r) => (isPass(r) ? r.guard : r)),
  };
  if (decision.needsHuman) stored.needsHuman = true;
  if (decision.instructions.length > 0) stored.instructions = decision.instructions;
  if (decision.alerts.length > 0) stored.alerts = decision.alerts;
  return JSON.stringify(stored);
}

/**
 * The decision of the record at `seq` from its stored JSON, either form: this module's, or the whole
 * decision written before it (which carries its seq).
 */
export function decisionFromJson(seq: number, json: string): Decision {
  const stored = JSON.parse(json) as StoredDecision | Decision;
  if ("seq" in stored) return stored;
  return {
    seq,
    verdict: stored.verdict,
    needsHuman: stored.needsHuman === true,
    results: stored.results.map((r) => (typeof r === "string" ? recordedPass(r) : r)),
    instructions: stored.instructions ?? EMPTY,
    alerts: stored.alerts ?? EMPTY,
  };
}
