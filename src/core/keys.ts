/**
 * The keys calls are known by in the state: a call's signature, a command's key, a failure class. The
 * reducer and several guards ask for the same event's keys in turn, so each function remembers its last
 * answer, or its answers for the texts seen lately (a pure function's memo: same input, same output).
 */
import { clip } from "./capped.js";
import { memoize } from "./memo.js";

let sigTool = "";
let sigInput = "";
let sigLast = clip("#");

/** The signature of a call: equal signatures mean identical calls. */
export function callSignature(event: { tool: string; inputHash: string }): string {
  if (event.tool !== sigTool || event.inputHash !== sigInput) {
    sigTool = event.tool;
    sigInput = event.inputHash;
    sigLast = clip(`${event.tool}#${event.inputHash}`);
  }
  return sigLast;
}

let keyCommand = "";
/** White space that collapsing changes: two or more in a row, or one that is not a plain space. */
const UNCOLLAPSED = /\s{2,}|[^\S ]/;
let keyLast = "";

/** Collapses white space so `npm  test` and `npm test` are one command. */
export function commandKey(command: string): string {
  if (command !== keyCommand) {
    keyCommand = command;
    const trimmed = command.trim();
    // Most commands have no run of white space to collapse: tested first, they are not copied.
    keyLast = clip(UNCOLLAPSED.test(trimmed) ? trimmed.replace(/\s+/g, " ") : trimmed);
  }
  return keyLast;
}

/**
 * A key with a prefix, remembering its answers for the keys seen lately: a session comes back to the same
 * few files and commands, and the state's maps are read with the same string each time, instead of a new
 * one joined per event that must be hashed again to find its entry.
 */
function prefixed(prefix: string): (key: string) => string {
  return memoize((key) => `${prefix}${key}`);
}

const cmdClass = prefixed("cmd:");
const toolClass = prefixed("tool:");
const writeMemo = prefixed("write:");
const runMemo = prefixed("run:");

/** The failure class of a call: its command, or its tool when it runs none. */
export function failureClass(event: { tool: string; command?: string }): string {
  return event.command !== undefined ? cmdClass(commandKey(event.command)) : toolClass(clip(event.tool));
}

/** The key of the circular-behaviour memo of writes to `path`. */
export function writeKey(path: string): string {
  return writeMemo(clip(path));
}

/** The key of the circular-behaviour memo of runs of `command`. */
export function runKey(command: string): string {
  return runMemo(commandKey(command));
}
