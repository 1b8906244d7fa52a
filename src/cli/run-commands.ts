/** `reins run` and `reins report`: drive an agent over a plan until done is proven, and read the evidence. */
import type { Command } from "commander";
import type { RunContext } from "./run-setup.js";
import { registerPlanCommand } from "./commands/plan-command.js";
import { registerReportCommand } from "./commands/report-command.js";
import { registerRunCommand } from "./commands/run-command.js";

export type { RunContext } from "./run-setup.js";
export { PLAN_FILES, findPlan } from "./run-setup.js";

/** Registers `run`, `plan` and `report`. */
export function registerRunCommands(root: Command, ctx: RunContext): void {
  registerRunCommand(root, ctx);
  registerPlanCommand(root, ctx);
  registerReportCommand(root, ctx);
}
