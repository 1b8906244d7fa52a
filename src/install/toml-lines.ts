/**
 * Codex's config.toml edited line by line, so every other line and comment of the user's file stays as it was.
 * Kept over a TOML editing library: of those on npm for Node 20 (@decimalturn/toml-patch 3.3.0, a fork of the
 * unmaintained toml-patch 0.2.3 / @shopify/toml-patch 0.3.0), none was shown here to keep a user's comments and
 * layout on every edit, and this editor reads each edit back to refuse one that changes more than its key;
 * a switch would change what `reins init` writes, which this move of files must not.
 */
import { isDeepStrictEqual } from "node:util";
import { parse as parseToml, TomlError } from "smol-toml";

// ---------------------------------------------------------------------------------------------------
// Codex's config.toml: read with smol-toml; changed by lines, so every other line (and comment) of the
// file stays as it was. Each edit is checked by reading the new text back: when it does not mean exactly
// the old document with that one key changed, reins leaves the file alone and says what to do by hand.

/** A parsed TOML table. */
export type TomlTable = { [key: string]: unknown };

/** True for a TOML table (not an array, a date or a scalar). */
export const isTable = (v: unknown): v is TomlTable =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);

/** Reads TOML into plain values; throws a one-line error (with the line) on what is not TOML. */
export function readToml(text: string): TomlTable {
  try {
    return parseToml(text);
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    const what = error.message.split("\n")[0]?.replace(/^Invalid TOML document: /, "") ?? "not TOML";
    throw new Error(`line ${error.line}: ${what}`);
  }
}

/** The value at `path` in a parsed document, if any. */
export function tomlGet(root: TomlTable, path: readonly string[]): unknown {
  let node: unknown = root;
  for (const part of path) node = isTable(node) && Object.hasOwn(node, part) ? node[part] : undefined;
  return node;
}

const tomlKey = (k: string) => (/^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k));
/** `[a."b c"]` for a table path. */
export const tomlHeader = (path: readonly string[]) => `[${path.map(tomlKey).join(".")}]`;
/** `key = "value"` (a TOML basic string is JSON's string syntax). */
export const tomlLine = (key: string, value: string) => `${tomlKey(key)} = ${JSON.stringify(value)}`;

/** What one line says on its own: a `[table]` header's path, a `key = "string"` line's key, or nothing. */
function lineMeaning(line: string): { header: string[] } | { key: string } | undefined {
  const t = line.trim();
  if (t === "" || t.startsWith("#") || t.startsWith("[[")) return undefined;
  let parsed: TomlTable;
  try {
    parsed = readToml(t);
  } catch {
    return undefined;
  }
  if (t.startsWith("[")) {
    const path: string[] = [];
    let node: unknown = parsed;
    for (;;) {
      const keys = isTable(node) ? Object.keys(node) : [];
      if (keys.length !== 1) break;
      path.push(keys[0] as string);
      node = (node as TomlTable)[keys[0] as string];
    }
    return { header: path };
  }
  const keys = Object.keys(parsed);
  return keys.length === 1 && typeof parsed[keys[0] as string] === "string"
    ? { key: keys[0] as string }
    : undefined;
}

/** The lines of the `[path]` section: its header's index and where the next header starts. */
function section(
  lines: readonly string[],
  path: readonly string[],
): { header: number; end: number } | undefined {
  const id = JSON.stringify(path);
  const header = lines.findIndex((l) => {
    const m = lineMeaning(l);
    return m !== undefined && "header" in m && JSON.stringify(m.header) === id;
  });
  if (header < 0) return undefined;
  let end = header + 1;
  while (end < lines.length && !/^\s*\[/.test(lines[end] as string)) end++;
  return { header, end };
}

const keyLine = (lines: readonly string[], from: number, to: number, key: string) => {
  for (let n = from; n < to; n++) {
    const m = lineMeaning(lines[n] as string);
    if (m !== undefined && "key" in m && m.key === key) return n;
  }
  return -1;
};

/** Drops empty tables, so that `[a.b]` emptied and taken out compares equal to its absence. */
function pruned(value: unknown): unknown {
  if (!isTable(value)) return value;
  const out: TomlTable = {};
  for (const [k, v] of Object.entries(value)) {
    const p = pruned(v);
    if (!(isTable(p) && Object.keys(p).length === 0)) out[k] = p;
  }
  return out;
}

/** `text` when it reads as `before` with `path.key` set to `value` (removed when undefined), else a conflict. */
function checked(
  before: TomlTable,
  text: string,
  path: readonly string[],
  key: string,
  value: string | undefined,
): { text: string } | { conflict: string } {
  const conflict = { conflict: `${tomlHeader(path)} is written in a form reins does not edit by lines` };
  const expected = pruned(before) as TomlTable;
  let node = expected;
  for (const part of path) {
    const next = node[part] ?? {};
    if (!isTable(next)) return conflict;
    node = node[part] = next;
  }
  if (value === undefined) delete node[key];
  else node[key] = value;
  try {
    return isDeepStrictEqual(pruned(readToml(text)), pruned(expected)) ? { text } : conflict;
  } catch {
    return conflict;
  }
}

/**
 * Sets `key = "value"` in the table at `path`: in its `[header]` section when it has one, else in a new
 * section at the end (after `marker`, a comment line). Returns the new text, or why it cannot (the table
 * is written inline or with dotted keys, where a line edit would change what the file means).
 */
export function tomlSet(
  text: string,
  path: readonly string[],
  key: string,
  value: string,
  marker?: string,
): { text: string } | { conflict: string } {
  const before = readToml(text);
  if (tomlGet(before, [...path, key]) === value) return { text };
  const lines = text.split("\n");
  const at = section(lines, path);
  if (at !== undefined) {
    const line = keyLine(lines, at.header + 1, at.end, key);
    if (line >= 0) lines[line] = tomlLine(key, value);
    else {
      let last = at.end;
      while (last > at.header + 1 && (lines[last - 1] as string).trim() === "") last--;
      lines.splice(last, 0, tomlLine(key, value));
    }
  } else {
    while (lines.length > 0 && lines[lines.length - 1]?.trim() === "") lines.pop();
    if (lines.length > 0) lines.push("");
    if (marker !== undefined) lines.push(marker);
    lines.push(tomlHeader(path), tomlLine(key, value), "");
  }
  return checked(before, lines.join("\n"), path, key, value);
}

/**
 * Removes `key` from the table at `path`, and the table's section (with `marker` right above it) when
 * nothing but blank lines is left in it. Returns the text unchanged when the key is not there.
 */
export function tomlUnset(
  text: string,
  path: readonly string[],
  key: string,
  marker?: string,
): { text: string } | { conflict: string } {
  const before = readToml(text);
  if (tomlGet(before, [...path, key]) === undefined) return { text };
  const lines = text.split("\n");
  const at = section(lines, path);
  const line = at === undefined ? -1 : keyLine(lines, at.header + 1, at.end, key);
  if (at === undefined || line < 0)
    return { conflict: `${tomlHeader(path)} is written in a form reins does not edit by lines` };
  const rest = lines.slice(at.header + 1, at.end).filter((_, n) => at.header + 1 + n !== line);
  if (rest.every((l) => l.trim() === "")) {
    // The whole section goes (with its marker); the blank line before it stays, as the separator.
    const from = marker !== undefined && lines[at.header - 1] === marker ? at.header - 1 : at.header;
    lines.splice(from, at.end - from);
    if (lines.length > 0 && lines[lines.length - 1] !== "") lines.push("");
  } else lines.splice(line, 1);
  return checked(before, lines.join("\n"), path, key, undefined);
}
