/** Every `reins` command and the module that registers it, loaded only when that command runs. */
import type { Command } from "commander";
import { commandName, type CommandEntry } from "./command-entry.js";
import type { CommandContext } from "./context.js";

export { commandName, type CommandEntry } from "./command-entry.js";

/**
 * The commands, in the order `reins --help` lists them. A command's module (and all it imports) is loaded
 * only when the command line names that command, so `reins status` never loads the server, the driver or the
 * MCP SDK; `reins --help`, `reins help` and an unknown name load every row. A new command is one row here,
 * its module imported nowhere else on the way in (docs/fast-cli.md).
 */
export const COMMANDS: readonly CommandEntry[] = [
  { names: ["demo"], load: () => import("./commands/demo-command.js").then((m) => m.registerDemoCommand) },
  { names: ["check"], load: () => import("./commands/check-command.js").then((m) => m.registerCheckCommand) },
  {
    names: ["config"],
    load: () => import("./commands/config-command.js").then((m) => m.registerConfigCommand),
  },
  { names: ["hook"], load: () => import("./commands/hook-command.js").then((m) => m.registerHookCommand) },
  { names: ["serve"], load: () => import("./commands/serve-command.js").then((m) => m.registerServeCommand) },
  { names: ["init"], load: () => import("./commands/init-command.js").then((m) => m.registerInitCommand) },
  {
    names: ["daemon"],
    load: () =>
      import("./commands/daemon-command.js").then(
        (m) => (root, ctx) => m.registerDaemonCommands(root, ctx.io, ctx.result),
      ),
  },
  {
    names: ["doctor"],
    load: () => import("./commands/doctor-command.js").then((m) => m.registerDoctorCommand),
  },
  {
    names: ["statusline"],
    load: () => import("./commands/statusline-command.js").then((m) => m.registerStatuslineCommand),
  },
  {
    names: ["status"],
    load: () => import("./commands/status-command.js").then((m) => m.registerStatusCommand),
  },
  {
    names: ["sessions"],
    load: () => import("./commands/sessions-command.js").then((m) => m.registerSessionsCommand),
  },
  {
    names: ["budget"],
    load: () => import("./commands/budget-command.js").then((m) => m.registerBudgetCommand),
  },
  {
    names: ["circuit"],
    load: () => import("./commands/circuit-command.js").then((m) => m.registerCircuitCommand),
  },
  {
    names: ["confirm"],
    load: () => import("./commands/confirm-command.js").then((m) => m.registerConfirmCommand),
  },
  {
    names: ["alerts"],
    load: () => import("./commands/alerts-command.js").then((m) => m.registerAlertsCommand),
  },
  {
    names: ["export"],
    load: () => import("./commands/export-command.js").then((m) => m.registerExportCommand),
  },
  { names: ["gc"], load: () => import("./commands/gc-command.js").then((m) => m.registerGcCommands) },
  {
    names: ["replay", "evaluate"],
    load: () => import("./commands/evaluate-commands.js").then((m) => m.registerEvaluateCommands),
  },
  { names: ["tune"], load: () => import("./commands/tune-command.js").then((m) => m.registerTuneCommand) },
  { names: ["run"], load: () => import("./commands/run-command.js").then((m) => m.registerRunCommand) },
  { names: ["plan"], load: () => import("./commands/plan-command.js").then((m) => m.registerPlanCommand) },
  {
    names: ["report"],
    load: () => import("./commands/report-command.js").then((m) => m.registerReportCommand),
  },
  { names: ["mcp"], load: () => import("./commands/mcp-command.js").then((m) => m.registerMcpCommands) },
  {
    names: ["approve", "workflow"],
    load: () => import("./commands/workflow-commands.js").then((m) => m.registerWorkflowCommands),
  },
];

/**
 * The rows a command line needs: the one that registers the command it names; none for `reins --version`
 * alone; every row for help, no command, or a name no row has (commander's own help, its "unknown command"
 * and its suggestions then read as they always did).
 */
export function commandsFor(argv: readonly string[]): readonly CommandEntry[] {
  const name = commandName(argv);
  if (name === undefined) {
    const version = argv.includes("-V") || argv.includes("--version");
    return version && !argv.includes("-h") && !argv.includes("--help") ? [] : COMMANDS;
  }
  const entry = COMMANDS.find((e) => e.names.includes(name));
  return entry === undefined ? COMMANDS : [entry];
}

/** Registers on `root` the rows `commandsFor` chose, loading their modules side by side. */
export async function registerCommands(
  root: Command,
  ctx: CommandContext,
  entries: readonly CommandEntry[],
): Promise<void> {
  const registers = await Promise.all(entries.map((entry) => entry.load()));
  for (const register of registers) register(root, ctx);
}
