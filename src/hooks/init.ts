import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ReinsError } from "../core/errors.js";

/** Per agent: the hook events reins answers (and whether they take a tool matcher), and the timeout unit. */
const AGENT_HOOKS: Record<string, { events: [string, boolean][]; timeout: number; file: string[] }> = {
  claude: {
    events: [
      ["SessionStart", false],
      ["UserPromptSubmit", false],
      ["PreToolUse", true],
      ["PostToolUse", true],
      ["PostToolUseFailure", true],
      ["Stop", false],
      ["SubagentStop", false],
      ["SessionEnd", false],
    ],
    timeout: 30,
    file: [".claude", "settings.json"],
  },
  codex: {
    events: [
      ["SessionStart", false],
      ["UserPromptSubmit", false],
      ["PreToolUse", true],
      ["PostToolUse", true],
      ["Stop", false],
    ],
    timeout: 30,
    file: [".codex", "hooks.json"],
  },
  gemini: {
    events: [
      ["SessionStart", false],
      ["BeforeAgent", false],
      ["BeforeTool", true],
      ["AfterTool", true],
      ["AfterModel", false],
      ["AfterAgent", false],
      ["SessionEnd", false],
    ],
    timeout: 30_000, // Gemini CLI counts hook timeouts in milliseconds
    file: [".gemini", "settings.json"],
  },
};

/** The agents `reins init` knows. */
export const INIT_AGENTS = Object.keys(AGENT_HOOKS);

/**
 * How an installed hook reaches reins, fastest first:
 * - `http`: Claude Code posts each hook straight to the daemon (its native http hooks; about 1 ms a call);
 * - `client`: a command hook runs the small native client, which forwards to the daemon (a few ms);
 * - `in-process`: a command hook starts Node and answers in-process (about 1.4× an empty Node process).
 * `http` and `client` start the daemon at session start when it is not running, and tell the model when it
 * had been down.
 */
export type InstallMode = "http" | "client" | "in-process";

interface HookEntry {
  type: string;
  command?: string;
  url?: string;
  headers?: Record<string, string>;
  timeout?: number;
  [key: string]: unknown;
}

interface HookGroup {
  matcher?: string;
  hooks: HookEntry[];
  [key: string]: unknown;
}

type Settings = { hooks?: Record<string, HookGroup[]> } & Record<string, unknown>;

/** The command Claude Code runs for every hook: this Node and this reins, by absolute path. */
export function hookCommand(bin: string, agent: string): string {
  return `"${process.execPath}" "${bin}" hook ${agent}`;
}

/** The port the command-hook clients ask when REINS_PORT is not set (src/client/reins-hook.c, bin/reins-hook). */
const DEFAULT_CLIENT_PORT = 7878;

/** The flag that makes a command hook also start the daemon when it is not running. */
export const ENSURE_DAEMON = "--ensure-daemon";

/** True for a hook entry reins added for `agent`, whatever path it was installed from. */
function isOurs(entry: HookEntry, agent: string): boolean {
  if (entry.type === "http") {
    return (
      typeof entry.url === "string" &&
      /^http:\/\/127\.0\.0\.1:\d+\/hooks\//.test(entry.url) &&
      entry.url.endsWith(`/hooks/${agent}`)
    );
  }
  const command = entry.command;
  return (
    typeof command === "string" &&
    new RegExp(
      `(reins\\.js" hook|reins-hook") ${agent}( ${ENSURE_DAEMON}( --port \\d+)?| "[^"]*" "[^"]*reins\\.js")?$`,
    ).test(command)
  );
}

/** Events answered by a command hook even in http mode: they start the daemon and report when it was down. */
const ENSURING = new Set(["SessionStart", "UserPromptSubmit"]);

function readSettings(path: string): Settings {
  if (!existsSync(path)) return {};
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new ReinsError(
      "usage",
      `${path} is not valid JSON (${(error as Error).message}); fix it first, reins did not change it`,
    );
  }
  if (data === null || typeof data !== "object" || Array.isArray(data))
    throw new ReinsError("usage", `${path} must hold a JSON object`);
  const settings = data as Settings;
  if (settings.hooks !== undefined && (typeof settings.hooks !== "object" || Array.isArray(settings.hooks))) {
    throw new ReinsError("usage", `${path}: "hooks" must be an object; reins did not change it`);
  }
  return settings;
}

function writeSettings(path: string, settings: Settings, secret: boolean): void {
  mkdirSync(dirname(path), { recursive: true });
  // Settings that carry the hook secret are the owner's alone, like the secret's own file.
  writeFileSync(`${path}.reins-tmp`, `${JSON.stringify(settings, null, 2)}\n`, secret ? { mode: 0o600 } : {});
  if (secret) chmodSync(`${path}.reins-tmp`, 0o600);
  renameSync(`${path}.reins-tmp`, path);
}

/**
 * Merges reins' hooks into Claude Code's settings file, keeping every hook of the user's own. Idempotent:
 * a second run changes nothing. With `uninstall`, removes exactly what it added. Returns what it did.
 */
