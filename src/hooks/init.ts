import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
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

function writeSettings(path: string, settings: Settings): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(`${path}.reins-tmp`, `${JSON.stringify(settings, null, 2)}\n`);
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
    /** The daemon's port: command-hook agents start it at session start and reach it through bin/reins-hook. */
    port: number;
    /** Claude Code only: answer through the daemon with native http hooks, carrying the project's secret. */
    http?: { url: string; secret: string };
    /** The compiled client (see buildClient); without it, command-hook agents use bin/reins-hook (sh + curl). */
    client?: string;
  },
): string {
  const spec = AGENT_HOOKS[agent];
  if (spec === undefined)
    throw new ReinsError("usage", `reins init knows ${INIT_AGENTS.join(", ")}, not "${agent}"`);
  const { settingsPath, bin, http, port } = options;
  const settings = readSettings(settingsPath);
  const hooks = settings.hooks ?? {};
  const command = hookCommand(bin, agent);
  // Claude Code without --http runs reins in-process per call; the other agents go through the client.
  const client =
    options.client !== undefined
      ? `"${options.client}" ${agent} "${process.execPath}" "${bin}"`
      : `"${join(dirname(bin), "reins-hook")}" ${agent}`;
  const viaDaemon = agent !== "claude";
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
        : viaDaemon
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
  writeSettings(settingsPath, settings);
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
