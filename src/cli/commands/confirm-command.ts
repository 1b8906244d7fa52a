/** `reins confirm`: a person lets work go on where reins asked one. */
import type { Command } from "commander";
import { type StoreContext, actor, act } from "../store-access.js";
import { claimOf, withPersonToken } from "../person-proof.js";

/** Registers `reins confirm`. */
export function registerConfirmCommand(root: Command, ctx: StoreContext): void {
  withPersonToken(
    root
      .command("confirm")
      .description("let work go on where reins asked a person (churn intervention, halted task)")
      .argument("<scope>")
      .option("--reason <text>", "why")
      .option("--by <name>", "who confirms"),
  ).action(async (scope: string, opts: { reason?: string; by?: string; token?: string }) => {
    await act(
      ctx,
      claimOf("confirm", opts.token, ctx.io.env),
      scope,
      {
        kind: "human.confirmed",
        by: actor(opts.by),
        ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
      },
      "confirmed",
    );
  });
}
