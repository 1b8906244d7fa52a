/** `reins doctor`: whether each agent's hooks, the programs they run and the daemon are in place. */
import { pluginChecks } from "./doctor-plugin.js";
import { PLUGIN_AGENTS } from "../install/opencode-plugin.js";
import { existsSync, lstatSync, readFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { hookEventsOf } from "../guard/hooks/hook-events.js";
import {
  INIT_AGENTS,
  isReinsHook,
  readSettings,
  settingsPathOf,
  type InstallMode,
} from "../install/agent-hooks.js";
import {
  codexHome,
  codexHookSlots,
  codexProjectTrust,
  codexTrustedHashes,
  geminiFolderTrust,
  geminiTrustedFoldersPath,
  readTrustedFolders,
  realPath,
} from "../install/trust.js";
import { readToml } from "../install/toml-lines.js";
import { DEFAULT_HOST, DEFAULT_PORT, serverAt } from "../server/server-process.js";
import { REINS_BIN } from "../base/config/package-info.js";
import { hookPort, hookUrl } from "../guard/daemon/http-port.js";
import { daemonName, socketPath } from "../guard/daemon/paths.js";
import { runtimeDir } from "../base/config/user-dirs.js";
import { guardedCheck } from "./doctor-scope.js";
import { probeSocket } from "../guard/daemon/probe.js";
import { containmentOf } from "../base/config/boundary.js";
import { readTamper, tamperLines, tamperPath } from "../guard/hooks/tamper-record.js";
import { existingHookSecret } from "../base/config/hook-secret.js";
import { loadPolicy, type LoadedPolicy } from "../base/config/load-policy.js";
import { defaultStorePath, openStore } from "../base/store/open.js";
import { redact } from "../base/store/redact.js";
import { installedChecks, storeTamperChecks } from "./doctor-tamper.js";
import { counted } from "../base/text/plural.js";

/** `ok`; `warn`: worth knowing, nothing broken; `fail`: an installed agent is not guarded; `off`: not set up. */
export type CheckStatus = "ok" | "warn" | "fail" | "off";

/** One line of `reins doctor`: what was checked, what was found, and the command that fixes it. */
export interface DoctorCheck {
  /** `claude`, `codex`, `gemini`, `daemon`, `config` or `store`. */
  subject: string;
  check: string;
  status: CheckStatus;
  message: string;
  fix?: string;
}

export interface DoctorReport {
  root: string;
  checks: DoctorCheck[];
  /** False when a check failed: `reins doctor` then exits 1. */
  ok: boolean;
}

export interface DoctorOptions {
  /** The project's root (see findRoot). */
  root: string;
  /** The user's home, where the agents' user settings live. */
  home: string;
  /** The environment the agents would run in (CODEX_HOME, GEMINI_CLI_*, REINS_*). */
  env: NodeJS.ProcessEnv;
  /**
   * The port of the project's server, for http hooks.
   * @default the ports reins' installed http hooks name
   */
  port?: number;
  /** @default "127.0.0.1" */
  host?: string;
  /** The policy file, as `--policy` gives it. */
  policyFile?: string;
  /** The store, as `--store` gives it; else the policy's. */
  storeSpec?: string;
  /**
   * How long the user's hook daemon, the project's server and the store may take to answer.
   * @default 3_000
   */
  timeoutMs?: number;
}

type Entry = Record<string, unknown>;

/** Reins' hooks in one settings file of an agent. */
export interface AgentInstall {
  agent: string;
  file: string;
  user: boolean;
  /** Reins' hook entries, by event. */
  hooks: Map<string, Entry[]>;
  mode: InstallMode;
  /** The port of the project's server, for http hooks. */
  port: number;
  /** The user's hook daemon the client forwards to (`d-<hash>`), or null (in-process, http, an older client). */
  daemon: string | null;
}

const isObject = (v: unknown): v is Entry => typeof v === "object" && v !== null && !Array.isArray(v);

/** The files an agent reads hooks from, the project's first. */
function hookFiles(agent: string, o: DoctorOptions): { file: string; user: boolean }[] {
  const project = { file: settingsPathOf(agent, o.root, o.home, false), user: false };
  const user = { file: settingsPathOf(agent, o.root, o.home, true, false, o.env), user: true };
  if (agent !== "claude") return [project, user];
  return [{ file: settingsPathOf(agent, o.root, o.home, false, true), user: false }, project, user];
}

function readInstall(agent: string, file: string, user: boolean): AgentInstall | null {
  const settings = readSettings(file);
  const hooks = new Map<string, Entry[]>();
  for (const [event, groups] of Object.entries(settings.hooks ?? {})) {
    if (!Array.isArray(groups)) continue;
    for (const group of groups as unknown[]) {
      if (!isObject(group)) continue;
      // Copilot CLI's hooks file lists the entries themselves, not groups of them.
      const listed = Array.isArray(group.hooks) ? (group.hooks as unknown[]) : [group];
      for (const entry of listed)
        if (isObject(entry) && isReinsHook(entry, agent))
          hooks.set(event, [...(hooks.get(event) ?? []), entry]);
    }
  }
  if (hooks.size === 0) return null;
  const entries = [...hooks.values()].flat();
  const text = JSON.stringify(entries);
  // Http hooks to the user's daemon carry the project's root; the turn's hooks are then the client.
  const toDaemon = entries.some(
    (e) => e.type === "http" && isObject(e.headers) && "X-Reins-Root" in e.headers,
  );
  const mode =
    entries.some((e) => e.type === "http") && !toDaemon
      ? "http"
      : text.includes("reins-hook") || text.includes("--ensure-daemon")
        ? "client"
        : "in-process";
  const port = /(?::(\d+)\/hooks\/|--port (\d+)|REINS_PORT=(\d+))/.exec(text);
  const daemon = mode === "client" ? (/ (d-[0-9a-f]{8})\b/.exec(text)?.[1] ?? null) : null;
  return {
    agent,
    file,
    user,
    hooks,
    mode,
    port: Number(port?.slice(1).find(Boolean) ?? DEFAULT_PORT),
    daemon,
  };
}

/** The command that installs `install` again as it is. */
function reinstall(install: AgentInstall): string {
  return [
    `reins init ${install.agent}`,
    install.user ? " --user" : "",
    install.mode === "in-process" ? " --in-process" : "",
    install.mode === "http" ? ` --http${install.port !== DEFAULT_PORT ? ` --port ${install.port}` : ""}` : "",
  ].join("");
}

const where = (o: DoctorOptions, file: string) =>
  file.startsWith(o.root) ? relative(o.root, file) : file.replace(o.home, "~");

/** The agent's hooks: installed, complete, their programs there; and trusted where the agent asks for it. */
export function agentChecks(
  agent: string,
  o: DoctorOptions,
): { checks: DoctorCheck[]; installs: AgentInstall[] } {
  const checks: DoctorCheck[] = [];
  const installs: AgentInstall[] = [];
  for (const { file, user } of hookFiles(agent, o)) {
    try {
      const install = readInstall(agent, file, user);
      if (install !== null) installs.push(install);
    } catch (error) {
      checks.push({ subject: agent, check: "hooks", status: "fail", message: (error as Error).message });
    }
  }
  if (installs.length === 0) {
    if (checks.length === 0)
      checks.push({
        subject: agent,
        check: "hooks",
        status: "off",
        message: "not set up",
        fix: `reins init ${agent}`,
      });
    return { checks, installs };
  }
  // The user-level hooks stand down where the project has its own (guard/hooks/user-hook.ts): only two of the
  // project's answer twice.
  if (installs.filter((i) => !i.user).length > 1)
    checks.push({
      subject: agent,
      check: "hooks",
      status: "warn",
      message: `reins' hooks are in ${installs.map((i) => where(o, i.file)).join(" and ")}: every call is answered twice`,
      fix: `${reinstall(installs[1]!)} --uninstall`,
    });
  for (const install of installs) {
    checks.push(hooksCheck(install, o));
    if (agent === "codex") checks.push(...codexTrust(install, o));
  }
  if (agent === "gemini") checks.push(geminiTrust(installs, o));
  const guarded = guardedCheck(agent, installs, o.root, o.home, { ...o.env, HOME: o.home });
  if (guarded !== null) checks.push(guarded);
  return { checks, installs };
}

function hooksCheck(install: AgentInstall, o: DoctorOptions): DoctorCheck {
  const base = { subject: install.agent, check: "hooks", fix: reinstall(install) };
  const missing = hookEventsOf(install.agent).filter((e) => !install.hooks.has(e));
  if (missing.length > 0)
    return {
      ...base,
      status: "fail",
      message: `${where(o, install.file)} lacks reins' ${missing.join(", ")} hook(s)`,
    };
  const entries = [...install.hooks.values()].flat();
  const programs = entries.flatMap((e) => {
    const command = e.command ?? e.bash; // Copilot CLI's hooks name the command `bash`
    return typeof command === "string" ? [...command.matchAll(/"(\/[^"]+)"/g)].map((m) => m[1] ?? "") : [];
  });
  const gone = [...new Set(programs)].filter((p) => !existsSync(p));
  if (gone.length > 0)
    return { ...base, status: "fail", message: `reins' hooks run ${gone.join(", ")}, which is not there` };
  if (install.mode === "http") {
    const secret = existingHookSecret(o.root);
    const stale = entries.some(
      (e) =>
        e.type === "http" &&
        JSON.stringify(e.headers ?? {}) !== JSON.stringify({ Authorization: `Bearer ${secret}` }),
    );
    if (stale)
      return { ...base, status: "fail", message: "the http hooks carry a secret the daemon does not accept" };
  }
  const port = hookUrl(hookPort(o.env, daemonName(REINS_BIN)));
  const moved = entries.find(
    (e) => e.type === "http" && isObject(e.headers) && "X-Reins-Root" in e.headers && e.url !== port,
  );
  if (moved !== undefined)
    return {
      ...base,
      status: "fail",
      message: `reins' http hooks post to ${String(moved.url)}, but the user's hook daemon listens at ${port}`,
    };
  if (install.mode === "client" && install.daemon === null)
    return {
      ...base,
      status: "warn",
      message: `${where(o, install.file)} has the client of an older reins, which answers every call in-process (slowly)`,
    };
  if (install.mode === "client" && install.daemon !== daemonName(REINS_BIN))
    return {
      ...base,
      status: "warn",
      message: `${where(o, install.file)} forwards to the daemon of another reins install than this one (${REINS_BIN})`,
    };
  const modes = {
    http: "http hooks to the project's server",
    client: "the client to the user's hook daemon",
    "in-process": "in-process",
  };
  const { fix: _fix, ...ok } = base;
  return {
    ...ok,
    status: "ok",
    message: `${entries.length} hooks (${modes[install.mode]}) in ${where(o, install.file)}`,
  };
}

function codexTrust(install: AgentInstall, o: DoctorOptions): DoctorCheck[] {
  const config = join(codexHome(o.env, o.home), "config.toml");
  const base = { subject: "codex", fix: reinstall(install) };
  let doc: ReturnType<typeof readToml>;
  try {
    doc = readToml(existsSync(config) ? readFileSync(config, "utf8") : "");
  } catch (error) {
    return [
      {
        ...base,
        check: "trust",
        status: "fail",
        message: `cannot read ${config}: ${(error as Error).message}`,
      },
    ];
  }
  const checks: DoctorCheck[] = [];
  if (!install.user) {
    const level = codexProjectTrust(doc, o.root);
    checks.push(
      level === "trusted"
        ? {
            subject: "codex",
            check: "project trust",
            status: "ok",
            message: `${config} trusts ${realPath(o.root)}`,
          }
        : {
            ...base,
            check: "project trust",
            status: "fail",
            message: `${config} ${level === "untrusted" ? "marks this project untrusted" : "does not trust this project"}: Codex loads none of its .codex/ and runs none of reins' hooks`,
            ...(level === "untrusted"
              ? { fix: `set trust_level = "trusted" under [projects."${realPath(o.root)}"] in ${config}` }
              : {}),
          },
    );
  }
  const keyPath = join(realPath(dirname(install.file)), basename(install.file));
  const ours = codexHookSlots(keyPath, readSettings(install.file), (h) => isReinsHook(h, "codex")).filter(
    (s) => s.ours,
  );
  const trusted = codexTrustedHashes(doc);
  const untrusted = ours.filter((s) => trusted.get(s.key) !== s.hash);
  checks.push(
    untrusted.length === 0
      ? {
          subject: "codex",
          check: "hook trust",
          status: "ok",
          message: `Codex trusts reins' ${ours.length} hooks`,
        }
      : {
          ...base,
          check: "hook trust",
          status: "fail",
          message: `Codex has not trusted ${untrusted.length} of reins' ${ours.length} hooks (${untrusted.map((s) => s.key.slice(keyPath.length + 1)).join(", ")}) and skips them without a word`,
        },
  );
  return checks;
}

function geminiTrust(installs: readonly AgentInstall[], o: DoctorOptions): DoctorCheck {
  const base = { subject: "gemini", check: "folder trust" };
  if (o.env.GEMINI_CLI_TRUST_WORKSPACE === "true")
    return {
      ...base,
      status: "ok",
      message: "GEMINI_CLI_TRUST_WORKSPACE=true trusts every folder in this environment",
    };
  const userSettings = settingsPathOf("gemini", o.root, o.home, true, false, o.env);
  try {
    const security = readSettings(userSettings).security;
    const folderTrust = isObject(security) ? security.folderTrust : undefined;
    if (isObject(folderTrust) && folderTrust.enabled === false)
      return { ...base, status: "ok", message: `folder trust is off (${where(o, userSettings)})` };
  } catch {
    // An unreadable settings file is reported by the hooks check.
  }
  const file = geminiTrustedFoldersPath(o.env, o.home);
  const fix = installs.some((i) => !i.user)
    ? "reins init gemini"
    : `add "${realPath(o.root)}": "TRUST_FOLDER" to ${file}`;
  let trusted: boolean | undefined;
  try {
    trusted = geminiFolderTrust(readTrustedFolders(file).rules, o.root);
  } catch (error) {
    return {
      ...base,
      status: "fail",
      message: `cannot read ${file}: ${(error as Error).message}`,
      fix: `fix ${file}`,
    };
  }
  if (trusted === true) return { ...base, status: "ok", message: `${file} trusts ${realPath(o.root)}` };
  return {
    ...base,
    status: "fail",
    message: `${file} ${trusted === false ? "says not to trust" : "does not trust"} ${realPath(o.root)}: Gemini CLI (even with --skip-trust) loads none of its settings and runs none of reins' hooks`,
    fix,
  };
}

/**
 * Whether what the installed hooks reach answers: the user's hook daemon for the client (which starts it when
 * it is gone, so a daemon not running is fine), the project's own server for http hooks.
 */
export async function daemonChecks(
  installs: readonly AgentInstall[],
  o: DoctorOptions,
): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const names = [...new Set(installs.flatMap((i) => (i.daemon !== null ? [i.daemon] : [])))];
  for (const name of names) checks.push(await hookDaemonCheck(name, o));
  const http = installs.filter((i) => i.mode === "http");
  const ports = o.port !== undefined ? [o.port] : [...new Set(http.map((i) => i.port))];
  for (const port of ports) checks.push(await serverCheck(port, http.length > 0, o));
  if (checks.length === 0)
    checks.push({
      subject: "daemon",
      check: "running",
      status: "off",
      message: "no agent's hooks reach a daemon (none installed, or in-process)",
    });
  return checks;
}

