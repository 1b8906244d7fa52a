/** `reins doctor`: checks each agent's hooks, the daemon and the store. */
import { homedir } from "node:os";
import type { Command } from "commander";
import { ReinsError } from "../../base/core/errors.js";
import { findRoot } from "../../base/config/load-policy.js";
import { doctor, formatDoctor } from "../doctor.js";
import type { AgentContext } from "../context.js";

/** `reins doctor`: exit 1 when an installed agent is not guarded. */
export function registerDoctorCommand(root: Command, ctx: AgentContext): void {
  const { io, result } = ctx;
  root
    .command("doctor")
    .description(
      "check each agent's hooks (installed, trusted where the agent asks for it), the daemon and the store; exit 1 when an installed agent is not guarded",
    )
    .option("--json", "machine-readable output")
    .option(
      "--port <port>",
      "the port of the project's server, for --http hooks (default: the port they name)",
    )
    .action(async (opts: { json?: boolean; port?: string }) => {
      const port = opts.port !== undefined ? Number(opts.port) : undefined;
      if (port !== undefined && (!Number.isInteger(port) || port <= 0 || port > 65535))
        throw new ReinsError("usage", `--port must be 1..65535, got "${opts.port}"`);
      const global = root.opts<{ cwd: string; policy?: string; store?: string }>();
      const report = await doctor({
        root: findRoot(global.cwd),
        home: io.env.HOME ?? homedir(),
        env: io.env,
        ...(port !== undefined ? { port } : {}),
        ...(global.policy !== undefined ? { policyFile: global.policy } : {}),
        ...(global.store !== undefined ? { storeSpec: global.store } : {}),
      });
      io.stdout(opts.json === true ? `${JSON.stringify(report, null, 2)}\n` : formatDoctor(report));
      if (!report.ok) result.code = 1;
    });
}
