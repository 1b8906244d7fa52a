/** `reins mcp`: reins' tools for any MCP-capable agent, on stdio. */
import type { Command } from "commander";
import { planSource } from "../../run/mcp/plan-view.js";
import { planPolicy } from "../../run/mcp/ledger.js";
import { serveStdio } from "../../run/mcp/server.js";
import { openStore } from "../../base/store/open.js";
import type { Io } from "../io.js";
import type { LoadedPolicy } from "../../base/config/load-policy.js";
import { findPlan, PLAN_FILES } from "../run-setup.js";

/** What the mcp command needs from the program. */
export interface McpCommandContext {
  io: Io;
  loaded(): LoadedPolicy & { storeSpec: string };
}

/** Registers `mcp`. */
export function registerMcpCommands(root: Command, ctx: McpCommandContext): void {
  root
    .command("mcp")
    .description(
      "serve reins' MCP tools on stdio (read_spec, list_tasks, get_task, verify_*_completion, update_task_status); add it to an agent with `reins init <agent> --mcp`",
    )
    .argument("[plan]", `the plan (default: the first of ${PLAN_FILES.join(", ")})`)
    .action(async (planArg: string | undefined) => {
      const loaded = ctx.loaded();
      // A named plan that is missing is a mistake in the agent's configuration: say so at once. Without a
      // name the server starts anyway, and each tool says what is missing until a plan is written.
      if (planArg !== undefined) findPlan(loaded.root, ctx.io.cwd, planArg);
      const store = await openStore(loaded.storeSpec, loaded.root);
      const plan = planSource(() => findPlan(loaded.root, ctx.io.cwd, planArg));
      // Read now, not at the first call: what judges the work is the plan as the server started with it,
      // before an agent could edit it.
      try {
        plan();
      } catch {
        // no plan yet, or not a valid one: each tool says so
      }
      try {
        await serveStdio({
          root: loaded.root,
          store,
          policy: planPolicy(loaded.policy),
          plan,
        });
      } finally {
        await store.close();
      }
    });
}