async function hookDaemonCheck(name: string, o: DoctorOptions): Promise<DoctorCheck> {
  const base = { subject: "daemon", check: "running" };
  const dir = runtimeDir(o.env);
  try {
    const stat = lstatSync(dir);
    if ((stat.mode & 0o077) !== 0 || stat.uid !== process.getuid?.())
      return {
        ...base,
        status: "warn",
        message: `${dir} is not private to this user: the daemon makes it so when it starts, and refuses a folder of another user's`,
        fix: `chmod 700 ${dir}`,
      };
  } catch {
    // not made yet: the first hook makes it
  }
  const socket = socketPath(o.env, name);
  const answer = await probeSocket(socket, o.timeoutMs ?? 3_000);
  if (answer.kind === "unproven")
    return {
      ...base,
      status: "fail",
      message: `a program that is not reins' daemon answers on ${socket} (${answer.detail}): the hook clients answer in-process meanwhile, and the daemon takes the socket back`,
      fix: "reins daemon start",
    };
  const status = answer.kind === "proven" ? answer.status : null;
  // Not running is no fault (the first hook call starts it), but it is not "ok" either: it is off.
  if (status === null)
    return {
      ...base,
      status: "off",
      message: `the user's hook daemon is not running; the first hook call starts it (and is answered in-process meanwhile)`,
      fix: "reins daemon start",
    };
  const here = status.projects.some((p) => p.root === o.root);
  return {
    ...base,
    status: "ok",
    message: `the user's hook daemon answers (pid ${status.pid}, reins ${status.version}, ${status.projects.length} project(s) open${here ? ", this one among them" : ""})`,
  };
}

