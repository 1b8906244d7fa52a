/** `reins config`: the effective policy and where each value came from. */
import type { Command } from "commander";
import { describePolicy } from "../../config/load-policy.js";
import { table } from "../table.js";
import type { AgentContext } from "../context.js";

/** Registers `reins config`. */
export function registerConfigCommand(root: Command, ctx: AgentContext): void {
  const { io } = ctx;
  const policyOf = () => ctx.loaded();
  root
    .command("config")
    .description("print the effective policy and where each value came from")
    .option("--json", "print the policy as JSON")
    .action((opts: { json?: boolean }) => {
      const loaded = policyOf();
      if (opts.json === true) {
        io.stdout(
          `${JSON.stringify({ policy: loaded.policy, file: loaded.file, sources: loaded.sources }, null, 2)}\n`,
        );
        return;
      }
      io.stdout(`policy file: ${loaded.file ?? "none (defaults)"}\n\n`);
      io.stdout(table(["field", "value", "source"], describePolicy(loaded)));
    });
}
