/** The reins CLI (reins/cli): `run(argv)` builds the commands, runs one and maps errors to exit codes. */
import { Command, CommanderError } from "commander";
import { ReinsError } from "../core/errors.js";
import { loadPolicy } from "../config/load-policy.js";
import { REINS_VERSION } from "../config/package-info.js";
import { DEFAULT_HOST, DEFAULT_PORT } from "../server/daemon.js";
import { openStore } from "../store/open.js";
import { join } from "node:path";
import { demoPlanRun } from "../demo/plan-run.js";
import { demo, demoStartBefore } from "./demo.js";
import { registerAgentCommands } from "./agent-commands.js";
import { registerEvaluateCommands } from "./commands/evaluate-commands.js";
import { registerTuneCommand } from "./commands/tune-command.js";
import { registerGcCommands } from "./commands/gc-command.js";
import { registerMcpCommands } from "./commands/mcp-command.js";
import { registerRunCommands } from "./run-commands.js";
import { registerStoreCommands } from "./store-commands.js";
import { registerWorkflowCommands } from "./commands/workflow-commands.js";
import { processIo, type Io } from "./io.js";
import { EXIT } from "./exit-codes.js";
import { registerCheckCommand } from "./commands/check-command.js";
import { registerConfigCommand } from "./commands/config-command.js";

export { EXIT } from "./exit-codes.js";

function program(io: Io, result: { code: number }): Command {
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

  let problemsSaid = false;
  const policyOf = () => {
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
  root
    .command("demo")
    .description("run scripted agents through the engine and show when and why reins steps in")
    .option("--agent <name>", "run one agent: healthy, stuck, alternating, thrashing, burst, red-claim")
    .option("--trace <file>", "also write every event and decision as a trace for `reins check`")
    .option("--serve", "then serve the dashboard on the demo's sessions (`reins serve`) until Ctrl-C")
    .option("--port <port>", "the port to serve on, with --serve", String(DEFAULT_PORT))
    .action(async (opts: { agent?: string; trace?: string; serve?: boolean; port: string }) => {
      const loaded = policyOf();
      const store = await openStore(loaded.storeSpec, loaded.root);
      try {
        // Minute-aligned times ending now: the sessions show as just done, and rate windows line up.
        const start = await demoStartBefore(Date.now(), loaded.policy);
        result.code = await demo(io, loaded.policy, {
          ...(opts.agent !== undefined ? { agent: opts.agent } : {}),
          ...(opts.trace !== undefined ? { trace: opts.trace } : {}),
          start,
          run: Date.now().toString(36),
          backend: (scope) => async (event) => {
            const answer = (await store.append(scope, [event], loaded.policy)).answers[0];
            if (answer === null || answer === undefined)
              throw new ReinsError("invalid_event", "the demo's event was not applied");
            return answer;
          },
        });
        if (result.code === 0 && opts.agent === undefined) {
          // The other half: reins drives an agent over a plan, runs the checks itself, commits what is green.
          io.stdout("\nreins run: a scripted agent driven over a three-task plan, one task red first\n\n");
          const ran = await demoPlanRun(store, loaded.policy, (text) => io.stdout(`  ${text}`));
          const done = Object.values(ran.state.tasks).filter((t) => t.status === "done").length;
          io.stdout(
            `\n  ${done} of ${Object.keys(ran.state.tasks).length} tasks done, one commit each, on branch ${ran.meta.branch} of ${ran.root}; report: ${join(ran.root, ran.report ?? "")}\n`,
          );
        }
        if (result.code === 0)
          io.stdout(
            opts.serve === true
              ? `\nThe demo's sessions are in ${store.location}; the dashboard: http://${DEFAULT_HOST}:${opts.port}/ (Ctrl-C stops it)\n`
              : `\nThe demo's sessions are in ${store.location}: see them with \`reins status\`.\n`,
          );
      } finally {
        await store.close();
      }
      if (result.code !== 0 || opts.serve !== true) return;
      // The same project, policy and store, served until Ctrl-C: the dashboard shows what just ran.
      const global = root.opts<{ cwd: string; policy?: string; store?: string }>();
      result.code = await run(
        [
          "-C",
          global.cwd,
          ...(global.policy !== undefined ? ["--policy", global.policy] : []),
          ...(global.store !== undefined ? ["--store", global.store] : []),
          "serve",
          "--port",
          opts.port,
        ],
        io,
      );
    });

  registerCheckCommand(root, { io, loaded: policyOf, result });
  registerConfigCommand(root, { io, loaded: policyOf, result });

  registerAgentCommands(root, { io, loaded: policyOf, result });
  registerStoreCommands(root, { io, loaded: policyOf });
  registerGcCommands(root, { io, loaded: policyOf });
  registerEvaluateCommands(root, { io, loaded: policyOf });
  registerTuneCommand(root, { io, loaded: policyOf });
  registerRunCommands(root, { io, loaded: policyOf, result });
  registerMcpCommands(root, { io, loaded: policyOf });
  registerWorkflowCommands(root, { io, loaded: policyOf });
  return root;
}

/** Runs the reins CLI with `argv` (without the node and script paths) and returns the exit code. */
export async function run(argv: string[], io: Io = processIo()): Promise<number> {
  const result = { code: EXIT.ok as number };
  const root = program(io, result);
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
