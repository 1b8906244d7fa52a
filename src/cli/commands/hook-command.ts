/** `reins hook`: answers one agent hook call, and starts the user's hook daemon or the project's server when asked. */
import { opensTurn } from "../../guard/hooks/hook-events.js";
import { awaitDaemon, recordUnproven, startDaemonFor } from "../../guard/daemon/start.js";
import type { Command } from "commander";
import { ENSURE_DAEMON } from "../../install/agent-hooks.js";
import { AGENTS } from "../../guard/hooks/hook-agents.js";
import { runHook } from "../../guard/hooks/hook-call.js";
import { DEFAULT_HOST, DEFAULT_PORT, ensureServer } from "../../server/server-process.js";
import { findRoot } from "../../base/config/load-policy.js";
import type { AgentContext } from "../context.js";
import { binPath } from "./bin-path.js";

/** A string field of a hook input, if it is JSON with one. */
function hookField(raw: Buffer, field: string): string | undefined {
  try {
    const value = (JSON.parse(raw.toString()) as Record<string, unknown>)[field];
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

const hookCwd = (raw: Buffer) => hookField(raw, "cwd");
const hookEvent = (raw: Buffer) => hookField(raw, "hook_event_name");

/** Adds a line to a Claude Code reply's additional context (or makes a reply that carries it). */
function withContext(reply: object | null, note: string): object {
  const r = (reply ?? {}) as { hookSpecificOutput?: { additionalContext?: string } };
  const specific = r.hookSpecificOutput;
  if (specific === undefined) return { ...r, systemMessage: note };
  return {
    ...r,
    hookSpecificOutput: {
      ...specific,
      additionalContext: [specific.additionalContext, note].filter(Boolean).join("\n"),
    },
  };
}

/** `reins hook <agent>`: the event JSON on stdin, the agent's reply on stdout. */
interface HookOptions {
  /** `--ensure-daemon`: the flag's name (kept, hooks written by older installs pass it) for ensuring the project's server. */
  ensureDaemon?: boolean;
  port: string;
  startDaemon?: string;
  unproven?: string;
}

export function registerHookCommand(root: Command, ctx: AgentContext): void {
  const { io } = ctx;
  root
    .command("hook")
    .description(
      "answer one agent hook call: the event JSON on stdin, the agent's reply on stdout (always exit 0)",
    )
    .argument("<agent>", `the agent: ${AGENTS.join(", ")}`)
    .option(
      ENSURE_DAEMON,
      "also start the daemon when it is not running, and tell the agent when it was down",
    )
    .option("--port <port>", "the daemon's port", String(DEFAULT_PORT))
    .option(
      "--start-daemon <name>",
      "also start the user's hook daemon of that name (what the hook clients ask when none answered)",
    )
    .option(
      "--unproven <name>",
      "as --start-daemon, when something answered on that daemon's socket without its proof (recorded as tampering)",
    )
    .action(async (agent: string, opts: HookOptions) => {
      const cwd = root.opts<{ cwd: string }>().cwd;
      const raw = await io.stdin();
      const result = await runHook(agent, raw, io.env, cwd);
      if (opts.unproven !== undefined) recordUnproven(opts.unproven, io.env);
      const start = opts.startDaemon ?? opts.unproven;
      if (start !== undefined && result.root !== undefined) {
        startDaemonFor(result.root, { bin: binPath(), name: start, env: io.env });
        // Claude Code's tool calls post to the daemon's port: its turn's start waits for the daemon.
        if (agent === "claude" && opensTurn(raw)) await awaitDaemon(start, io.env, 5_000);
      }
      let reply = result.reply;
      if (opts.ensureDaemon === true) {
        const state = await ensureServer({
          root: findRoot(hookCwd(raw) ?? cwd),
          bin: binPath(),
          host: DEFAULT_HOST,
          port: Number(opts.port),
        });
        if (state !== "running" && !(state === "started" && hookEvent(raw) === "SessionStart")) {
          const note =
            state === "started"
              ? "reins: the reins daemon was not running, so tool calls since it stopped were not guarded; it has been restarted."
              : `reins: the reins daemon ${state === "port taken" ? `could not start: port ${opts.port} is taken by another program or project` : "could not be started"}; tool calls are NOT guarded (see .reins/serve.log).`;
          io.stderr(`${note}\n`);
          reply = withContext(reply, note);
        }
      }
      if (reply !== null) io.stdout(`${JSON.stringify(reply)}\n`);
      if (result.warning !== "") io.stderr(`${result.warning}\n`);
    });
}
