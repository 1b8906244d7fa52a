/**
 * reins' own hooks and MCP tools for the agents a run drives, so every guard applies inside each iteration
 * and the agent can verify its work: Claude Code gets them through `--settings` and `--mcp-config`, without
 * touching the project's files.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { initAgent, isReinsHook, readSettings } from "../hooks/init.js";
import { claudeMcpEntry, MCP_NAME } from "../mcp/install.js";
import { reinsDir } from "../shell/reins-dir.js";

/** Whether a Claude Code settings file of the project already runs reins' hooks (then they apply as they are). */
function hasReinsHooks(path: string): boolean {
  if (!existsSync(path)) return false;
  const hooks = readSettings(path).hooks ?? {};
  return Object.values(hooks).some((groups) =>
    (groups ?? []).some((g) => (g.hooks ?? []).some((h) => isReinsHook(h, "claude"))),
  );
}

/**
 * The extra arguments that give a driven Claude Code reins' hooks and tools: `--settings <file>` with command
 * hooks answered in-process (no daemon needed), unless the project's own settings already have them, and
 * `--mcp-config <file>` with reins' MCP server on `plan` (its tools in the first request: `alwaysLoad`).
 */
export function claudeRunArgs(root: string, bin: string, plan?: string): string[] {
  const dir = join(reinsDir(root), "run-hooks");
  mkdirSync(dir, { recursive: true });
  const mcpPath = join(dir, "claude-mcp.json");
  const server = claudeMcpEntry(bin, plan !== undefined ? [plan] : []);
  writeFileSync(mcpPath, `${JSON.stringify({ mcpServers: { [MCP_NAME]: server } }, null, 2)}\n`);
  const mcp = ["--mcp-config", mcpPath];
  const own = [join(root, ".claude", "settings.json"), join(root, ".claude", "settings.local.json")];
  if (own.some(hasReinsHooks)) return mcp;
  const settingsPath = join(dir, "claude-settings.json");
  initAgent("claude", { settingsPath, bin, port: 0, mode: "in-process" });
  return ["--settings", settingsPath, ...mcp];
}
