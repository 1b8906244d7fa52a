/** The reins CLI (reins/cli): `run(argv)` builds the commands, runs one and maps errors to exit codes. */
import { statSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { ReinsError } from "../core/errors.js";
import type { loadPolicy as LoadPolicy } from "../config/load-policy.js";
import { REINS_VERSION } from "../config/package-info.js";
import { commandsFor, registerCommands } from "./command-table.js";
import { processIo, type Io } from "./io.js";
import { EXIT } from "./exit-codes.js";

export { EXIT } from "./exit-codes.js";

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

async function program(io: Io, result: { code: number }, argv: readonly string[]): Promise<Command> {
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
  const commands = commandsFor(argv);
  if (commands.length > 0) loadPolicy = (await import("../config/load-policy.js")).loadPolicy;
  await registerCommands(root, { io, loaded: policyOf, result, run }, commands);
  return root;
}

/** Runs the reins CLI with `argv` (without the node and script paths) and returns the exit code. */
export async function run(argv: string[], io: Io = processIo()): Promise<number> {
  const result = { code: EXIT.ok as number };
  const root = await program(io, result, argv);
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
