/**
 * Copy-on-write for the pure engine, safe by construction. `decide` changes a shallow copy of the state whose
 * unchanged parts stay shared with its input, and copies a part only when the event writes it; `advance`
 * runs the same reducer on a state its caller owns, where nothing is copied. The reducer is handed the
 * state as `Own<State>` (own.ts): its top may be written, every part below is `Shared`, read-only all the
 * way down, so writing one without opening it first (`writable`) is a compile error, and so is handing it
 * to `capSet` or `pushCapped`, which take opened parts only. All of it is types: at run time `writable` is
 * the same lookup as before, and no proxy or freeze is involved.
 *
 * The rules that keep it so: this file is the only one that turns a shared part into a writable one (its
 * casts are the only ones); a helper that writes a part takes it as `Own<...>` or `... & Mine`, one that
 * only reads takes `Shared<...>` (a plain mutable parameter type would let a shared part in, since
 * TypeScript lets a read-only object pass for a mutable one; cow.test.ts checks the reducer's files for
 * it); `inPlace` is its caller's word that it owns the whole state. The guards are given the state as
 * `State` and only read it.
 */
import { copyMap } from "./capped.js";
import { ReinsError } from "./errors.js";
import type { Mine, Opened, Own } from "./own.js";

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
 * A draft of `state`: a shallow copy (`next`, and `own`: the same object, its top open for writing), and the
 * draft that says which of its parts are its own (the copy's top, so far). `state` itself is never written
 * through them.
 */
export function draftOf<T extends object>(state: T): { next: T; own: Own<T>; draft: Draft } {
  const next = { ...state };
  return { next, own: next as unknown as Own<T>, draft: { copies: new Set<object>([next]) } };
}

/**
 * `value`, whose top this draft may write: any part under `inPlace` (its caller owns the state), else only a
 * copy the draft made (`draftOf`'s, `writable`'s). Anything else throws: a shared part is never written.
 */
export function mine<T extends object>(draft: Draft, value: T): Own<T> {
  if (draft.copies !== null && !draft.copies.has(value))
    throw new ReinsError("usage", "a part of a state shared with its draft's input was about to be written");
  return value as unknown as Own<T>;
}

/**
 * `parent[key]`, opened for writing: under a copy-on-write draft it is replaced by a shallow copy (a list
 * sliced, a map copied with its drop order, see capped.ts) the first time, and that copy returned from then
 * on. `parent` must itself be open (the type says so). A missing or primitive value is returned as it is.
 */
export function writable<T extends Mine, K extends keyof T>(draft: Draft, parent: T, key: K): Opened<T[K]> {
  const copies = draft.copies;
  // In place (`advance`, a replay): nothing to copy, the common case on the hot path.
  if (copies === null) return parent[key] as Opened<T[K]>;
  const value = parent[key];
  if (typeof value !== "object" || value === null || copies.has(value)) return value as Opened<T[K]>;
  const copy = Array.isArray(value) ? value.slice() : copyMap(value as Record<string, unknown>);
  copies.add(copy);
  parent[key] = copy as T[K];
  return copy as Opened<T[K]>;
}
