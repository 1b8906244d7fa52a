/** What the commands that connect agents to reins need from the program. */
import type { LoadedPolicy } from "../base/config/load-policy.js";
import type { Io } from "./io.js";

/** The program's Io, its policy as loaded, and its exit code. */
export interface AgentContext {
  io: Io;
  loaded(): LoadedPolicy & { storeSpec: string };
  /** The process's exit code, for commands that fail without throwing. */
  result: { code: number };
}

/** What every command's register function is handed: the program's context, and the CLI to run again. */
export interface CommandContext extends AgentContext {
  /** Runs another `reins` command line in this process (as `reins demo --serve` runs `reins serve`). */
  run(argv: string[], io: Io): Promise<number>;
}
