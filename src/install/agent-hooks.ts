/** `reins init <agent>`: installs reins' hooks in an agent's settings, and takes them out again. */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ReinsError } from "../base/core/errors.js";
import { codexHome } from "./trust.js";
import { AGENT_HOOKS } from "../guard/hooks/hook-events.js";
import { USER_HOOK_PREFIX } from "../guard/hooks/user-hook.js";

/** The agents `reins init` knows. */
export const INIT_AGENTS = Object.keys(AGENT_HOOKS);

/**
 * How an installed hook reaches reins:
 * - `client` (the default): a command hook runs the small client (compiled, else sh + curl), which forwards
 *   the call to the user's hook daemon over its Unix socket, and answers in-process (starting the daemon)
 *   when none answers; one daemon serves every project of the user, each call proving its project;
 * - `in-process`: a command hook starts Node and answers in-process on every call (slow; no daemon);
 * - `http`: Claude Code posts each hook to the project's own `reins serve` on a fixed port (its native http
 *   hooks). The URL is fixed for a session, so a port lost to another program leaves calls unanswered:
 *   only when that port is yours alone.
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

/** The flag that makes a command hook also start the daemon when it is not running. */
export const ENSURE_DAEMON = "--ensure-daemon";

/** True for a hook entry reins added for `agent`, whatever path it was installed from. */
export function isReinsHook(entry: Record<string, unknown>, agent: string): boolean {
  return isOurs(entry as HookEntry, agent);
}

function isOurs(entry: HookEntry, agent: string): boolean {
  if (entry.type === "http") {
    return (
      typeof entry.url === "string" &&
      /^http:\/\/127\.0\.0\.1:\d+\/hooks\//.test(entry.url) &&
      entry.url.endsWith(`/hooks/${agent}`)
    );
  }
  // Copilot CLI's hooks file names the command `bash`.
  const command = entry.command ?? entry.bash;
  return (
    typeof command === "string" &&
    new RegExp(
      `(reins\\.js" hook|reins-hook") ${agent}( ${ENSURE_DAEMON}( --port \\d+)?| "[^"]*" "[^"]*reins\\.js"( d-[0-9a-f]{8})?| d-[0-9a-f]{8}( "[^"]*")?)?$`,
    ).test(command)
  );
}

/** Reins' hook entries for `agent` in a settings file, by event (the first of each): what `reins init` records. */
export function reinsEntries(settingsPath: string, agent: string): Map<string, unknown> {
  const entries = new Map<string, unknown>();
  for (const [event, groups] of Object.entries(readSettings(settingsPath).hooks ?? {})) {
    if (!Array.isArray(groups)) continue;
    const ours = groups
      // Copilot CLI's hooks file lists the entries themselves, not groups of them.
      .flatMap((g) => (Array.isArray(g?.hooks) ? g.hooks : [g as unknown as HookEntry]))
      .find((h) => isOurs(h, agent));
    if (ours !== undefined) entries.set(event, ours);
  }
  return entries;
}

/** Events answered by a command hook even in http mode: they start the daemon and report when it was down. */
const ENSURING = new Set(["SessionStart", "UserPromptSubmit"]);

