/** `reins budget extend` and `reins budget reset`: a person gives a scope more budget or starts it from zero. */
import type { Command } from "commander";
import { ReinsError } from "../../base/core/errors.js";
import type { BudgetResource } from "../../base/core/reins-event.js";
import { type StoreContext, RESOURCE_NAMES, EXTEND_USAGE, listed, actor, act } from "../store-access.js";
import { claimOf, withPersonToken } from "../person-proof.js";

/** Registers `reins budget`. */
export function registerBudgetCommand(root: Command, ctx: StoreContext): void {
  const budget = root.command("budget").description("extend or reset a budget");
  withPersonToken(
    budget
      .command("extend")
      .description("give a scope more budget (un-pauses it when it is enough)")
      .usage(EXTEND_USAGE)
      // Checked in the action rather than by commander, which would name only the first thing missing
      // (and --reason before the arguments).
      .argument("[scope]")
      .argument("[amount]", "how much to add, in the resource's unit (tokens, USD, ms, calls)")
      .option("--reason <text>", "why (required; recorded with who did it)")
      .option("--resource <name>", `one of ${RESOURCE_NAMES.join(", ")}`, "tokens")
      .option("--task", "extend the scope's current task instead of the session")
      .option("--by <name>", "who extends it (default: the OS user)"),
  ).action(
    async (
      scope: string | undefined,
      raw: string | undefined,
      opts: { reason?: string; resource: string; task?: boolean; by?: string; token?: string },
    ) => {
      const missing = [
        ...(scope === undefined ? ["a scope"] : []),
        ...(raw === undefined ? ["an amount"] : []),
        ...(opts.reason === undefined ? ["a reason (--reason)"] : []),
      ];
      if (scope === undefined || raw === undefined || opts.reason === undefined)
        throw new ReinsError(
          "usage",
          `budget extend needs ${listed(missing)}: reins budget extend ${EXTEND_USAGE}`,
        );
      const amountValue = Number(raw);
      if (!Number.isFinite(amountValue) || amountValue <= 0)
        throw new ReinsError("usage", `amount must be a positive number, got "${raw}"`);
      if (!RESOURCE_NAMES.includes(opts.resource as BudgetResource)) {
        throw new ReinsError(
          "usage",
          `--resource must be one of ${RESOURCE_NAMES.join(", ")}, got "${opts.resource}"`,
        );
      }
      if (opts.reason.trim() === "") throw new ReinsError("usage", "--reason must not be empty");
      await act(
        ctx,
        claimOf("budget extend", opts.token, ctx.io.env),
        scope,
        {
          kind: "human.budget_extended",
          resource: opts.resource as BudgetResource,
          amount: amountValue,
          meter: opts.task === true ? "task" : "session",
          by: actor(opts.by),
          reason: opts.reason,
        },
        `extended by ${raw} ${opts.resource}`,
      );
    },
  );
  withPersonToken(
    budget
      .command("reset")
      .description("start a scope's budget from zero")
      .argument("<scope>")
      .requiredOption("--reason <text>", "why")
      .option("--by <name>", "who resets it"),
  ).action(async (scope: string, opts: { reason: string; by?: string; token?: string }) => {
    await act(
      ctx,
      claimOf("budget reset", opts.token, ctx.io.env),
      scope,
      { kind: "human.budget_reset", by: actor(opts.by), reason: opts.reason },
      "budget reset",
    );
  });
}