/**
 * The tamper record (see guard/hooks/tamper-record.ts): a program that stood in for the user's hook daemon is a
 * failure until a person has looked and acknowledged it.
 */
export function tamperCheck(env: NodeJS.ProcessEnv): DoctorCheck {
  const base = { subject: "daemon", check: "tampering" };
  const entries = readTamper(runtimeDir(env));
  if (entries.length === 0)
    return { ...base, status: "ok", message: "no program has stood in for the user's hook daemon" };
  const last = entries[entries.length - 1]!;
  return {
    ...base,
    status: "fail",
    message: `${tamperLines(entries).join(" ")} Last: ${last.detail} (found by ${last.by}; ${tamperPath(runtimeDir(env))})`,
    fix: "look into it, then: reins daemon ack",
  };
}

async function serverCheck(port: number, used: boolean, o: DoctorOptions): Promise<DoctorCheck> {
  const host = o.host ?? DEFAULT_HOST;
  const at = `${host}:${port}`;
  const ensure = `reins serve --ensure${port !== DEFAULT_PORT ? ` --port ${port}` : ""}`;
  const found = await serverAt(host, port, o.root, o.timeoutMs ?? 3_000);
  const base = { subject: "server", check: "running" };
  if (found === "ours") return { ...base, status: "ok", message: `this project's server answers on ${at}` };
  if (found === "other")
    return {
      ...base,
      status: used ? "fail" : "warn",
      message: `${at} answers for another project or program: this project's http hooks cannot reach their server`,
      fix: "reins init claude (the client to the user's hook daemon needs no port)",
    };
  if (found === "busy")
    return {
      ...base,
      status: used ? "fail" : "warn",
      message: `${at} holds the connection but did not answer within ${o.timeoutMs ?? 3_000} ms: hooks wait for it up to their timeout`,
      fix: `look at ${where(o, join(o.root, ".reins", "serve.log"))}, or restart it: kill $(cat .reins/serve.pid); ${ensure}`,
    };
  return {
    ...base,
    status: used ? "warn" : "off",
    message: used
      ? `nothing answers on ${at}; the agents' session-start hook starts it, until then tool calls are not guarded`
      : `nothing answers on ${at}`,
    fix: ensure,
  };
}

