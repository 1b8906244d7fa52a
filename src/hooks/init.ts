/** `reins init <agent>`: installs reins' hooks in an agent's settings, and takes them out again. */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { ReinsError } from "../core/errors.js";
import { reinsDir } from "../config/reins-dir.js";
import {
  codexHome,
  codexHookSlots,
  codexProjectTrust,
  codexTrustChanges,
  codexTrustedHashes,
  geminiFolderTrust,
  geminiTrustedFoldersPath,
  readToml,
  readTrustRecord,
  readTrustedFolders,
  realPath,
  tomlGet,
  tomlHeader,
  tomlLine,
  tomlSet,
  tomlUnset,
  writeAtomically,
  writeTrustRecord,
} from "./trust.js";

/**
 * Per agent: the hook events reins answers (whether they take a tool matcher, and a timeout of their own),
 * and the timeout in the agent's unit.
 */
const AGENT_HOOKS: Record<string, { events: [string, boolean, number?][]; timeout: number; file: string[] }> =
  {
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
        ["SessionEnd", false, 3], // Codex caps a SessionEnd hook at 3 s (and says so on every run when asked for more)
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

/** The hook events reins installs for `agent`. */
export function hookEventsOf(agent: string): string[] {
  return (AGENT_HOOKS[agent]?.events ?? []).map(([event]) => event);
}

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
  const command = entry.command;
  return (
    typeof command === "string" &&
    new RegExp(
      `(reins\\.js" hook|reins-hook") ${agent}( ${ENSURE_DAEMON}( --port \\d+)?| "[^"]*" "[^"]*reins\\.js"( d-[0-9a-f]{8})?| d-[0-9a-f]{8}( "[^"]*")?)?$`,
    ).test(command)
  );
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
  const settings = readSettings(settingsPath);
  const hooks = settings.hooks ?? {};
  const command = hookCommand(bin, agent);
  const daemon = options.daemon ?? "";
  const client =
    options.client !== undefined
      ? `"${options.client}" ${agent} "${process.execPath}" "${bin}" ${daemon}`
      : `"${join(dirname(bin), "reins-hook")}" ${agent} ${daemon} "${process.execPath}"`;
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
        : { type: "command", command: mode === "client" ? client : command, timeout };
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
  writeSettings(settingsPath, settings, http !== undefined);
  return uninstall
    ? `removed ${changed} reins hook(s) from ${settingsPath}`
    : `added reins hooks for ${changed} event(s) to ${settingsPath}`;
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
  const geminiHome = env.GEMINI_CLI_HOME;
  if (user && agent === "gemini" && geminiHome !== undefined && geminiHome !== "")
    return join(geminiHome, dir, file);
  return join(user ? home : root, dir, local ? "settings.local.json" : file);
}

/** The env variable that keeps `reins init` out of the agents' own trust settings, like `--no-trust`. */
export const NO_TRUST_ENV = "REINS_INIT_NO_TRUST";

const CODEX_MARKER =
  "# added by `reins init codex`, which runs no hooks in an untrusted project; `--uninstall` removes it";

/** One change to a TOML table's key: a value to set, or null to remove it. */
type TomlEdit = { path: string[]; key: string; value: string | null; marker?: string };

/** What `reins init` did to an agent's own trust settings (lines to print), and whether it failed. */
export interface TrustOutcome {
  said: string[];
  /** The agent will not run reins' hooks: trust could not be written, or the person distrusts the folder. */
  failed: boolean;
}

/**
 * Makes the agent trust what `initAgent` just wrote, as far as the agent asks for trust: Codex trusts
 * the project (`[projects]`, project installs) and exactly reins' hooks by hash (`[hooks.state]`) in
 * `$CODEX_HOME/config.toml`; Gemini CLI trusts the project folder (`trustedFolders.json`). Merges with what
 * is there, is idempotent, and with `uninstall` removes exactly what it added (a project's trust only when
 * `.reins/agent-trust.json` says reins added it). With `write` false, or when the file cannot be written,
 * it changes nothing and says what to add. `before` is the hook file's content before `initAgent`.
 */
export function trustAgentHooks(
  agent: string,
  options: {
    root: string;
    home: string;
    env: NodeJS.ProcessEnv;
    settingsPath: string;
    before: unknown;
    user: boolean;
    uninstall: boolean;
    write: boolean;
  },
): TrustOutcome {
  if (agent === "codex") return trustCodex(options);
  if (agent === "gemini") return trustGemini(options);
  return { said: [], failed: false };
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as unknown;
  } catch {
    return null;
  }
}

