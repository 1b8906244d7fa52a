/** Stable hashes of tool input and output: canonical JSON (keys sorted, depth capped) and its short sha256. */
import { createHash } from "node:crypto";

/** How deep `canonical` follows nested values; deeper ones are one marker (hostile input nests thousands deep). */
const MAX_DEPTH = 128;

/**
 * JSON with object keys sorted, so equal values always give equal text. Values nested deeper than
 * MAX_DEPTH are written as a marker instead: the text stays deterministic, and no input can exhaust the
 * stack (which would fail the hook open).
 */
export function canonical(value: unknown, depth = 0): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (depth >= MAX_DEPTH) return '"\u2026nested too deep"';
  if (Array.isArray(value)) return `[${value.map((v) => canonical(v, depth + 1)).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v, depth + 1)}`).join(",")}}`;
}

/** A short stable hash (SHA-256, 16 hex digits) of any JSON value. */
export function hashOf(value: unknown): string {
  return createHash("sha256")
    .update(typeof value === "string" ? value : canonical(value))
    .digest("hex")
    .slice(0, 16);
}
