/** `reins init <agent>`: reins' hooks (or its MCP server) in an agent's settings, and out again. */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { ReinsError } from "../../base/core/errors.js";
import { REINS_BIN } from "../../base/config/package-info.js";
import { recordInstall } from "../../base/config/install-record.js";
import { clearFindings } from "../../base/config/store-marks.js";
import { daemonName } from "../../guard/daemon/paths.js";
import {
  INIT_AGENTS,
  initAgent,
  readSettings,
  reinsEntries,
  settingsPathOf,
  type InstallMode,
} from "../../install/agent-hooks.js";
import { NO_TRUST_ENV, trustAgentHooks } from "../../install/agent-trust.js";
import { buildClient } from "../../install/native-client.js";
import { daemonHttpHooks } from "../../install/daemon-http.js";
import { containClaude, uncontainClaude } from "../../install/claude-sandbox.js";
import { containClaudeUser, uncontainClaudeUser } from "../../install/claude-user-sandbox.js";
import { installStatusline, type StatuslineMode } from "../../install/claude-statusline.js";
import { stateDir } from "../../base/config/user-dirs.js";
import { containmentOf, notContainedLine } from "../../base/config/boundary.js";
import { missingDirs, noteWritten, releaseWritten } from "../../base/config/local-files.js";
import { installMcp, mcpConfigPath } from "../../install/mcp.js";
import { qwenSettingsTidy } from "../../install/qwen-settings.js";
import { DEFAULT_HOST, DEFAULT_PORT } from "../../server/server-process.js";
import { hookSecret } from "../../base/config/hook-secret.js";
import type { AgentContext } from "../context.js";
import { initPlugin } from "./init-plugin.js";
import { PLUGIN_AGENTS, isPluginAgent } from "../../install/opencode-plugin.js";

/** The C source of the hook client, shipped with the package. */
const CLIENT_SOURCE = fileURLToPath(new URL("../../../src/client/reins-hook.c", import.meta.url));

interface InitOptions {
  user?: boolean;
  uninstall?: boolean;
  inProcess?: boolean;
  http?: boolean;
  port?: string;
  trust: boolean;
  mcp?: boolean;
  contain: boolean;
  statusline: string;
}

/** Where a `--user` install keeps its compiled client: `$XDG_DATA_HOME/reins/bin`, else `~/.local/share/reins/bin`. */
function userClientDir(env: NodeJS.ProcessEnv, home: string): string {
  const data = env.XDG_DATA_HOME;
  return join(data !== undefined && data !== "" ? data : join(home, ".local", "share"), "reins");
}

/** Registers `reins init`. */
export function registerInitCommand(root: Command, ctx: AgentContext): void {
  root
    .command("init")
    .description("install reins' hooks into an agent's settings (merging with the user's own hooks)")
    .argument("<agent>", [...INIT_AGENTS, ...PLUGIN_AGENTS].join(", "))
    .option("--user", "the user's settings in the home folder instead of the project's")
    .option("--uninstall", "remove exactly the hooks reins added")
    .option(
      "--in-process",
      "command hooks that start Node and answer in-process on every call (slow: no daemon needed)",
    )
    .option(
      "--http",
      "claude: native http hooks to this project's own `reins serve` on a fixed --port (only for a port that is yours alone)",
    )
    .option("--port <port>", `with --http: the port of the project's server (default ${DEFAULT_PORT})`)
    .option(
      "--no-trust",
      `codex, gemini: leave the agent's own trust settings alone and print what to add (also ${NO_TRUST_ENV}=1)`,
    )
    .option(
      "--no-contain",
      "claude: leave Claude Code's sandbox as it is (reins then says at every session start that it is not contained)",
    )
    .option(
      "--statusline <mode>",
      "claude: reins' status line: auto (unless you show one of your own), compose (yours first, then reins'), off",
      "auto",
    )
    .option(
      "--mcp",
      "add reins' MCP server (`reins mcp`) to the agent's MCP configuration instead of the hooks",
    )
    // Without an agent: commander's line, then the agents reins init knows (read from the registry).
    .configureOutput({
      outputError: (text, write) =>
        write(
          text.includes("missing required argument")
            ? `${text}reins init knows ${INIT_AGENTS.join(", ")}: e.g. \`reins init ${INIT_AGENTS[0] ?? "claude"}\`\n`
            : text,
        ),
    })
    .action((agent: string, opts: InitOptions) => {
      if (opts.mcp === true) initMcp(ctx, agent, opts);
      else if (isPluginAgent(agent)) initPlugin(ctx, agent, opts);
      else initHooks(ctx, agent, opts);
    });
}

