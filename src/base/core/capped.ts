/**
 * Bounded maps for the state: plain objects (so they round-trip through JSON) that keep at most `cap`
 * keys, dropping the oldest one. Keys are truncated so a hostile string cannot grow state.
 */
import type { Mine } from "./own.js";

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

/** The longest inherited name, and the first characters they start with: most texts are ruled out by these. */
const INHERITED_LONGEST = Math.max(...[...INHERITED].map((n) => n.length));
const INHERITED_FIRST = new Uint8Array(128);
for (const n of INHERITED) INHERITED_FIRST[n.charCodeAt(0)] = 1;
/** The lengths of the inherited names, as bits: `tests` or `tool:x` start like `toString` but are not as long. */
let inheritedLengths = 0;
for (const n of INHERITED) inheritedLengths |= 1 << n.length;
const INHERITED_LENGTHS = inheritedLengths;

/** Whether `text` is an inherited name, without hashing texts that cannot be one. */
function inherited(text: string): boolean {
  return (
    text.length <= INHERITED_LONGEST &&
    (INHERITED_LENGTHS & (1 << text.length)) !== 0 &&
    INHERITED_FIRST[text.charCodeAt(0)] === 1 &&
    INHERITED.has(text)
  );
}

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
  if (inherited(text)) return `${text}${MARK}`;
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
 * The order a capped map drops its keys in, kept beside it so a new key does not scan the map: the order
 * JavaScript enumerates (and JSON writes) an object's keys, array indices ascending first, then the other
 * keys oldest first. `names[head..]` are the other keys; `indices` the index keys, ascending. Only `capSet`
 * adds keys to a map it has seen (and `copyMap` copies the order with the map); a map it has not seen (new,
 * cloned, parsed) is indexed once.
 */
interface KeyOrder {
  names: string[];
  head: number;
  indices: number[];
}

const orders = new WeakMap<object, KeyOrder>();

/** The largest array index (2^32 - 2): a key that reads as an integer up to it is enumerated first. */
const MAX_INDEX = 4294967294;

/** The key as an array index, or -1 when it is an ordinary key. */
function indexOf(key: string): number {
  const c = key.charCodeAt(0);
  if (!(c >= 0x30 && c <= 0x39) || key.length > 10 || (c === 0x30 && key.length > 1)) return -1;
  for (let i = 1; i < key.length; i++) {
    const d = key.charCodeAt(i);
    if (d < 0x30 || d > 0x39) return -1;
  }
  const n = Number(key);
  return n <= MAX_INDEX ? n : -1;
}

/**
 * The map whose order was asked for last, and its order: a map that keeps taking new keys (a session's
 * resource memos, more files and commands than their cap) asks again and again, and skips the lookup.
 */
let lastMap: object | undefined;
let lastOrder: KeyOrder | undefined;

function orderOf(map: object): KeyOrder {
  if (map === lastMap) return lastOrder!;
  let order = orders.get(map);
  if (order === undefined) {
    order = { names: [], head: 0, indices: [] };
    for (const key of Object.keys(map)) {
      const n = indexOf(key);
      if (n < 0) order.names.push(key);
      else order.indices.push(n); // Object.keys lists them ascending
    }
    orders.set(map, order);
  }
  lastMap = map;
  lastOrder = order;
  return order;
}

/** Inserts `n` into an ascending list. */
function insertSorted(list: number[], n: number): void {
  let i = list.length;
  while (i > 0 && (list[i - 1] ?? 0) > n) i--;
  list.splice(i, 0, n);
}

/** Removes and returns the key enumerated first, the one a capped map drops. */
function dropFirst(order: KeyOrder): string | undefined {
  if (order.indices.length > 0) return String(order.indices.shift());
  const key = order.names[order.head];
  order.head += 1;
  // Compact now and then, so a long-lived map's list stays near its cap.
  if (order.head >= 64 && order.head * 2 >= order.names.length) {
    order.names = order.names.slice(order.head);
    order.head = 0;
  }
  return key;
}

/**
 * Writes `key` of a map opened by a draft (see cow.ts); a new key past `cap` evicts the oldest keys. Updating a key keeps its place, so the common
 * case (a key already there) costs one property write.
 */
export function capSet<V>(map: Record<string, V> & Mine, key: string, value: V, cap: number): void {
  if (key in map) {
    map[key] = value;
    return;
  }
  const order = orderOf(map);
  map[key] = value;
  const n = indexOf(key);
  if (n < 0) order.names.push(key);
  else insertSorted(order.indices, n);
  while (order.names.length - order.head + order.indices.length > cap) {
    const oldest = dropFirst(order);
    if (oldest === undefined) break;
    delete map[oldest];
  }
}

/**
 * A shallow copy of a capped map that `capSet` goes on writing as it did the original (same keys, same
 * order, same next key to drop); the original is left as it is.
 */
export function copyMap<V>(map: Record<string, V>): Record<string, V> {
  const order = orders.get(map);
  if (order === undefined) return { ...map };
  // Copied key by key in the order kept beside it: a spread of a map that has lost keys sorts them first.
  const copy: Record<string, V> = {};
  const names = order.names.slice(order.head);
  for (const n of order.indices) {
    const key = String(n);
    copy[key] = map[key] as V;
  }
  for (const key of names) copy[key] = map[key] as V;
  orders.set(copy, { names, head: 0, indices: order.indices.slice() });
  return copy;
}

/** Appends to a list (opened by a draft, see cow.ts), dropping the oldest items past `cap`. */
export function pushCapped<T>(list: T[] & Mine, item: T, cap: number): void {
  list.push(item);
  // One over (the common case) is a shift, which makes no list of what it removes.
  if (list.length === cap + 1) list.shift();
  else if (list.length > cap) list.splice(0, list.length - cap);
}
