/** The reins CLI (reins/cli): `run(argv)` builds the commands, runs one and maps errors to exit codes. */
import { commandsFor } from "./command-table.js";
import { processIo, type Io } from "./io.js";
import { runProgram } from "./program.js";

export { EXIT } from "./exit-codes.js";

/** Runs the reins CLI with `argv` (without the node and script paths) and returns the exit code. */
export async function run(argv: string[], io: Io = processIo()): Promise<number> {
  return runProgram(argv, io, commandsFor(argv), run);
}
