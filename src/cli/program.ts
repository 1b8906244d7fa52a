/** The reins program: its own options, the commands it is given, and errors mapped to exit codes. */
import { statSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { ReinsError } from "../base/core/errors.js";
import type { loadPolicy as LoadPolicy } from "../base/config/load-policy.js";
import { REINS_VERSION } from "../base/config/package-info.js";
import type { CommandEntry } from "./command-entry.js";
import type { CommandContext } from "./context.js";
import type { Io } from "./io.js";
import { EXIT } from "./exit-codes.js";

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

async function program(
  io: Io,
  result: { code: number },
  commands: readonly CommandEntry[],
  run: CommandContext["run"],
): Promise<Command> {
  const root = new Command("reins")
    .description(
      "Back-pressure for autonomous coding agents: budgets, breakers, loop detection, evidence-gated completion.",
    )
    .version(REINS_VERSION, "-V, --version", "print the version of reins")
    .option("-C, --cwd <dir>", "project folder", io.cwd)
    .option("--policy <file>", "policy file (default: reins.config.json or .reins/config.json)")
    .option(
      "--store <spec>",
      "sqlite:<path>, redis://..., rediss://..., redis+cluster://... or memory (default: the policy's, else .reins/reins.db)",
    )
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout(text), writeErr: (text) => io.stderr(text) });

  // The policy's loader (zod and the schema with it) is loaded only when a command is, not for --version.
  let loadPolicy: typeof LoadPolicy | undefined;
  let problemsSaid = false;
  const policyOf = () => {
    if (loadPolicy === undefined) throw new ReinsError("usage", "no command asked for the policy");
    const opts = root.opts<{ cwd: string; policy?: string; store?: string }>();
    const loaded = loadPolicy({
      cwd: opts.cwd,
      env: io.env,
      ...(opts.policy !== undefined ? { file: opts.policy } : {}),
    });
    // A bad config never stops a command (its invalid parts take their defaults); each problem is said once.
    if (!problemsSaid) for (const line of loaded.problems) io.stderr(`reins: ${line}\n`);
    problemsSaid = true;
    return { ...loaded, storeSpec: opts.store ?? loaded.policy.store };
  };
  // A --cwd that is no folder is a usage error, said in one line, before any command acts on it (a hook
  // call excepted: it always answers).
  root.hook("preAction", (_root, action) => {
    const cwd = root.opts<{ cwd: string }>().cwd;
    if (action.name() !== "hook" && !isFolder(cwd))
      throw new ReinsError("usage", `--cwd ${cwd}: no such folder`);
  });
  if (commands.length > 0) loadPolicy = (await import("../base/config/load-policy.js")).loadPolicy;
  const ctx: CommandContext = { io, loaded: policyOf, result, run };
  // The rows' modules load side by side; they register in the table's order.
  const registers = await Promise.all(commands.map((entry) => entry.load()));
  for (const register of registers) register(root, ctx);
  return root;
}

/**
 * Runs `argv` (without the node and script paths) on a program holding `commands` only, and returns the
 * exit code. `run` is the CLI a command may run again in this process (`reins demo --serve`).
 */
export async function runProgram(
  argv: readonly string[],
  io: Io,
  commands: readonly CommandEntry[],
  run: CommandContext["run"],
): Promise<number> {
  const result = { code: EXIT.ok as number };
  const root = await program(io, result, commands, run);
  try {
    await root.parseAsync(argv, { from: "user" });
    return result.code;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (ReinsError.is(error)) {
      io.stderr(`reins: ${error.message}\n`);
      // Refused, not misused: the command was right, the shell it ran in cannot show a person runs it.
      return error.code === "not_a_person" ? EXIT.failed : EXIT.usage;
    }
    io.stderr(
      `reins: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return EXIT.failed;
  }
}
