/**
 * The keys calls are known by in the state: a call's signature, a command's key, a failure class. The
 * reducer and several guards ask for the same event's keys in turn, so each function remembers its last
 * answer (a pure function's memo: same input, same output).
 */
import { clip } from "./capped.js";

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
let keyLast = "";

/** Collapses white space so `npm  test` and `npm test` are one command. */
export function commandKey(command: string): string {
  if (command !== keyCommand) {
    keyCommand = command;
    keyLast = clip(command.trim().replace(/\s+/g, " "));
  }
  return keyLast;
}

let classKey = "";
let classLast = "";

/** The failure class of a call: its command, or its tool when it runs none. */
export function failureClass(event: { tool: string; command?: string }): string {
  if (event.command === undefined) return `tool:${clip(event.tool)}`;
  const key = commandKey(event.command);
  if (key !== classKey) {
    classKey = key;
    classLast = `cmd:${key}`;
  }
  return classLast;
}