/**
 * One failed line per problem of the config, none when it is valid. A failure, not a warning: reins still
 * guards, but with the defaults where the config is wrong, so a limit the person set (a smaller budget, a
 * stricter breaker) is not the one in force until they fix it; exit 1 makes a script or CI notice.
 */
export function configChecks(loaded: LoadedPolicy): DoctorCheck[] {
  return loaded.problems.map((message) => ({
    subject: "config",
    check: "valid",
    status: "fail",
    message,
    fix: `edit ${loaded.file === null ? "the policy" : relative(loaded.root, loaded.file) || loaded.file}; \`reins config\` shows what reins guards with`,
  }));
}

/** Whether the project's store opens and reads (the store the policy names, its problems aside). */
export async function storeCheck(o: DoctorOptions, loaded: LoadedPolicy): Promise<DoctorCheck> {
  const base = { subject: "store", check: "opens" };
  const spec = o.storeSpec ?? loaded.policy.store;
  const file = defaultStorePath(o.root);
  if ((spec === "" || spec === "sqlite") && !existsSync(file))
    return { ...base, status: "ok", message: `no database yet; the first hook creates ${where(o, file)}` };
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${o.timeoutMs ?? 3_000} ms`)),
        o.timeoutMs ?? 3_000,
      );
    });
    const store = await Promise.race([openStore(spec, o.root), timeout]);
    try {
      const scopes = await Promise.race([store.scopes(), timeout]);
      return {
        ...base,
        status: "ok",
        message: `${store.kind} ${where(o, store.location)} (${counted(scopes.length, "scope")})`,
      };
    } finally {
      await store.close();
    }
  } catch (error) {
    const sqlite = spec === "" || spec === "sqlite" || spec.startsWith("sqlite:");
    return {
      ...base,
      status: "fail",
      message: `${redact(spec)}: ${(error as Error).message}`,
      fix: sqlite
        ? `move the file aside (mv ${where(o, file)} ${where(o, file)}.broken); reins starts a new one`
        : "check that the store's server runs and the policy's store address",
    };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether each agent with reins' hooks is kept from switching reins off (docs/threat-model.md): its own
 * sandbox set to keep reins' judges, else "not contained", a warning (guarding works, but rests on the agent
 * leaving it alone).
 */
function containmentChecks(installs: readonly AgentInstall[], o: DoctorOptions): DoctorCheck[] {
  const agents = [...new Set(installs.map((i) => i.agent))];
  return agents.map((agent) => {
    const containment = containmentOf(agent, o.root, { ...o.env, HOME: o.home }, REINS_BIN);
    return containment.contained
      ? { subject: agent, check: "contained", status: "ok", message: `by ${containment.by}` }
      : {
          subject: agent,
          check: "contained",
          status: "warn",
          message: `not contained: reins cannot keep this agent from switching it off (${containment.why})`,
          fix: containment.fix,
        };
  });
}

/** Every check, for every agent reins knows, the daemon and the store. */
export async function doctor(o: DoctorOptions): Promise<DoctorReport> {
  const checks: DoctorCheck[] = [];
  const installs: AgentInstall[] = [];
  // An agent reins was set up for here (its record outside the project) whose hooks are gone or changed is
  // a failure, not "not set up" (docs/tamper-detection.md): one line per agent, the hooks check's own when
  // it already fails.
  const installed = installedChecks(o);
  for (const agent of INIT_AGENTS) {
    const found = agentChecks(agent, o);
    const changed = installed.find((c) => c.subject === agent && c.status === "fail");
    const failing = found.checks.some((c) => c.check === "hooks" && c.status === "fail");
    checks.push(...found.checks.filter((c) => changed === undefined || c.status !== "off"));
    if (changed !== undefined && !failing) checks.push(changed);
    else if (changed === undefined) checks.push(...installed.filter((c) => c.subject === agent));
    installs.push(...found.installs);
  }
  for (const agent of PLUGIN_AGENTS) {
    const found = pluginChecks(agent, o);
    checks.push(...found.checks);
    installs.push(...found.installs);
  }
  const loaded = loadPolicy({
    cwd: o.root,
    env: o.env,
    ...(o.policyFile !== undefined ? { file: o.policyFile } : {}),
  });
  checks.push(...containmentChecks(installs, o));
  checks.push(
    ...(await daemonChecks(installs, o)),
    tamperCheck(o.env),
    ...configChecks(loaded),
    await storeCheck(o, loaded),
    ...(await storeTamperChecks(o)),
  );
  return {
    root: o.root,
    // One field order for every line of the JSON output.
    checks: checks.map(({ subject, check, status, message, fix }) => ({
      subject,
      check,
      status,
      message,
      ...(fix !== undefined && status !== "ok" ? { fix } : {}),
    })),
    ok: checks.every((c) => c.status !== "fail"),
  };
}

/** The report as text: one line per check, `--` for what is not set up, and what to run. */
export function formatDoctor(report: DoctorReport): string {
  const mark: Record<CheckStatus, string> = { ok: "ok", warn: "warn", fail: "FAIL", off: "--" };
  const lines = report.checks.map(
    (c) =>
      `${mark[c.status].padEnd(4)}  ${c.subject.padEnd(6)}  ${c.check.padEnd(13)}  ${c.message}${c.fix !== undefined && c.status !== "ok" ? `  → ${c.fix}` : ""}`,
  );
  const failed = report.checks.filter((c) => c.status === "fail").length;
  return `reins doctor: ${report.root}\n${lines.join("\n")}\n${failed === 0 ? "nothing an installed agent needs is wrong" : `${counted(failed, "problem")}: an installed agent is not guarded as it should be`}\n`;
}
