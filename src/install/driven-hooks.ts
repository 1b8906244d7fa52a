/**
 * reins' own hooks and MCP tools for the agents a run drives, so every guard applies inside each iteration
 * and the agent can verify its work: Claude Code gets them through `--settings` and `--mcp-config`, Codex
 * its hooks through a Codex home of the run's own (codex-home.ts) and its MCP server through `-c`
 * overrides, and Gemini CLI both through a Gemini home of the run's own, without touching the project's
 * files or the user's.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { daemonName } from "../guard/daemon/paths.js";
import { initAgent, isReinsHook, readSettings } from "./agent-hooks.js";
import { hookSecret } from "../base/config/hook-secret.js";
import { claudeMcpEntry, codexMcpEntry, geminiMcpEntry, MCP_NAME } from "./mcp.js";
import { reinsDir } from "../base/config/reins-dir.js";

/**
 * Whether an agent's hook settings file of the project already runs reins' hooks for `agent` (then they
 * apply as they are, and the run adds none: each call would be judged twice).
 */
export function hasReinsHooks(path: string, agent: string): boolean {
  if (!existsSync(path)) return false;
  const hooks = readSettings(path).hooks ?? {};
  return Object.values(hooks).some((groups) =>
    // Copilot CLI's hooks file lists the entries themselves, not groups of them.
    (groups ?? []).some((g) => (g.hooks ?? [g]).some((h) => isReinsHook(h, agent))),
  );
}

/**
 * How the hooks a run installs reach reins (see `initAgent`): command hooks through the client `reins init`
 * compiled, when there is one, to the user's hook daemon (the first call starts it); otherwise the shell
 * client, which answers in-process without curl. Makes sure the project's hook secret exists.
 */
export function drivenHookOptions(
  root: string,
  bin: string,
): Omit<Parameters<typeof initAgent>[1], "settingsPath"> {
  const compiled = join(root, ".reins", "bin", "reins-hook");
  hookSecret(root);
  return {
    bin,
    mode: "client",
    daemon: daemonName(bin),
    ...(existsSync(compiled) ? { client: compiled } : {}),
  };
}

/**
 * The extra arguments that give a driven Claude Code reins' hooks and tools: `--settings <file>` with command
 * hooks through the user's hook daemon, unless the project's own settings already have them, and
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
  if (own.some((path) => hasReinsHooks(path, "claude"))) return mcp;
  const settingsPath = join(dir, "claude-settings.json");
  initAgent("claude", { settingsPath, ...drivenHookOptions(root, bin) });
  return ["--settings", settingsPath, ...mcp];
}

/**
 * The extra arguments that give a driven Codex reins' MCP server on `plan`, as `-c` overrides of its
 * configuration (TOML values; a JSON string, number, boolean or array of strings is one). The project's own
 * `.codex/config.toml` is left as it is.
 */
export function codexRunArgs(bin: string, plan?: string): string[] {
  const entry = codexMcpEntry(bin, plan !== undefined ? [plan] : []);
  return Object.entries(entry).flatMap(([key, value]) => [
    "-c",
    `mcp_servers.${MCP_NAME}.${key}=${JSON.stringify(value)}`,
  ]);
}

/**
 * The environment that gives a driven Gemini CLI reins' hooks and its MCP server on `plan`. Gemini reads
 * both from settings files only (a system settings file is refused under a folder others may write, such as
 * /tmp), so the run gets its own Gemini home, `GEMINI_CLI_HOME=.reins/run-hooks/gemini-home`: its
 * `.gemini/settings.json` is the user's with reins' server added, and reins' hooks as `reins init gemini`
 * writes them unless the project's own `.gemini/settings.json` has them; every other entry of the user's
 * `.gemini` folder (credentials, trusted folders, chats) is a link to the user's own. The user's files are
 * never written. The same home made again gives the same files.
 */
export function geminiRunEnv(
  root: string,
  bin: string,
  plan: string | undefined,
  userHome: string,
): Record<string, string> {
  const home = join(reinsDir(root), "run-hooks", "gemini-home");
  const dir = join(home, ".gemini");
  const user = join(userHome, ".gemini");
  rmSync(home, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const entries = existsSync(user) ? readdirSync(user) : [];
  for (const name of entries) if (name !== "settings.json") symlinkSync(join(user, name), join(dir, name));
  const settings = readSettings(join(user, "settings.json")) as Record<string, unknown>;
  const servers = isRecord(settings.mcpServers) ? settings.mcpServers : {};
  const server = geminiMcpEntry(bin, plan !== undefined ? [plan] : []);
  const merged = { ...settings, mcpServers: { ...servers, [MCP_NAME]: server } };
  const settingsPath = join(dir, "settings.json");
  writeFileSync(settingsPath, `${JSON.stringify(merged, null, 2)}\n`);
  if (!hasReinsHooks(join(root, ".gemini", "settings.json"), "gemini"))
    initAgent("gemini", { settingsPath, ...drivenHookOptions(root, bin) });
  return { GEMINI_CLI_HOME: home };
}

/**
 * The environment that gives a driven Copilot CLI reins' hooks: a Copilot home of the run's own,
 * `COPILOT_HOME=.reins/run-hooks/copilot-home`, whose every entry is a link to the user's own (`userHome`,
 * their `COPILOT_HOME`: login, settings, sessions, the session store) but `hooks/`, which holds links to the
 * user's hook files and reins' `reins.json` as `reins init copilot` writes it, unless the project's own
 * `.github/hooks/reins.json` has reins' hooks. The user's files are never written.
 */
export function copilotRunEnv(root: string, bin: string, userHome: string): Record<string, string> {
  const home = join(reinsDir(root), "run-hooks", "copilot-home");
  // What Copilot made in the run's home (its session store, when the user had none) stays for a resumed run.
  rmSync(join(home, "hooks"), { recursive: true, force: true });
  mkdirSync(join(home, "hooks"), { recursive: true });
  const entries = existsSync(userHome) ? readdirSync(userHome) : [];
  for (const name of entries)
    if (name !== "hooks" && !existsSync(join(home, name)))
      symlinkSync(join(userHome, name), join(home, name));
  const hooks = join(userHome, "hooks");
  for (const name of existsSync(hooks) ? readdirSync(hooks) : [])
    if (name !== "reins.json") symlinkSync(join(hooks, name), join(home, "hooks", name));
  if (!hasReinsHooks(join(root, ".github", "hooks", "reins.json"), "copilot"))
    initAgent("copilot", {
      settingsPath: join(home, "hooks", "reins.json"),
      ...drivenHookOptions(root, bin),
    });
  return { COPILOT_HOME: home };
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
