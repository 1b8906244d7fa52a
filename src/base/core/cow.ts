/**
 * Copy-on-write for the pure engine: `decide` changes a shallow copy of the state whose unchanged parts
 * stay shared with its input, and copies a part (an object, a list, a capped map) only when the event
 * writes it. `advance` runs the same code on a state its caller owns and copies nothing.
 */
import { copyMap } from "./capped.js";

/**
 * What of a state being changed may be written: all of it (`inPlace`), or only the copies this draft has
 * made (everything else is shared with the state it was drafted from, and must be copied first).
 */
export interface Draft {
  readonly copies: Set<object> | null;
}

/** The draft of a state its caller owns: every part of it may be written in place. */
export const inPlace: Draft = { copies: null };

/**
 * A draft of `state`: a shallow copy that may be written at the top, and the draft that says which of its
 * parts are its own. `state` itself is never written through them.
 */
export function draftOf<T extends object>(state: T): { next: T; draft: Draft } {
  const next = { ...state };
  return { next, draft: { copies: new Set<object>([next]) } };
}

/**
 * `parent[key]`, made safe to write: under a copy-on-write draft it is replaced by a shallow copy (a list
 * sliced, a map copied with its drop order) the first time, and that copy returned from then on. `parent`
 * must itself be writable. A missing or primitive value is returned as it is.
 */
export function writable<T extends object, K extends keyof T>(draft: Draft, parent: T, key: K): T[K] {
  const copies = draft.copies;
  // In place (`advance`, a replay): nothing to copy, the common case on the hot path.
  if (copies === null) return parent[key];
  const value = parent[key];
  if (typeof value !== "object" || value === null || copies.has(value)) return value;
  const copy = (Array.isArray(value) ? value.slice() : copyMap(value as Record<string, unknown>)) as T[K] &
    object;
  copies.add(copy);
  parent[key] = copy;
  return copy;
}

/** Marks an object the draft has just built as its own, so later writes do not copy it again. */
export function owned<T extends object>(draft: Draft, value: T): T {
  draft.copies?.add(value);
  return value;
}
