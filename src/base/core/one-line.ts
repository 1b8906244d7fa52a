/** One-line text: the pattern and the schema that every scope, and every id that becomes one, must match. */
import * as z from "zod";

/**
 * One line of text without control characters: what a scope, and every id that becomes one, must be. Kept
 * apart from event-schema.ts so the hooks can share it without building the whole event schema.
 */
// eslint-disable-next-line no-control-regex -- control characters are exactly what it refuses
export const ONE_LINE = /^[^\u0000-\u001f\u007f]+$/;

/** The schema of non-empty one-line text of at most `max` characters, with the message a person reads. */
export function oneLineText(max: number): z.ZodString {
  return z.string().min(1).max(max).regex(ONE_LINE, "must not hold line breaks or other control characters");
}
