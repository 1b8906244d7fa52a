/**
 * `reins init <agent> --mcp`: adds reins' MCP server (`reins mcp`) to an agent's own MCP configuration,
 * merging with what is there (every other server and setting kept), idempotently; `--uninstall` removes
 * exactly the `reins` entry.
 * - Claude Code: `.mcp.json` in the project, `mcpServers.reins` with `"alwaysLoad": true` (without it Claude
 *   Code defers an MCP server's tools, and they are not in the first request), and `"reins"` in
 *   `enabledMcpjsonServers` of `.claude/settings.local.json`, so the project's server is approved.
 * - Codex CLI: `[mcp_servers.reins]` in the project's `.codex/config.toml` (read only in a trusted project)
 *   or `$CODEX_HOME/config.toml` with `--user`, with `default_tools_approval_mode = "approve"` (under
 *   `approval_policy = "never"` Codex fails an MCP call it would have to ask about), `tool_timeout_sec`, and
 *   `required = true`: without it `codex exec` sends its first request before the server has started, and
 *   the tools are missing from it.
 * - Gemini CLI: `mcpServers.reins` in `.gemini/settings.json` (the project's, read only in a trusted folder,
 *   or the user's), with `"trust": true` so a headless run calls the tools without a confirmation, and a
 *   `timeout` long enough for a verify.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { ReinsError } from "../base/core/errors.js";
import { readSettings } from "./agent-hooks.js";
import { codexHome } from "./trust.js";
import { tomlHeader } from "./toml-lines.js";
import { CODEX_PATH, codexMcpText, type CodexMcpEntry } from "./mcp-codex.js";

/**
 * How long an agent waits for one tool call, in seconds: a verify runs its scope's checks one after another
 * (each up to its own timeout), longer than the agents' defaults (Codex 60 s, Gemini CLI 10 min) allow.
 */
const VERIFY_TIMEOUT_S = 1800;

/** How long Codex waits for reins' server to start (a cold Node start on a loaded machine takes seconds). */
const STARTUP_TIMEOUT_S = 30;

/** The agents `--mcp` knows. */
export const MCP_AGENTS = ["claude", "codex", "gemini"] as const;

/** The name reins' server has in every agent's configuration. */
export const MCP_NAME = "reins";

/** The command that starts reins' MCP server: this Node running this reins (absolute paths, like the hooks). */
export function mcpCommand(bin: string, args: readonly string[] = []): { command: string; args: string[] } {
  return { command: process.execPath, args: [bin, "mcp", ...args] };
}

/** Claude Code's server entry: a stdio server whose tools are in the first request. */
export function claudeMcpEntry(bin: string, args: readonly string[] = []): Record<string, unknown> {
  return { type: "stdio", ...mcpCommand(bin, args), alwaysLoad: true };
}

/**
 * Codex's server entry: its tools approved, a verify's time allowed, and required, so Codex waits for the
 * server (up to `startup_timeout_sec`) before its first request, or fails saying so.
 */
export function codexMcpEntry(bin: string, args: readonly string[] = []): CodexMcpEntry {
  return {
    ...mcpCommand(bin, args),
    default_tools_approval_mode: "approve",
    tool_timeout_sec: VERIFY_TIMEOUT_S,
    startup_timeout_sec: STARTUP_TIMEOUT_S,
    required: true,
  };
}

/** Gemini CLI's server entry: trusted, so a headless run calls its tools without a confirmation. */
export function geminiMcpEntry(bin: string, args: readonly string[] = []): Record<string, unknown> {
  return { ...mcpCommand(bin, args), trust: true, timeout: VERIFY_TIMEOUT_S * 1000 };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Writes through a temporary file and a rename, so a reader sees the old file or the new one, whole. */
function writeFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(`${path}.reins-tmp`, text);
  renameSync(`${path}.reins-tmp`, path);
}

/** A JSON settings file as an object (`{}` when absent); a ReinsError naming the file when it is not one. */
function readJsonObject(path: string): Record<string, unknown> {
  return readSettings(path);
}

/** Sets (or with `value` undefined removes) `servers[name]` in a JSON file's `key` object; returns whether it changed. */
function editJsonServers(path: string, key: string, value: Record<string, unknown> | undefined): boolean {
  const doc = readJsonObject(path);
  const servers = doc[key] ?? {};
  if (!isObject(servers))
    throw new ReinsError("usage", `${path}: "${key}" must be an object; reins did not change it`);
  const current = Object.hasOwn(servers, MCP_NAME) ? servers[MCP_NAME] : undefined;
  if (isDeepStrictEqual(current, value)) return false;
  const next = { ...servers };
  if (value === undefined) delete next[MCP_NAME];
  else next[MCP_NAME] = value;
  if (Object.keys(next).length > 0) doc[key] = next;
  else delete doc[key];
  if (value === undefined && Object.keys(doc).length === 0) rmSync(path, { force: true });
  else writeFile(path, `${JSON.stringify(doc, null, 2)}\n`);
  return true;
}

