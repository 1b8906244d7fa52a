/**
 * Bounded maps for the state: plain objects (so they round-trip through JSON) that keep at most `cap`
 * keys, dropping the oldest one. Keys are truncated so a hostile string cannot grow state.
 */

/** Longest key or stored text kept in state, in bytes of JSON (UTF-8, escapes included); longer ones are cut. */
export const MAX_TEXT = 256;

/** A character that takes more than one byte in JSON text as UTF-8. */
const COSTLY = /[^\x20\x21\x23-\x5b\x5d-\x7e]/;

/** The most bytes one UTF-16 unit can take in JSON text as UTF-8. */
function jsonBytes(c: number): number {
  if (c < 0x20) return 6; // a control character: `\u0001` (`\n` takes 2; count the worst)
  if (c === 0x22 || c === 0x5c) return 2; // `\"` and `\\`
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  return c >= 0xd800 && c < 0xe000 ? 6 : 3; // a lone surrogate is escaped; a pair takes 4 in all
}

/** Names every plain object has (inherited), which must never be used as keys of the state's maps. */
const INHERITED = new Set([...Object.getOwnPropertyNames(Object.prototype), "__proto__", "prototype"]);

/** What `clip` appends to an inherited name to make it an ordinary key (a zero-width space). */
const MARK = "\u200b";

/** The value of an own property of a map from outside (a policy's per-tool settings), never an inherited one. */
export function own<V>(map: Record<string, V>, key: string): V | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}

/**
 * Makes `text` safe to keep in the state and to use as a key of its maps: an inherited property name gets a
 * zero-width mark, and text is cut to MAX_TEXT bytes of JSON, keeping it distinct from other cut texts by
 * its length. Bytes, not characters: control characters, quotes and non-ASCII text take more, and the
 * state bound is in bytes.
 */
export function clip(text: string): string {
  // A key named like an inherited property would read the prototype's (or, `__proto__`, replace it).
  if (INHERITED.has(text)) return `${text}${MARK}`;
  // Fast paths for the common case, printable ASCII that JSON does not escape: one byte per character.
  if (text.length <= MAX_TEXT) {
    if (text.length <= MAX_TEXT / 6 || !COSTLY.test(text)) return text;
  } else {
    const head = text.slice(0, MAX_TEXT);
    if (!COSTLY.test(head)) return `${head.slice(0, MAX_TEXT - 16)}…[${text.length}]`;
  }
  let bytes = 0;
  let keep = text.length;
  for (let i = 0; i < text.length; i++) {
    bytes += jsonBytes(text.charCodeAt(i));
    if (bytes > MAX_TEXT - 16 && keep === text.length) keep = i;
    if (bytes > MAX_TEXT) return `${text.slice(0, keep)}…[${text.length}]`;
  }
  return text;
}

/** The most one event may add to a counter, so sums stay finite (Infinity would not survive JSON). */
export const MAX_AMOUNT = 1e15;

/** A counted amount: a finite non-negative number at most MAX_AMOUNT, 0 for anything else. */
export function amount(v: number | undefined): number {
  return v !== undefined && Number.isFinite(v) && v > 0 ? Math.min(v, MAX_AMOUNT) : 0;
}

/**
 * How many keys each map written by `capSet` holds, so a new key does not count them all again (a session
 * whose files or commands keep changing adds one on most events). Only `capSet` adds keys to a map it has
 * seen; a map it has not seen (new, cloned, parsed) is counted once.
 */
const sizes = new WeakMap<object, number>();

/**
 * Writes `key`; a new key past `cap` evicts the oldest keys. Updating a key keeps its place, so the common
 * case (a key already there) costs one property write.
 */
export function capSet<V>(map: Record<string, V>, key: string, value: V, cap: number): void {
  if (key in map) {
    map[key] = value;
    return;
  }
  map[key] = value;
  const size = (sizes.get(map) ?? Object.keys(map).length - 1) + 1;
  let excess = size - cap;
  sizes.set(map, Math.min(size, cap));
  if (excess <= 0) return;
  for (const k in map) {
    delete map[k];
    if (--excess <= 0) break;
  }
}

/** Appends to a list, dropping the oldest items past `cap`. */
export function pushCapped<T>(list: T[], item: T, cap: number): void {
  list.push(item);
  if (list.length > cap) list.splice(0, list.length - cap);
}