export function initAgent(
  agent: string,
  options: {
    settingsPath: string;
    bin: string;
    uninstall?: boolean;
    /** The daemon's port: the hooks start it at session start and reach it over loopback. */
    port: number;
    /**
     * How tool calls reach reins (see INSTALL_MODES). `http` needs `http`.
     * @default "client"
     */
    mode?: InstallMode;
    /** Claude Code's native http hooks: the daemon's URL and the project's secret they carry. */
    http?: { url: string; secret: string };
    /** The compiled client (see buildClient); without it, the client is bin/reins-hook (sh + curl). */
    client?: string;
  },
): string {
  const spec = AGENT_HOOKS[agent];
  if (spec === undefined)
    throw new ReinsError("usage", `reins init knows ${INIT_AGENTS.join(", ")}, not "${agent}"`);
  const { settingsPath, bin, port } = options;
  const mode = options.mode ?? "client";
  const http = mode === "http" ? options.http : undefined;
  if (mode === "http" && http === undefined && options.uninstall !== true)
    throw new ReinsError("usage", "http hooks need the daemon's URL and secret");
  const settings = readSettings(settingsPath);
  const hooks = settings.hooks ?? {};
  const command = hookCommand(bin, agent);
  // The client reads its port from REINS_PORT; a daemon on another port must be named in the command.
  const portEnv = port === DEFAULT_CLIENT_PORT ? "" : `REINS_PORT=${port} `;
  const client =
    options.client !== undefined
      ? `${portEnv}"${options.client}" ${agent} "${process.execPath}" "${bin}"`
      : `${portEnv}"${join(dirname(bin), "reins-hook")}" ${agent}`;
  let changed = 0;
  for (const [event, matcher] of spec.events) {
    const groups = (hooks[event] ?? []).map((g) => ({ ...g, hooks: [...(g.hooks ?? [])] }));
    if (options.uninstall === true) {
      for (const group of groups) {
        const before = group.hooks.length;
        group.hooks = group.hooks.filter((h) => !isOurs(h, agent));
        changed += before - group.hooks.length;
      }
      const kept = groups.filter((g) => g.hooks.length > 0);
      if (kept.length > 0) hooks[event] = kept;
      else delete hooks[event];
      continue;
    }
    const ensure: HookEntry = {
      type: "command",
      command: `${command} ${ENSURE_DAEMON} --port ${port}`,
      timeout: spec.timeout,
    };
    const entry: HookEntry =
      http !== undefined
        ? ENSURING.has(event)
          ? ensure
          : { type: "http", url: http.url, headers: { Authorization: `Bearer ${http.secret}` }, timeout: 10 }
        : mode === "client"
          ? event === "SessionStart"
            ? ensure
            : { type: "command", command: client, timeout: spec.timeout }
          : { type: "command", command, timeout: spec.timeout };
    const same = (h: HookEntry) =>
      h.type === entry.type &&
      h.command === entry.command &&
      h.url === entry.url &&
      JSON.stringify(h.headers) === JSON.stringify(entry.headers);
    if (groups.some((g) => g.hooks.some(same))) continue;
    for (const group of groups) group.hooks = group.hooks.filter((h) => !isOurs(h, agent)); // an older install
    groups.push({ ...(matcher ? { matcher: "*" } : {}), hooks: [entry] });
    hooks[event] = groups.filter((g) => g.hooks.length > 0);
    changed += 1;
  }
  if (changed === 0)
    return options.uninstall === true
      ? `no reins hooks in ${settingsPath}`
      : `reins hooks already in ${settingsPath}`;
  if (Object.keys(hooks).length > 0) settings.hooks = hooks;
  else delete settings.hooks;
  writeSettings(settingsPath, settings, http !== undefined);
  return options.uninstall === true
    ? `removed ${changed} reins hook(s) from ${settingsPath}`
    : `added reins hooks for ${changed} event(s) to ${settingsPath}`;
}

/**
 * Where an agent's hook settings live: in the project (`.claude/settings.json`, `.codex/hooks.json`,
 * `.gemini/settings.json`) or, with `user`, in the home folder. With `local` (Claude Code's http hooks,
 * which carry the project's secret) `.claude/settings.local.json`, which Claude Code keeps out of version
 * control.
 */
export function settingsPathOf(
  agent: string,
  root: string,
  home: string,
  user: boolean,
  local = false,
): string {
  const spec = AGENT_HOOKS[agent];
  if (spec === undefined)
    throw new ReinsError("usage", `reins init knows ${INIT_AGENTS.join(", ")}, not "${agent}"`);
  const [dir = "", file = ""] = spec.file;
  return join(user ? home : root, dir, local ? "settings.local.json" : file);
}

/**
 * Builds the native command-hook client (src/client/reins-hook.c) into `.reins/bin/` with the system C
 * compiler, so a hook call costs a connect instead of a shell, curl and cat. Returns its path, or null when
 * no compiler is there (the shell client is used instead).
 */
export function buildClient(root: string, source: string): string | null {
  if (!existsSync(source)) return null;
  const out = join(root, ".reins", "bin", "reins-hook");
  mkdirSync(dirname(out), { recursive: true });
  for (const compiler of ["cc", "gcc", "clang"]) {
    try {
      execFileSync(compiler, ["-O2", "-o", out, source], { stdio: "ignore", timeout: 30_000 });
      return out;
    } catch {
      // try the next compiler
    }
  }
  return null;
}
