/** Text with its noise removed (times, ids, temporary paths), so that repeated commands and outputs show. */
import { isAssignment, splitShell, type ShellCommand } from "./shell.js";

/**
 * Text with its noise removed, so that repeats show: a command's shape (comments, environment assignments,
 * counters, temporary paths left out) and an output's (times, durations, ids left out, counts kept).
 */

/** Quotes a word only when it needs it, so equal words always print the same. */
function quoted(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const DATE_TIME =
  /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\w:])|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g;
const TEMP_PATH =
  /(?<![\w.~-])(?:\/private)?\/(?:tmp|var\/tmp|var\/folders)(?![\w.-])[^\s'"`;|&()<>]*|\$\{?TMPDIR\}?[^\s'"`;|&()<>]*/g;
const HEX_0X = /\b0x[0-9a-f]+\b/gi;
const hexIds = (digits: number) => new RegExp(`\\b(?=[0-9a-f]*\\d)[0-9a-f]{${digits},}\\b`, "gi");
const HEX_ID_8 = hexIds(8);
const HEX_ID_12 = hexIds(12);
const NUMBER = /(?<![\w.])\d+(?:\.\d+)*/g;
const DURATIONS = [
  /\b(?:\d+h)?(?:\d+m)?\d+(?:\.\d+)?(?:ms|µs|us|ns|s|m|min|h)\b/g,
  /\b\d+(?:\.\d+)?\s+(?:milliseconds?|ms|seconds?|secs?|minutes?|mins?|hours?)\b/g,
  // jest's `Time: 1.234 s`: a bare `3 s` is too ambiguous without the decimals.
  /\b\d+\.\d+\s+s\b/g,
];
const PID = /\b(pid|PID)(\s*[:=#]?\s*)\d+/g;
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[ -/]*[@-~]`, "g");

/**
 * A command line's text with only what matters: comments and each simple command's leading assignments
 * dropped, words requoted the same way, then UUIDs, dates and times, temp paths, hex ids and numbers
 * replaced by placeholders. Retries that differ only by such noise get equal shapes. `command` may come
 * already split.
 */
export function commandShape(command: string | readonly ShellCommand[]): string {
  const parts: string[] = [];
  for (const c of typeof command === "string" ? splitShell(command) : command) {
    const words = c.words.slice(
      Math.max(
        c.words.findIndex((w) => !isAssignment(w)),
        0,
      ),
    );
    if (words.every(isAssignment)) words.length = 0;
    const redirects = c.redirects.map(
      (r) => `${r.op}${quoted(r.target)}${r.body === undefined ? "" : ` ${quoted(r.body)}`}`,
    );
    const text = [...words.map(quoted), ...redirects].join(" ");
    if (text !== "") parts.push(parts.length === 0 ? text : `${c.connector ?? ";"} ${text}`);
  }
  return parts
    .join(" ")
    .replace(/\s+/g, " ")
    .replace(UUID, "<uuid>")
    .replace(DATE_TIME, "<time>")
    .replace(TEMP_PATH, "<tmp>")
    .replace(HEX_0X, "<hex>")
    .replace(HEX_ID_8, "<hex>")
    .replace(NUMBER, "<n>");
}

/**
 * Tool output with its noise replaced (colours, times and dates, durations, UUIDs, addresses, long hex ids,
 * temp paths, process ids) but ordinary numbers kept: `3 failed` and `2 failed` must stay different. Very
 * long output is cut to its first and last 8,000 characters.
 */
export function outputShape(text: string): string {
  const capped = text.length > 16_000 ? `${text.slice(0, 8_000)}\n…\n${text.slice(-8_000)}` : text;
  let shape = capped
    .replace(ANSI, "")
    .replace(/\r\n?/g, "\n")
    .replace(TEMP_PATH, "<tmp>")
    .replace(UUID, "<uuid>");
  shape = shape.replace(DATE_TIME, "<time>");
  for (const duration of DURATIONS) shape = shape.replace(duration, "<duration>");
  return shape.replace(HEX_0X, "<hex>").replace(HEX_ID_12, "<hex>").replace(PID, "$1$2<pid>");
}

/** Removes terminal colour codes and carriage returns, which change nothing a reader of the text sees. */
export function plainText(text: string): string {
  return text.replace(ANSI, "").replace(/\r\n?/g, "\n");
}
