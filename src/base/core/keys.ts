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

/** White space that collapsing changes: two or more in a row, or one that is not a plain space. */
const UNCOLLAPSED = /\s{2,}|[^\S ]/;

/** How many texts each memo of keys keeps: more than the files and commands a session comes back to. */
const KEYS = 256;

/** Collapses white space so `npm  test` and `npm test` are one command. */
export const commandKey = memoize((command) => {
  const trimmed = command.trim();
  // Most commands have no run of white space to collapse: tested first, they are not copied.
  return clip(UNCOLLAPSED.test(trimmed) ? trimmed.replace(/\s+/g, " ") : trimmed);
}, KEYS);

/*
 * The keys of the state's maps, each remembered for the texts seen lately (see memoize): a session comes
 * back to the same few files and commands, and its maps are then read with the same string each time,
 * instead of a new one joined per event that must be hashed again to find its entry.
 */
const cmdClass = memoize((command) => `cmd:${commandKey(command)}`, KEYS);
const toolClass = memoize((tool) => `tool:${clip(tool)}`, KEYS);
const writeMemo = memoize((path) => `write:${clip(path)}`, KEYS);
const runMemo = memoize((command) => `run:${commandKey(command)}`, KEYS);

/** The failure class of a call: its command, or its tool when it runs none. */
export function failureClass(event: { tool: string; command?: string }): string {
  return event.command !== undefined ? cmdClass(event.command) : toolClass(event.tool);
}

/** The key of the circular-behaviour memo of writes to `path`. */
export function writeKey(path: string): string {
  return writeMemo(path);
}

/** The key of the circular-behaviour memo of runs of `command`. */
export function runKey(command: string): string {
  return runMemo(command);
}
