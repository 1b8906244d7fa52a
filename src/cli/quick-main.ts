/** `reins status` and `reins doctor` as bin/reins.js runs them: a program holding those two commands only. */
import type { CommandEntry } from "./command-entry.js";
import { registerDoctorCommand } from "./commands/doctor-command.js";
import { registerStatusCommand } from "./commands/status-command.js";
import { processIo } from "./io.js";
import { runProgram } from "./program.js";

/** The rows this entry holds, each as COMMANDS has it, with its module imported statically. */
const QUICK: readonly CommandEntry[] = [
  { names: ["doctor"], load: () => Promise.resolve(registerDoctorCommand) },
  { names: ["status"], load: () => Promise.resolve(registerStatusCommand) },
];

/** The top-level commands this entry runs: bin/reins.js sends it a command line only when it starts with one. */
export const QUICK_COMMANDS: readonly string[] = QUICK.flatMap((entry) => entry.names);

/**
 * Runs `reins status …` or `reins doctor …` as `run(argv)` would, with that command's row alone (as
 * commandsFor gives it). scripts/bundle-hook.js bundles this file and all it imports into one CommonJS file,
 * run through V8's code cache (docs/fast-cli.md). Neither command runs another command line.
 */
export function quickMain(argv: readonly string[]): Promise<number> {
  const rows = QUICK.filter((entry) => entry.names.includes(argv[0] ?? ""));
  return runProgram(argv, processIo(), rows, () =>
    Promise.reject(new Error("reins status and doctor run no other command line")),
  );
}