/** Adds or removes `reins` in Claude Code's list of approved project servers; returns whether it changed. */
function editClaudeApproval(path: string, add: boolean): boolean {
  if (!add && !existsSync(path)) return false;
  const doc = readJsonObject(path);
  const list: unknown = doc.enabledMcpjsonServers ?? [];
  if (!Array.isArray(list))
    throw new ReinsError("usage", `${path}: "enabledMcpjsonServers" must be a list; reins did not change it`);
  if (list.includes(MCP_NAME) === add) return false;
  const names = list as unknown[];
  const next = add ? [...names, MCP_NAME] : names.filter((n) => n !== MCP_NAME);
  if (next.length > 0) doc.enabledMcpjsonServers = next;
  else delete doc.enabledMcpjsonServers;
  if (Object.keys(doc).length === 0) rmSync(path, { force: true });
  else writeFile(path, `${JSON.stringify(doc, null, 2)}\n`);
  return true;
}

/** Where an agent's MCP configuration lives. */
export function mcpConfigPath(
  agent: string,
  root: string,
  home: string,
  user: boolean,
  env: NodeJS.ProcessEnv,
): string {
  if (agent === "claude") {
    if (user)
      throw new ReinsError(
        "usage",
        "claude keeps user-wide MCP servers in its own state file: run `claude mcp add --scope user reins -- <reins> mcp`, or install into the project without --user",
      );
    return join(root, ".mcp.json");
  }
  if (agent === "codex") return join(user ? codexHome(env, home) : join(root, ".codex"), "config.toml");
  if (agent === "gemini") {
    const geminiHome = env.GEMINI_CLI_HOME;
    const base = user ? (geminiHome !== undefined && geminiHome !== "" ? geminiHome : home) : root;
    return join(base, ".gemini", "settings.json");
  }
  throw new ReinsError("usage", `reins init --mcp knows ${MCP_AGENTS.join(", ")}, not "${agent}"`);
}

/** Options of installMcp. */
export interface InstallMcpOptions {
  root: string;
  home: string;
  env: NodeJS.ProcessEnv;
  /** reins' bin script, which the agent runs as `node <bin> mcp`. */
  bin: string;
  /** The user's configuration in the home folder instead of the project's. @default false */
  user?: boolean;
  /** Remove reins' entry instead. @default false */
  uninstall?: boolean;
}

/**
 * Adds reins' MCP server to `agent`'s configuration (or removes it), and says what it did, one line per
 * file. The agents' own trust of a project (which Codex and Gemini CLI need to read a project's
 * configuration) is `reins init <agent>`'s business; the caller handles it.
 */
export function installMcp(agent: string, options: InstallMcpOptions): string[] {
  const user = options.user === true;
  const remove = options.uninstall === true;
  const path = mcpConfigPath(agent, options.root, options.home, user, options.env);
  const { command, args } = mcpCommand(options.bin);
  const said = (changed: boolean) =>
    remove
      ? changed
        ? `removed the reins MCP server from ${path}`
        : `no reins MCP server in ${path}`
      : changed
        ? `added the reins MCP server (reins mcp) to ${path}`
        : `the reins MCP server is already in ${path}`;

  if (agent === "claude") {
    const changed = editJsonServers(path, "mcpServers", remove ? undefined : claudeMcpEntry(options.bin));
    const local = join(options.root, ".claude", "settings.local.json");
    const approved = editClaudeApproval(local, !remove);
    return [
      said(changed),
      ...(approved
        ? [
            remove
              ? `removed "reins" from enabledMcpjsonServers in ${local}`
              : `approved it in ${local} (enabledMcpjsonServers), so Claude Code starts it without asking`,
          ]
        : []),
    ];
  }
  if (agent === "gemini")
    return [said(editJsonServers(path, "mcpServers", remove ? undefined : geminiMcpEntry(options.bin)))];

  const text = existsSync(path) ? readFileSync(path, "utf8") : "";
  let edited: ReturnType<typeof codexMcpText>;
  try {
    edited = codexMcpText(text, remove ? undefined : codexMcpEntry(options.bin));
  } catch (error) {
    throw new ReinsError(
      "usage",
      `reins cannot read ${path} (${(error as Error).message}); it did not change it`,
    );
  }
  if ("conflict" in edited)
    throw new ReinsError(
      "conflict",
      `reins did not change ${path}: ${edited.conflict}; ${remove ? "remove the reins server by hand" : `add by hand: ${tomlHeader(CODEX_PATH)} command = ${JSON.stringify(command)}, args = ${JSON.stringify(args)}, default_tools_approval_mode = "approve", required = true`}`,
    );
  if (edited.changed) {
    if (remove && edited.text.trim() === "") rmSync(path, { force: true });
    else writeFile(path, edited.text);
  }
  return [said(edited.changed)];
}
