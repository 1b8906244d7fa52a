/**
 * reins' server in Codex's config.toml, changed by lines so every other line and comment stays as it was;
 * each change is checked by reading the new text back (it must mean the old document with only
 * `mcp_servers.reins` changed), else reins leaves the file alone and says what to do by hand.
 */
import { isDeepStrictEqual } from "node:util";
import { readToml, tomlGet, tomlHeader } from "./toml-lines.js";

/** A Codex `[mcp_servers.<name>]` table's values. */
export type CodexMcpEntry = Record<string, string | string[] | number | boolean>;

const MCP_NAME = "reins";
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const CODEX_MARKER = "# added by `reins init codex --mcp`; `reins init codex --mcp --uninstall` removes it";
/** Where the entry is: `[mcp_servers.reins]`. */
export const CODEX_PATH = ["mcp_servers", MCP_NAME];

/** The `[mcp_servers.reins]` section's lines: from its header (and reins' marker above it) to the next header. */
function codexSection(lines: readonly string[]): { from: number; to: number } | null {
  const header = lines.findIndex((line) => {
    const t = line.trim();
    if (!t.startsWith("[") || t.startsWith("[[")) return false;
    try {
      const parsed = readToml(t);
      return (
        isDeepStrictEqual(Object.keys(parsed), ["mcp_servers"]) &&
        isDeepStrictEqual(Object.keys((parsed.mcp_servers as Record<string, unknown> | undefined) ?? {}), [
          MCP_NAME,
        ])
      );
    } catch {
      return false;
    }
  });
  if (header < 0) return null;
  let to = header + 1;
  while (to < lines.length && !/^\s*\[/.test(lines[to] ?? "")) to++;
  const from = header > 0 && lines[header - 1] === CODEX_MARKER ? header - 1 : header;
  return { from, to };
}

/** Drops empty tables, so a section emptied and taken out compares equal to its absence. */
function pruned(value: unknown): unknown {
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const p = pruned(v);
    if (!(isObject(p) && Object.keys(p).length === 0)) out[k] = p;
  }
  return out;
}

/** The config text with `[mcp_servers.reins]` set to `entry` (or removed), or why a line edit cannot do it. */
export function codexMcpText(
  text: string,
  entry: CodexMcpEntry | undefined,
): { text: string; changed: boolean } | { conflict: string } {
  const doc = readToml(text);
  // smol-toml's tables have no prototype; `pruned` makes plain objects of both sides.
  if (isDeepStrictEqual(pruned(tomlGet(doc, CODEX_PATH)), pruned(entry))) return { text, changed: false };
  const lines = text.split("\n");
  const at = codexSection(lines);
  if (at !== null) {
    lines.splice(at.from, at.to - at.from);
    // One blank line stays between the sections around it, none at the end.
    if (at.from > 0 && lines[at.from - 1]?.trim() === "" && (lines[at.from] ?? "").trim() === "")
      lines.splice(at.from, 1);
  }
  if (entry !== undefined) {
    while (lines.length > 0 && lines[lines.length - 1]?.trim() === "") lines.pop();
    if (lines.length > 0) lines.push("");
    lines.push(CODEX_MARKER, tomlHeader(CODEX_PATH));
    for (const [key, value] of Object.entries(entry)) lines.push(`${key} = ${JSON.stringify(value)}`);
    lines.push("");
  }
  const next = lines.join("\n");
  const expected = structuredClone(doc);
  const servers = isObject(expected.mcp_servers) ? expected.mcp_servers : (expected.mcp_servers = {});
  if (entry === undefined) delete servers[MCP_NAME];
  else servers[MCP_NAME] = entry;
  try {
    if (isDeepStrictEqual(pruned(readToml(next)), pruned(expected)))
      return { text: next, changed: next !== text };
  } catch {
    // the edit broke the file: fall through to the conflict
  }
  return { conflict: `${tomlHeader(CODEX_PATH)} is written in a form reins does not edit by lines` };
}
