/**
 * Bounded maps for the state: plain objects (so they round-trip through JSON) that keep at most `cap`
 * keys, dropping the oldest one. Keys are truncated so a hostile string cannot grow state.
 */

/** Longest key or stored text kept in state; longer ones are cut. */
export const MAX_TEXT = 256;

/** Cuts `text` to MAX_TEXT characters, keeping it distinct from other cut texts by its length. */
export function clip(text: string): string {
  return text.length <= MAX_TEXT ? text : `${text.slice(0, MAX_TEXT - 16)}…[${text.length}]`;
}

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
  let excess = Object.keys(map).length - cap;
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