/** An agent's hook settings file as JSON (`{}` when there is none); a ReinsError when it is not a JSON object. */
export function readSettings(path: string): Settings {
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
 * Merges reins' hooks into an agent's settings file, keeping every hook of the user's own. Idempotent: a
 * second run changes nothing. With `uninstall`, removes exactly what it added. Returns what it did.
 */
export function initAgent(
  agent: string,
  options: {
    settingsPath: string;
    bin: string;
    uninstall?: boolean;
    /**
     * How tool calls reach reins (see InstallMode). `http` needs `http`.
     * @default "client"
     */
    mode?: InstallMode;
    /** The user's hook daemon the client forwards to (see daemonName); needed by `client`. */
    daemon?: string;
    /** Claude Code's native http hooks: the project server's port, URL and the project's secret they carry. */
    http?: { port: number; url: string; secret: string };
    /** The compiled client (see buildClient); without it, the client is bin/reins-hook (sh + curl). */
    client?: string;
    /** User-level hooks (`reins init --user`): each command says so to reins (guard/hooks/user-hook.ts). */
    user?: boolean;
    /**
     * With `client`: Claude Code's tool-call hooks post to the user's daemon's loopback port instead of
     * starting the client (no process per call); the turn's hooks stay the client, which starts the daemon.
     */
    daemonHttp?: { url: string; headers: Record<string, string> };
  },
): string {
  const spec = AGENT_HOOKS[agent];
  if (spec === undefined)
    throw new ReinsError("usage", `reins init knows ${INIT_AGENTS.join(", ")}, not "${agent}"`);
  const { settingsPath, bin } = options;
  const mode = options.mode ?? "client";
  const uninstall = options.uninstall === true;
  const http = mode === "http" ? options.http : undefined;
  if (mode === "http" && http === undefined && !uninstall)
    throw new ReinsError("usage", "http hooks need the daemon's URL and secret");
  if (mode === "client" && options.daemon === undefined && !uninstall)
    throw new ReinsError("usage", "client hooks need the name of the daemon they forward to");
  const command = hookCommand(bin, agent);
  const daemon = options.daemon ?? "";
  const client =
    options.client !== undefined
      ? `"${options.client}" ${agent} "${process.execPath}" "${bin}" ${daemon}`
      : `"${join(dirname(bin), "reins-hook")}" ${agent} ${daemon} "${process.execPath}"`;
  if (spec.flat === true)
    return initFlat(agent, settingsPath, uninstall ? null : mode === "client" ? client : command, spec);
  const settings = readSettings(settingsPath);
  const hooks = settings.hooks ?? {};
  const daemonHttp = mode === "client" ? options.daemonHttp : undefined;
  let changed = 0;
  for (const [event, matcher, ownTimeout] of spec.events) {
    const timeout = ownTimeout ?? spec.timeout;
    const groups = (hooks[event] ?? []).map((g) => ({ ...g, hooks: [...(g.hooks ?? [])] }));
    if (uninstall) {
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
    const entry: HookEntry =
      http !== undefined
        ? ENSURING.has(event)
          ? { type: "command", command: `${command} ${ENSURE_DAEMON} --port ${http.port}`, timeout }
          : { type: "http", url: http.url, headers: { Authorization: `Bearer ${http.secret}` }, timeout: 10 }
        : daemonHttp !== undefined && !ENSURING.has(event)
          ? { type: "http", url: daemonHttp.url, headers: daemonHttp.headers, timeout }
          : {
              type: "command",
              command: `${options.user === true ? USER_HOOK_PREFIX : ""}${mode === "client" ? client : command}`,
              timeout,
            };
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
    return uninstall ? `no reins hooks in ${settingsPath}` : `reins hooks already in ${settingsPath}`;
  if (Object.keys(hooks).length > 0) settings.hooks = hooks;
  else delete settings.hooks;
  writeSettings(settingsPath, settings, http !== undefined || daemonHttp !== undefined);
  return uninstall
    ? `removed ${changed} reins hook(s) from ${settingsPath}`
    : `added reins hooks for ${changed} event(s) to ${settingsPath}`;
}

/**
 * `initAgent` for a hooks file of reins' own whose events list the entries themselves (Copilot CLI's
 * `.github/hooks/reins.json`: `{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "…",
 * "timeoutSec": 30}]}}`). With `command` null, takes reins' entries out, and the file with them when nothing
 * else is left in it.
 */
function initFlat(
  agent: string,
  path: string,
  command: string | null,
  spec: { events: [string, boolean, number?][]; timeout: number },
): string {
  const settings = readSettings(path);
  const hooks = (settings.hooks ?? {}) as unknown as Record<string, HookEntry[]>;
  let changed = 0;
  for (const [event, , ownTimeout] of spec.events) {
    const entries = Array.isArray(hooks[event]) ? hooks[event] : [];
    const others = entries.filter((h) => !isOurs(h, agent));
    const entry: HookEntry = { type: "command", bash: command ?? "", timeoutSec: ownTimeout ?? spec.timeout };
    const same = entries.some(
      (h) => isOurs(h, agent) && h.bash === command && h.timeoutSec === entry.timeoutSec,
    );
    if (command !== null && same) continue;
    changed += command === null ? entries.length - others.length : 1;
    const next = command === null ? others : [...others, entry];
    if (next.length > 0) hooks[event] = next;
    else delete hooks[event];
  }
  const uninstall = command === null;
  if (changed === 0) return uninstall ? `no reins hooks in ${path}` : `reins hooks already in ${path}`;
  const rest = Object.keys(settings).filter((k) => k !== "hooks" && k !== "version");
  if (uninstall && Object.keys(hooks).length === 0 && rest.length === 0) rmSync(path, { force: true });
  else
    writeSettings(
      path,
      { version: 1, ...settings, hooks: hooks as unknown as Record<string, HookGroup[]> },
      false,
    );
  return uninstall
    ? `removed ${changed} reins hook(s) from ${path}`
    : `added reins hooks for ${changed} event(s) to ${path}`;
}

/**
 * Where an agent's hook settings live: in the project (`.claude/settings.json`, `.codex/hooks.json`,
 * `.gemini/settings.json`) or, with `user`, in the home folder (Codex's `$CODEX_HOME`, Gemini's
 * `$GEMINI_CLI_HOME` when set). With `local` (Claude Code's http hooks, which carry the project's secret)
 * `.claude/settings.local.json`, which Claude Code keeps out of version control.
 */
export function settingsPathOf(
  agent: string,
  root: string,
  home: string,
  user: boolean,
  local = false,
  env: NodeJS.ProcessEnv = {},
): string {
  const spec = AGENT_HOOKS[agent];
  if (spec === undefined)
    throw new ReinsError("usage", `reins init knows ${INIT_AGENTS.join(", ")}, not "${agent}"`);
  const [dir = "", file = ""] = spec.file;
  if (user && agent === "codex") return join(codexHome(env, home), file);
  // Copilot CLI's user hooks: `$COPILOT_HOME/hooks/` (else `~/.copilot/hooks/`).
  if (user && agent === "copilot")
    return join(
      env.COPILOT_HOME !== undefined && env.COPILOT_HOME !== "" ? env.COPILOT_HOME : join(home, ".copilot"),
      "hooks",
      file,
    );
  const geminiHome = env.GEMINI_CLI_HOME;
  if (user && agent === "gemini" && geminiHome !== undefined && geminiHome !== "")
    return join(geminiHome, dir, file);
  return join(user ? home : root, dir, local ? "settings.local.json" : file);
}
