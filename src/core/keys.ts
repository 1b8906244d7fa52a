/** The keys calls are known by in the state: a call's signature, a command's key, a failure class. */
import { clip } from "./capped.js";

/** The signature of a call: equal signatures mean identical calls. */
export function callSignature(event: { tool: string; inputHash: string }): string {
  return clip(`${event.tool}#${event.inputHash}`);
}

/** Collapses white space so `npm  test` and `npm test` are one command. */
export function commandKey(command: string): string {
  return clip(command.trim().replace(/\s+/g, " "));
}

/** The failure class of a call: its command, or its tool when it runs none. */
export function failureClass(event: { tool: string; command?: string }): string {
  return event.command !== undefined ? `cmd:${commandKey(event.command)}` : `tool:${clip(event.tool)}`;
}
