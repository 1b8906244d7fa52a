/** The CLI commands on stored state: status, sessions, budget, circuit, confirm, alerts and export. */
import type { Command } from "commander";
import type { StoreContext } from "./store-access.js";
import { registerAlertsCommand } from "./commands/alerts-command.js";
import { registerBudgetCommand } from "./commands/budget-command.js";
import { registerCircuitCommand } from "./commands/circuit-command.js";
import { registerConfirmCommand } from "./commands/confirm-command.js";
import { registerExportCommand } from "./commands/export-command.js";
import { registerSessionsCommand } from "./commands/sessions-command.js";
import { registerStatusCommand } from "./commands/status-command.js";

export type { StoreContext } from "./store-access.js";
export { actor } from "./store-access.js";

/** `status`, `sessions`, `budget`, `circuit`, `confirm`, `alerts` and `export`: looking at and acting on stored state. */
export function registerStoreCommands(root: Command, ctx: StoreContext): void {
  registerStatusCommand(root, ctx);
  registerSessionsCommand(root, ctx);
  registerBudgetCommand(root, ctx);
  registerCircuitCommand(root, ctx);
  registerConfirmCommand(root, ctx);
  registerAlertsCommand(root, ctx);
  registerExportCommand(root, ctx);
}
