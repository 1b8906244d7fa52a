/** The CLI commands that connect agents to reins: hook, serve, init, daemon and doctor. */
import type { Command } from "commander";
import { registerDaemonCommands } from "./commands/daemon-command.js";
import { registerInitCommand } from "./commands/init-command.js";
import type { AgentContext } from "./context.js";
import { registerDoctorCommand } from "./commands/doctor-command.js";
import { registerHookCommand } from "./commands/hook-command.js";
import { registerServeCommand } from "./commands/serve-command.js";
import { registerStatuslineCommand } from "./commands/statusline-command.js";

export { binPath } from "./commands/bin-path.js";

/** `hook`, `serve`, `init`, `daemon` and `doctor`: how agents reach reins. */
export function registerAgentCommands(root: Command, ctx: AgentContext): void {
  registerHookCommand(root, ctx);
  registerServeCommand(root, ctx);
  registerInitCommand(root, ctx);
  registerDaemonCommands(root, ctx.io, ctx.result);
  registerDoctorCommand(root, ctx);
  registerStatuslineCommand(root, ctx);
}