/** `init <agent>`: reins' hooks in the agent's settings (or out of them), and the trust the agent needs to run them. */
function initHooks(ctx: AgentContext, agent: string, opts: InitOptions): void {
  const { io, result } = ctx;
  if (opts.port !== undefined && opts.http !== true)
    throw new ReinsError(
      "usage",
      "--port is for --http: the hooks otherwise reach the user's hook daemon, which needs no port",
    );
  const port = Number(opts.port ?? DEFAULT_PORT);
  if (!Number.isInteger(port) || port <= 0 || port > 65535)
    throw new ReinsError("usage", `--port must be 1..65535, got "${opts.port}"`);
  if (opts.http === true && agent !== "claude")
    throw new ReinsError(
      "usage",
      "--http is for claude; codex, gemini and qwen reach the daemon through the client",
    );
  if (opts.http === true && (opts.inProcess === true || opts.user === true))
    throw new ReinsError("usage", "--http is for one project's settings: not with --in-process or --user");
  const loaded = ctx.loaded();
  const home = io.env.HOME ?? homedir();
  const user = opts.user === true;
  const uninstall = opts.uninstall === true;
  const mode: InstallMode = opts.inProcess === true ? "in-process" : opts.http === true ? "http" : "client";
  const http =
    mode === "http" && !uninstall
      ? { port, url: `http://${DEFAULT_HOST}:${port}/hooks/claude`, secret: hookSecret(loaded.root) }
      : undefined;
  let client: string | null = null;
  if (mode === "client" && !uninstall) {
    if (!user) hookSecret(loaded.root); // the client authenticates each call with it
    client = buildClient(user ? userClientDir(io.env, home) : join(loaded.root, ".reins"), CLIENT_SOURCE);
    if (client === null)
      io.stderr("reins: no C compiler found; the hooks use bin/reins-hook (sh + curl), which is slower\n");
  }
  // A project's hooks name this machine's paths (and, over http, the project's secret): Claude Code's go in
  // settings.local.json, its own convention for what is not shared. An install in one of Claude's files takes
  // reins' hooks out of the other, so Claude never runs both.
  const files =
    agent === "claude" && !user
      ? [
          settingsPathOf(agent, loaded.root, home, false, true),
          settingsPathOf(agent, loaded.root, home, false),
        ]
      : [settingsPathOf(agent, loaded.root, home, user, false, io.env)];
  const [target = "", ...others] = files;
  const existed = existsSync(target);
  const dirs = missingDirs(target);
  const before = readSettings(target);
  const said = [
    initAgent(agent, {
      settingsPath: target,
      bin: REINS_BIN,
      mode,
      ...(uninstall ? { uninstall: true } : { daemon: daemonName(REINS_BIN) }),
      ...(http !== undefined ? { http } : {}),
      ...(client !== null ? { client } : {}),
      ...(user ? { user: true } : {}),
      // Claude Code's tool-call hooks post to the daemon's loopback port: no process start per call.
      ...(mode === "client" && agent === "claude" && !user && !uninstall
        ? { daemonHttp: daemonHttpHooks(io.env, loaded.root, REINS_BIN) }
        : {}),
    }),
  ];
  // The boundary: Claude Code's own sandbox keeps the agent's commands and file tools off reins' judges.
  if (agent === "claude" && !user) {
    if (uninstall) said.push(...uncontainClaude(target, loaded.root));
    else if (opts.contain) said.push(...containClaude(target, loaded.root, io.env, REINS_BIN));
    else
      said.push(
        "not contained (--no-contain): reins cannot keep Claude Code from switching it off; every session start says so",
      );
  } else if (agent === "claude") {
    if (uninstall) said.push(...uncontainClaudeUser(target, io.env));
    else if (opts.contain)
      said.push(...containClaudeUser(target, io.env, home, REINS_BIN, userClientDir(io.env, home)));
    else said.push("not contained (--no-contain): every session start says so");
  } else if (!uninstall) {
    const containment = containmentOf(agent, loaded.root, io.env, REINS_BIN);
    if (!containment.contained) said.push(notContainedLine(containment).replace(/^reins: /, ""));
  }
  if (agent === "claude")
    said.push(...claudeStatusline(io.env, loaded.root, home, target, user, uninstall, opts));
  for (const other of others) {
    if (!existsSync(other)) continue;
    const removed = initAgent(agent, { settingsPath: other, bin: REINS_BIN, uninstall: true });
    if (removed.startsWith("removed")) said.push(removed);
    if (!user) said.push(...releaseWritten(loaded.root, other));
  }
  // Qwen Code rewrites the file it reads and keeps the old text as `.orig` (see qwenSettingsTidy).
  if (agent === "qwen" && !user) said.push(...qwenSettingsTidy(loaded.root, target, REINS_BIN, uninstall));
  if (!user) {
    said.push(
      ...(uninstall ? releaseWritten(loaded.root, target) : noteWritten(loaded.root, target, !existed, dirs)),
    );
    recordProjectInstall(io.env, loaded.root, agent, target, uninstall);
  }
  // Codex and Gemini CLI run no hook of a project they do not trust, and say nothing about it.
  const trust = trustAgentHooks(agent, {
    root: loaded.root,
    home,
    env: io.env,
    settingsPath: target,
    before,
    user,
    uninstall,
    write: opts.trust && !["1", "true"].includes(io.env[NO_TRUST_ENV] ?? ""),
  });
  io.stdout(`${[...said, ...(trust.failed ? [] : trust.said)].join("\n")}\n`);
  if (trust.failed) {
    io.stderr(`${trust.said.map((line) => `reins: ${line}`).join("\n")}\n`);
    result.code = 1;
  }
}