function trustCodex(o: Parameters<typeof trustAgentHooks>[1]): TrustOutcome {
  const config = join(codexHome(o.env, o.home), "config.toml");
  // Codex keys hooks by the real path of their file, as it finds it from its working folder.
  const keyPath = join(realPath(dirname(o.settingsPath)), basename(o.settingsPath));
  const ours = (h: Record<string, unknown>) => isReinsHook(h, "codex");
  const before = codexHookSlots(keyPath, o.before, ours);
  const after = codexHookSlots(keyPath, readJson(o.settingsPath), ours);
  let text = existsSync(config) ? readFileSync(config, "utf8") : "";
  let doc: ReturnType<typeof readToml>;
  try {
    doc = readToml(text);
  } catch (error) {
    return codexByHand(o, config, [], `reins cannot read ${config} (${(error as Error).message})`);
  }
  const edits: TomlEdit[] = [...codexTrustChanges(before, after, codexTrustedHashes(doc))].map(
    ([key, hash]) => ({ path: ["hooks", "state", key], key: "trusted_hash", value: hash }),
  );
  const dir = o.user ? null : reinsDir(o.root);
  const record = dir !== null ? readTrustRecord(dir) : {};
  const project = realPath(o.root);
  const said: string[] = [];
  let failed = false;
  if (!o.user && !o.uninstall) {
    const level = codexProjectTrust(doc, o.root);
    if (level === "untrusted") {
      said.push(
        `Codex marks ${project} untrusted in ${config}, so it runs none of this project's hooks; reins left your decision as it is. Set its trust_level to "trusted", or install with --user.`,
      );
      failed = true;
    } else if (level !== "trusted") {
      edits.unshift({
        path: ["projects", project],
        key: "trust_level",
        value: "trusted",
        marker: CODEX_MARKER,
      });
      record.codex = { config, project };
    }
  }
  const added = record.codex;
  if (o.uninstall && added !== undefined && added.config === config) {
    // Only the trust reins wrote: a person who since marked the project untrusted keeps that.
    if (tomlGet(doc, ["projects", added.project, "trust_level"]) === "trusted")
      edits.unshift({
        path: ["projects", added.project],
        key: "trust_level",
        value: null,
        marker: CODEX_MARKER,
      });
    delete record.codex;
  }
  if (edits.length === 0) {
    if (dir !== null && o.uninstall) writeTrustRecord(dir, record);
    if (!o.uninstall && !failed)
      said.push(`Codex already trusts ${o.user ? "" : "this project and "}reins' hooks (${config})`);
    return { said, failed };
  }
  if (!o.write)
    return codexByHand(
      o,
      config,
      edits,
      `reins did not change ${config} (--no-trust or ${NO_TRUST_ENV}=1)`,
      said,
      failed,
    );
  for (const edit of edits) {
    const next =
      edit.value === null
        ? tomlUnset(text, edit.path, edit.key, edit.marker)
        : tomlSet(text, edit.path, edit.key, edit.value, edit.marker);
    if ("conflict" in next)
      return codexByHand(o, config, edits, `reins did not change ${config}: ${next.conflict}`, said, failed);
    text = next.text;
  }
  try {
    writeAtomically(config, text);
  } catch (error) {
    return codexByHand(
      o,
      config,
      edits,
      `reins could not write ${config} (${(error as Error).message})`,
      said,
      failed,
    );
  }
  if (dir !== null) writeTrustRecord(dir, record);
  const hooks = edits.filter((e) => e.path[0] === "hooks" && (e.value === null) === o.uninstall).length;
  const projectEdit = edits.some((e) => e.path[0] === "projects");
  said.push(
    o.uninstall
      ? `removed reins' trust from ${config}: ${[projectEdit ? "the project's" : "", hooks > 0 ? `${hooks} hook hash(es)` : ""].filter(Boolean).join(" and ")}`
      : `trusted ${[projectEdit ? "this project" : "", `${hooks} hook(s)`].filter(Boolean).join(" and ")} in ${config}: Codex runs no hook it has not trusted`,
  );
  return { said, failed };
}

