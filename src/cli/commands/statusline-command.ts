/** `reins statusline`: the line of Claude Code's `statusLine` command (docs/statusline.md). */
import type { Command } from "commander";
import type { AgentContext } from "../context.js";

/** Registers `reins statusline`; its module is loaded only when the command runs. */
export function registerStatuslineCommand(root: Command, ctx: AgentContext): void {
  const { io } = ctx;
  root
    .command("statusline")
    .description(
      "one line for Claude Code's statusLine: the session's spend against its budget, the breaker, the run's task, containment (Claude's JSON on stdin)",
    )
    .option(
      "--compose <base64>",
      "run this status line command first (base64, as `reins init claude --statusline compose` writes it) and append reins' part",
    )
    .action(async (opts: { compose?: string }) => {
      const { statusline } = await import("../statusline.js");
      const raw = (await io.stdin()).toString("utf8");
      const compose =
        opts.compose !== undefined ? Buffer.from(opts.compose, "base64").toString("utf8") : undefined;
      io.stdout(`${await statusline(raw, io.env, io.cwd, compose)}\n`);
    });
}