/** Reins' status line in the settings file `target` (docs/statusline.md), or out of it again. */
function claudeStatusline(
  env: NodeJS.ProcessEnv,
  root: string,
  home: string,
  target: string,
  user: boolean,
  uninstall: boolean,
  opts: InitOptions,
): string[] {
  const userFile = join(home, ".claude", "settings.json");
  return installStatusline({
    target,
    others: user ? [] : [join(root, ".claude", "settings.json"), userFile],
    record: user
      ? join(stateDir(env), "claude-user-statusline.json")
      : join(root, ".reins", "claude-statusline.json"),
    bin: REINS_BIN,
    mode: opts.statusline as StatuslineMode,
    uninstall,
  });
}

/**
 * Records what was installed outside the project (docs/tamper-detection.md), where the turn's tamper check
 * and `reins doctor` compare the settings with it; a person setting reins up again clears what was found.
 */
function recordProjectInstall(
  env: NodeJS.ProcessEnv,
  root: string,
  agent: string,
  target: string,
  uninstall: boolean,
): void {
  recordInstall(root, env, agent, target, uninstall ? new Map() : reinsEntries(target, agent), Date.now());
  clearFindings(root, env);
}

/** `init <agent> --mcp`: the MCP server in the agent's configuration, and the trust the agent needs to read it. */
function initMcp(ctx: AgentContext, agent: string, opts: InitOptions): void {
  const { io, result } = ctx;
  if (opts.http === true || opts.inProcess === true || opts.port !== undefined)
    throw new ReinsError("usage", "--http, --port and --in-process are for hooks, not --mcp");
  const loaded = ctx.loaded();
  const home = io.env.HOME ?? homedir();
  const user = opts.user === true;
  const uninstall = opts.uninstall === true;
  const path = mcpConfigPath(agent, loaded.root, home, user, io.env);
  const existed = existsSync(path);
  const dirs = missingDirs(path);
  // Claude Code's approval of the server goes in its settings.local.json.
  const approval = agent === "claude" && !user ? settingsPathOf(agent, loaded.root, home, false, true) : null;
  const approvalExisted = approval !== null && existsSync(approval);
  const approvalDirs = approval !== null ? missingDirs(approval) : [];
  const said = installMcp(agent, { root: loaded.root, home, env: io.env, bin: REINS_BIN, user, uninstall });
  // The server's entry names this machine's Node and reins.
  if (!user) {
    const written: [string, boolean, string[]][] = [[path, !existed, dirs]];
    if (approval !== null) written.push([approval, !approvalExisted, approvalDirs]);
    for (const [file, created, made] of written)
      said.push(
        ...(uninstall ? releaseWritten(loaded.root, file) : noteWritten(loaded.root, file, created, made)),
      );
  }
  // Codex and Gemini CLI read a project's configuration only in a project they trust. Removing the server
  // leaves the trust alone: reins' hooks may still need it (`reins init <agent> --uninstall` removes it).
  let failed = false;
  if (!user && !uninstall && agent !== "claude") {
    const hooks = settingsPathOf(agent, loaded.root, home, false, false, io.env);
    const trust = trustAgentHooks(agent, {
      root: loaded.root,
      home,
      env: io.env,
      settingsPath: hooks,
      before: readSettings(hooks),
      user: false,
      uninstall: false,
      write: opts.trust && !["1", "true"].includes(io.env[NO_TRUST_ENV] ?? ""),
    });
    failed = trust.failed;
    if (failed) io.stderr(`${trust.said.map((line) => `reins: ${line}`).join("\n")}\n`);
    else {
      // The trust lines speak of hooks; here it is the configuration the server is in that needs it.
      const file = agent === "codex" ? ".codex/config.toml" : ".gemini/settings.json";
      const name = agent === "codex" ? "Codex" : "Gemini CLI";
      said.push(
        trust.said.some((line) => line.includes("already trusts"))
          ? `${name} already trusts this project, so it reads its ${file}`
          : `trusted this project for ${name}, which reads a project's ${file} only when it trusts the project`,
      );
    }
  }
  io.stdout(`${said.join("\n")}\n`);
  if (failed) result.code = 1;
}
