/** A row of the command table: the top-level names a module registers, and how to load its register function. */
import type { Command } from "commander";
import type { CommandContext } from "./context.js";

/** Registers one command (or a family of them) on the program. */
export type Register = (root: Command, ctx: CommandContext) => void;

/** A table row: the top-level command names a module registers, and how to load its register function. */
export interface CommandEntry {
  names: readonly string[];
  load(): Promise<Register>;
}

/** The program's own options that take a value: the word after them is that value, not a command. */
const VALUED = new Set(["-C", "--cwd", "--policy", "--store"]);

/** The first word of a command line that is not an option of the program or its value: the command's name. */
export function commandName(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] ?? "";
    if (word === "--") return argv[i + 1];
    if (VALUED.has(word)) i++;
    else if (!word.startsWith("-")) return word;
  }
  return undefined;
}
