/**
 * `reins init claude` puts `reins statusline` in Claude Code's `statusLine` setting unless the user shows a
 * status line of their own (then `--statusline compose` runs theirs first), and `--uninstall` puts back what
 * was there (docs/statusline.md).
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname } from "node:path";
import { ReinsError } from "../base/core/errors.js";
import { readSettings } from "./agent-hooks.js";

/** How `reins init claude` treats the status line: add it unless the user has one, wrap theirs, or leave it. */
export type StatuslineMode = "auto" | "compose" | "off";

/** The modes `--statusline` takes. */
export const STATUSLINE_MODES: readonly StatuslineMode[] = ["auto", "compose", "off"];

type Entry = Record<string, unknown> & { type?: unknown; command?: unknown };

/** The command of reins' status line for the reins at `bin`, wrapping `theirs` when given. */
export function statuslineCommand(bin: string, theirs?: string): string {
  const base = `"${process.execPath}" "${bin}" statusline`;
  return theirs === undefined ? base : `${base} --compose ${Buffer.from(theirs, "utf8").toString("base64")}`;
}

/** Whether a `statusLine` entry is reins' (plain or composed), whatever install it names. */
export function isReinsStatusline(entry: unknown): boolean {
  const command = (entry as Entry | null)?.command;
  return typeof command === "string" && /reins\.js" statusline( --compose [A-Za-z0-9+/=]+)?$/.test(command);
}

const entryOf = (path: string): Entry | undefined => {
  const value = readSettings(path).statusLine;
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Entry) : undefined;
};

function writeSettings(path: string, settings: Record<string, unknown>): void {
  let mode: number | undefined;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    // a new file
  }
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.reins-tmp`;
  writeFileSync(tmp, `${JSON.stringify(settings, null, 2)}\n`, mode !== undefined ? { mode } : {});
  if (mode !== undefined) chmodSync(tmp, mode);
  renameSync(tmp, path);
}

/** What an install of the status line needs. */
export interface StatuslineInstall {
  /** The settings file reins writes (the project's `settings.local.json`, or the user's `settings.json`). */
  target: string;
  /** The other files Claude Code takes a `statusLine` from for this scope (the project's, the user's). */
  others: readonly string[];
  /** Where the entry reins replaced is kept, for `--uninstall`. */
  record: string;
  bin: string;
  mode: StatuslineMode;
  uninstall: boolean;
}

/** Adds (or with `uninstall` takes out) reins' status line. Returns the lines to print. */
export function installStatusline(o: StatuslineInstall): string[] {
  if (o.uninstall) return uninstallStatusline(o.target, o.record);
  if (!STATUSLINE_MODES.includes(o.mode))
    throw new ReinsError("usage", `--statusline takes ${STATUSLINE_MODES.join(", ")}, not "${o.mode}"`);
  if (o.mode === "off") return [];
  const own = entryOf(o.target);
  const found = [o.target, ...o.others].flatMap((file) => {
    const entry = entryOf(file);
    return entry === undefined ? [] : [{ file, entry }];
  });
  const ours = found.find((f) => isReinsStatusline(f.entry));
  const theirs = found.find((f) => !isReinsStatusline(f.entry));
  if (ours !== undefined && (theirs === undefined || ours.file === o.target))
    return [`reins' status line already shows (${ours.file})`];
  const theirCommand = typeof theirs?.entry.command === "string" ? theirs.entry.command : undefined;
  if (theirs !== undefined && (o.mode !== "compose" || theirCommand === undefined))
    return [
      `Claude Code already shows your status line (${theirs.file}): reins left it; to show reins' part after yours, run \`reins init claude${o.target.endsWith("local.json") ? "" : " --user"} --statusline compose\``,
    ];
  const entry: Entry = {
    ...(theirs?.entry ?? {}),
    type: "command",
    command: statuslineCommand(o.bin, theirCommand),
  };
  const settings = readSettings(o.target);
  settings.statusLine = entry;
  writeSettings(o.target, settings);
  mkdirSync(dirname(o.record), { recursive: true, mode: 0o700 });
  writeFileSync(o.record, `${JSON.stringify({ previous: own ?? null })}\n`, { mode: 0o600 });
  return [
    theirCommand !== undefined
      ? `reins' status line runs yours first, then shows its part (${o.target})`
      : `added reins' status line to ${o.target}`,
  ];
}

/** Takes reins' status line out of `target`, putting back the entry it replaced there. */
function uninstallStatusline(target: string, record: string): string[] {
  if (!existsSync(target) || !isReinsStatusline(entryOf(target))) {
    rmSync(record, { force: true });
    return [];
  }
  let previous: unknown = null;
  try {
    previous = (JSON.parse(readFileSync(record, "utf8")) as { previous?: unknown }).previous ?? null;
  } catch {
    // no record: nothing to put back
  }
  const settings = readSettings(target);
  if (previous !== null && typeof previous === "object") settings.statusLine = previous;
  else delete settings.statusLine;
  writeSettings(target, settings);
  rmSync(record, { force: true });
  return [
    previous !== null
      ? `put your status line back in ${target}`
      : `removed reins' status line from ${target}`,
  ];
}
