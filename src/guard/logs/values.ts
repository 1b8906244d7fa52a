/**
 * Reading fields out of agents' logs, whose shapes are never trusted: each helper takes any value and
 * answers a safe default when it is not what the log format says.
 */

/** A JSON object read from a log. */
export type Row = Record<string, unknown>;

/** The value as an object, or `{}` when it is not one (null, an array, a scalar). */
export const rec = (v: unknown): Row =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Row) : {};

/** The value when it is a string. */
export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** The value when it is a positive finite number (a token count, a cost), else 0. */
export const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);
