/** `reins config`: the effective policy and where each value came from. */
import type { Command } from "commander";
import { describePolicy } from "../../base/config/load-policy.js";
import { table } from "../../base/text/table.js";
import { EXIT } from "../exit-codes.js";
import type { AgentContext } from "../context.js";
import { counted } from "../../base/text/plural.js";

/** Registers `reins config`: exit 2 when the config has problems (the policy shown is what reins guards with). */
export function registerConfigCommand(root: Command, ctx: AgentContext): void {
  const { io } = ctx;
  const policyOf = () => ctx.loaded();
  root
    .command("config")
    .description("print the effective policy and where each value came from")
    .option("--json", "print the policy as JSON")
    .action((opts: { json?: boolean }) => {
      // The config's problems, if any, went to stderr as the policy loaded: one line each.
      const loaded = policyOf();
      // A config with problems is an input error (exit 2), though reins guards with it all the same.
      if (loaded.problems.length > 0) ctx.result.code = EXIT.usage;
      if (opts.json === true) {
        const { policy, file, sources, problems } = loaded;
        io.stdout(`${JSON.stringify({ policy, file, sources, problems }, null, 2)}\n`);
        return;
      }
      const problems =
        loaded.problems.length === 0
          ? ""
          : ` (${counted(loaded.problems.length, "problem")}, said above: reins guards with the defaults for them)`;
      io.stdout(`policy file: ${loaded.file ?? "none (defaults)"}${problems}\n\n`);
      io.stdout(table(["field", "value", "source"], describePolicy(loaded)));
    });
}