/** Says what to add to (or remove from) Codex's config by hand; fails unless the person asked for it. */
function codexByHand(
  o: { uninstall: boolean; write: boolean },
  config: string,
  edits: readonly TomlEdit[],
  why: string,
  said: string[] = [],
  failed = false,
): TrustOutcome {
  const lines = edits.map((e) =>
    e.value === null
      ? `${tomlHeader(e.path)} ${e.key}`
      : `${tomlHeader(e.path)}\n${tomlLine(e.key, e.value)}`,
  );
  said.push(
    o.uninstall
      ? `${why}. Remove reins' trust from it by hand:\n${lines.join("\n")}`
      : `${why}. Codex runs a project's hooks only when it trusts the project and each hook: add this to it (or trust reins' hooks in Codex's /hooks):\n\n${lines.join("\n\n")}\n`,
  );
  return { said, failed: failed || o.write };
}

function trustGemini(o: Parameters<typeof trustAgentHooks>[1]): TrustOutcome {
  if (o.user)
    return {
      said: [
        "Gemini CLI runs hooks only in a trusted folder: trust each project (`reins init gemini` there, or Gemini's /permissions)",
      ],
      failed: false,
    };
  const file = geminiTrustedFoldersPath(o.env, o.home);
  const folder = realPath(o.root);
  const dir = reinsDir(o.root);
  const record = readTrustRecord(dir);
  const byHand = (why: string): TrustOutcome => ({
    said: [
      o.uninstall
        ? `${why}. Remove "${folder}" from it by hand.`
        : `${why}. Gemini CLI loads this project's settings, reins' hooks among them, only in a trusted folder (also under --skip-trust): add "${folder}": "TRUST_FOLDER" to it, or run Gemini with GEMINI_CLI_TRUST_WORKSPACE=true.`,
    ],
    failed: o.write,
  });
  let folders: ReturnType<typeof readTrustedFolders>;
  try {
    folders = readTrustedFolders(file);
  } catch (error) {
    return byHand(`reins cannot read ${file} (${(error as Error).message})`);
  }
  const { rules, plain } = folders;
  const data = folders.document ?? {};
  // What reins says when it may not rewrite the file.
  const unchanged = `reins did not change ${file}${o.write ? ": it has comments, which a rewrite would lose" : ` (--no-trust or ${NO_TRUST_ENV}=1)`}`;
  if (o.uninstall) {
    const added = record.gemini;
    if (added === undefined || added.file !== file) return { said: [], failed: false };
    if (rules[added.folder] !== "TRUST_FOLDER") {
      // A person changed that rule since: it is theirs now.
      delete record.gemini;
      writeTrustRecord(dir, record);
      return { said: [], failed: false };
    }
    if (!o.write || !plain) return byHand(unchanged);
    delete data[added.folder];
  } else {
    const trusted = geminiFolderTrust(rules, folder);
    if (trusted === true) return { said: [`Gemini CLI already trusts ${folder} (${file})`], failed: false };
    if (trusted === false)
      return {
        said: [
          `${file} says not to trust ${folder}, so Gemini CLI loads none of this project's settings and runs none of reins' hooks; reins left your decision as it is.`,
        ],
        failed: true,
      };
    if (!o.write || !plain) return byHand(unchanged);
    data[folder] = "TRUST_FOLDER";
  }
  try {
    writeAtomically(file, JSON.stringify(data, null, 2));
  } catch (error) {
    return byHand(`reins could not write ${file} (${(error as Error).message})`);
  }
  if (o.uninstall) delete record.gemini;
  else record.gemini = { file, folder };
  writeTrustRecord(dir, record);
  return {
    said: [
      o.uninstall
        ? `removed ${folder} from Gemini CLI's trusted folders (${file})`
        : `trusted ${folder} in ${file}: Gemini CLI loads a project's settings, and so reins' hooks, only in a trusted folder`,
    ],
    failed: false,
  };
}

/**
 * Builds the native command-hook client (src/client/reins-hook.c) into `<dir>/bin/reins-hook` with the
 * system C compiler, so a hook call costs a connect instead of a shell, curl and cat. Compiled aside and
 * renamed into place, so a hook running the old one meanwhile is not disturbed. Returns its path, or null
 * when no compiler is there (the shell client is used instead).
 */
export function buildClient(dir: string, source: string): string | null {
  if (!existsSync(source)) return null;
  const out = join(dir, "bin", "reins-hook");
  const aside = `${out}.${process.pid}.tmp`;
  mkdirSync(dirname(out), { recursive: true });
  for (const compiler of ["cc", "gcc", "clang"]) {
    try {
      execFileSync(compiler, ["-O2", "-o", aside, source], { stdio: "ignore", timeout: 30_000 });
      renameSync(aside, out);
      return out;
    } catch {
      // try the next compiler
    }
  }
  rmSync(aside, { force: true });
  return null;
}
