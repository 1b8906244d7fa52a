/** `reins circuit ack` and `reins circuit reset`: a person acknowledges or closes a breaker. */
import type { Command } from "commander";
import { type StoreContext, actor, act } from "../store-access.js";
import { claimOf, withPersonToken } from "../person-proof.js";

/** Registers `reins circuit`. */
export function registerCircuitCommand(root: Command, ctx: StoreContext): void {
  const circuit = root.command("circuit").description("acknowledge or reset a circuit breaker");
  withPersonToken(
    circuit
      .command("ack")
      .description("acknowledge an open breaker: it turns half-open and lets one probe call through")
      .argument("<scope>")
      .option("--reason <text>", "why")
      .option("--by <name>", "who acknowledges"),
  ).action(async (scope: string, opts: { reason?: string; by?: string; token?: string }) => {
    await act(
      ctx,
      claimOf("circuit ack", opts.token, ctx.io.env),
      scope,
      {
        kind: "human.circuit_acknowledged",
        by: actor(opts.by),
        ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
      },
      "acknowledged",
    );
  });
  withPersonToken(
    circuit
      .command("reset")
      .description("close a breaker and clear its counters")
      .argument("<scope>")
      .option("--reason <text>", "why")
      .option("--by <name>", "who resets it"),
  ).action(async (scope: string, opts: { reason?: string; by?: string; token?: string }) => {
    await act(
      ctx,
      claimOf("circuit reset", opts.token, ctx.io.env),
      scope,
      {
        kind: "human.circuit_reset",
        by: actor(opts.by),
        ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
      },
      "breaker reset",
    );
  });
}
