/** Stored runs of `reins run`: the checks and JSON encoding every store applies to ids, status, sizes. */
import * as z from "zod";
import { ReinsError } from "./errors.js";
import { ONE_LINE } from "./one-line.js";
import type { StoredRun } from "./store.js";

/** What a run id may be: it names a Redis key and goes in a URL path unchanged. */
export const RUN_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
/** Longest status, in characters. */
export const MAX_RUN_STATUS = 64;
/** Longest summary, in characters of its JSON: it is read for every run a list shows. */
export const MAX_RUN_SUMMARY = 64 * 1024;
/** Longest checkpoint, in characters of its JSON. */
export const MAX_RUN_CHECKPOINT = 8 * 1024 * 1024;

const RUN_ID_RULE = "1 to 128 characters of A-Z a-z 0-9 _ . : -";

/** The schema of a run id, for the API's paths. */
export const runIdSchema = z.string().regex(RUN_ID, `a run id is ${RUN_ID_RULE}`);

/** A StoredRun with its summary and checkpoint as JSON text: what every store writes. */
export interface EncodedRun {
  id: string;
  status: string;
  updatedAt: number;
  summary: string;
  checkpoint: string;
}

/** Text from outside, shown in a one-line message: printable ASCII only, and short. */
function shown(text: string): string {
  const printable = text.slice(0, 40).replace(/[^\x20-\x7e]/g, "?");
  return JSON.stringify(text.length > 40 ? `${printable}...` : printable);
}

/** Returns `id` when it is a valid run id; otherwise throws a one-line ReinsError (`usage`). */
export function checkRunId(id: unknown): string {
  if (typeof id !== "string" || !RUN_ID.test(id)) {
    const what = typeof id === "string" ? shown(id) : typeof id;
    throw new ReinsError("usage", `bad run id ${what}: a run id is ${RUN_ID_RULE}`);
  }
  return id;
}

/** JSON text of `value`, or a usage error naming `field` when it has none (undefined, a cycle, a BigInt). */
function jsonOf(value: unknown, field: string, max: number): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    const why = error instanceof Error ? error.message.split("\n")[0] : "not serializable";
    throw new ReinsError("usage", `run ${field} is not plain JSON (${why})`);
  }
  if (text === undefined) throw new ReinsError("usage", `run ${field} is not plain JSON (nothing to save)`);
  if (text.length > max)
    throw new ReinsError(
      "usage",
      `run ${field} is ${text.length} characters of JSON, more than the ${max} a store keeps`,
    );
  return text;
}

/**
 * Checks a run to save and turns its summary and checkpoint into JSON text, so no store keeps a
 * reference its caller holds. Throws a one-line ReinsError (`usage`) naming the field at fault.
 */
export function encodeRun(run: StoredRun): EncodedRun {
  const id = checkRunId(run.id);
  const { status, updatedAt, summary } = run;
  if (typeof status !== "string" || status.length > MAX_RUN_STATUS || !ONE_LINE.test(status))
    throw new ReinsError("usage", `run ${id}: status must be one line of 1 to ${MAX_RUN_STATUS} characters`);
  if (!Number.isSafeInteger(updatedAt) || updatedAt < 0)
    throw new ReinsError(
      "usage",
      `run ${id}: updatedAt must be a time in epoch ms, not ${String(updatedAt)}`,
    );
  if (typeof summary !== "object" || summary === null || Array.isArray(summary))
    throw new ReinsError("usage", `run ${id}: summary must be a JSON object`);
  return {
    id,
    status,
    updatedAt,
    summary: jsonOf(summary, "summary", MAX_RUN_SUMMARY),
    checkpoint: jsonOf(run.checkpoint, "checkpoint", MAX_RUN_CHECKPOINT),
  };
}

/** A run's list entry from what a store holds. JSON.parse keeps a `__proto__` key as data. */
export function decodeListedRun(run: Omit<EncodedRun, "checkpoint">): Omit<StoredRun, "checkpoint"> {
  return {
    id: run.id,
    status: run.status,
    updatedAt: run.updatedAt,
    summary: JSON.parse(run.summary) as Record<string, unknown>,
  };
}

/** A run from what a store holds. */
export function decodeRun(run: EncodedRun): StoredRun {
  return { ...decodeListedRun(run), checkpoint: JSON.parse(run.checkpoint) as unknown };
}

/** Most recently updated first; ties by id, so every store lists the same order. */
export function byRecency(
  a: { id: string; updatedAt: number },
  b: { id: string; updatedAt: number },
): number {
  return b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
