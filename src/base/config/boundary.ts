/**
 * The boundary that keeps reins' judges out of the agent's reach: which paths the agent's commands may not
 * read (reins' secrets and store) or write (the hooks reins wrote, the policy, git hooks, reins' install), and
 * whether an agent's own sandbox is set to keep them so (docs/threat-model.md).
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { reinsLinkIntact } from "./reins-link.js";
import { runtimeDir, stateDir } from "./user-dirs.js";
import { policyDenyEntries, userClaudeSettings } from "./user-policy-deny.js";

/** The paths of one project's judges, absolute. */
export interface Judges {
  /** Neither read nor written by the agent: `.reins/`, the runtime folder, the state folder. */
  hidden: string[];
  /** Read but never written: the agents' hook settings, the policy file, git's hooks and config, reins' install. */
  readOnly: string[];
}

/** The folder of the reins installed at `bin` (its `bin/reins.js`): the package, links resolved. */
export function installDir(bin: string): string {
  let real = bin;
  try {
    real = realpathSync(bin);
  } catch {
    // not there yet: as given
  }
  return dirname(dirname(real));
}

/**
 * The judges of the project at `root`, for the reins installed at `bin`. reins' install is one of them unless
 * the project lies inside it (reins' own repository), where it would leave the agent nothing to write, or
 * the install is not known (`bin` undefined).
 */
export function judgesOf(root: string, env: NodeJS.ProcessEnv, bin: string | undefined): Judges {
  const install = bin !== undefined ? installDir(bin) : root;
  const inside = root === install || root.startsWith(`${install}/`);
  return {
    // Claude Code's settings.local.json holds its http hooks' project token (install/daemon-http.ts): a
    // contained agent that read it could post hook calls of its own to the daemon's loopback port.
    hidden: [
      join(root, ".reins"),
      runtimeDir(env),
      stateDir(env),
      join(root, ".claude", "settings.local.json"),
    ],
    readOnly: [
      join(root, ".claude"),
      join(root, ".codex"),
      join(root, ".gemini"),
      join(root, ".qwen"),
      join(root, ".github", "hooks"),
      join(root, ".opencode"),
      join(root, ".kilo"),
      join(root, "reins.config.json"),
      join(root, ".git", "hooks"),
      join(root, ".git", "config"),
      ...(inside ? [] : [install]),
    ],
  };
}

/** What Claude Code's settings must hold for its sandbox to keep `judges` (see claudeBoundary). */
export interface ClaudeBoundary {
  sandbox: {
    enabled: true;
    failIfUnavailable: true;
    allowUnsandboxedCommands: false;
    filesystem: { denyRead: string[]; denyWrite: string[] };
  };
  /** Claude Code's file tools (Read, Edit, Write) are held by permission rules, not by the sandbox. */
  permissions: { deny: string[] };
}

/** A path in Claude Code's sandbox settings: `./x` under the project, else absolute. */
function sandboxPath(root: string, path: string): string {
  return path.startsWith(`${root}/`) ? `./${path.slice(root.length + 1)}` : path;
}

/** A path in Claude Code's permission rules: `./x` under the project, `//abs` elsewhere. */
function rulePath(root: string, path: string): string {
  return path.startsWith(`${root}/`) ? `./${path.slice(root.length + 1)}` : `/${path}`;
}

/** A folder's every file, or a single file, as a pattern. */
function deep(path: string, file: boolean): string {
  return file ? path : `${path}/**`;
}

/**
 * Claude Code's sandbox and permission rules that keep `judges`: every Bash command in the sandbox (with no
 * way out: `allowUnsandboxedCommands` false), the hidden paths unreadable and unwritable, the read-only ones
 * unwritable, and the file tools denied the same paths.
 */
export function claudeBoundary(root: string, judges: Judges): ClaudeBoundary {
  const files = new Set([
    join(root, "reins.config.json"),
    join(root, ".git", "config"),
    join(root, ".claude", "settings.local.json"),
  ]);
  const isFile = (path: string) => files.has(path);
  const hidden = judges.hidden.map((p) => deep(sandboxPath(root, p), isFile(p)));
  const readOnly = judges.readOnly.map((p) => deep(sandboxPath(root, p), isFile(p)));
  const hiddenRules = judges.hidden.map((p) => deep(rulePath(root, p), isFile(p)));
  const readOnlyRules = judges.readOnly.map((p) => deep(rulePath(root, p), isFile(p)));
  return {
    sandbox: {
      enabled: true,
      failIfUnavailable: true,
      allowUnsandboxedCommands: false,
      filesystem: { denyRead: hidden, denyWrite: [...hidden, ...readOnly] },
    },
    permissions: {
      deny: [
        ...hiddenRules.map((p) => `Read(${p})`),
        ...[...hiddenRules, ...readOnlyRules].map((p) => `Edit(${p})`),
      ],
    },
  };
}

/** Whether an agent is kept from switching reins off, and if not, why and what would fix it. */
export type Containment = { contained: true; by: string } | { contained: false; why: string; fix: string };

/**
 * The reins bin this process runs (`bin/reins.js`, as the hook command, the daemon and the server start it), or
 * undefined in a process started otherwise (a library, a test runner).
 */
export function runningBin(argv: readonly string[] = process.argv): string | undefined {
  const script = argv[1];
  return script !== undefined && /(^|\/)reins\.js$/.test(script) ? script : undefined;
}

/** Whether `program` is on the PATH of `env`. */
export function onPath(program: string, env: NodeJS.ProcessEnv): boolean {
  const dirs = (env.PATH ?? "").split(delimiter).filter((d) => d !== "");
  return dirs.some((dir) => existsSync(join(dir, program)));
}

function readJson(path: string): Record<string, unknown> {
  try {
    const data = JSON.parse(readFileSync(path, "utf8")) as unknown;
    return data !== null && typeof data === "object" && !Array.isArray(data)
      ? (data as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];

/**
 * Claude Code's settings as it merges them for the project at `root`: managed settings over the project's
 * local and shared files over the user's; arrays of the sandbox's filesystem and of permission rules join.
 */
function claudeSettings(root: string, env: NodeJS.ProcessEnv) {
  const home = env.HOME !== undefined && env.HOME !== "" ? env.HOME : homedir();
  const files = [
    join(home, ".claude", "settings.json"),
    join(root, ".claude", "settings.json"),
    join(root, ".claude", "settings.local.json"),
    "/etc/claude-code/managed-settings.json",
  ].map(readJson);
  const scalar = (key: string): unknown => {
    let value: unknown;
    for (const file of files) {
      const sandbox = record(file.sandbox);
      if (key in sandbox) value = sandbox[key];
    }
    return value;
  };
  const joined = (get: (file: Record<string, unknown>) => unknown) => files.flatMap((f) => strings(get(f)));
  return {
    enabled: scalar("enabled"),
    unsandboxed: scalar("allowUnsandboxedCommands"),
    denyRead: joined((f) => record(record(f.sandbox).filesystem).denyRead),
    denyWrite: joined((f) => record(record(f.sandbox).filesystem).denyWrite),
    deny: joined((f) => record(f.permissions).deny),
  };
}

/**
 * Whether Claude Code's own sandbox keeps `judges` of the project at `root`: enabled with no unsandboxed way
 * out, every judge's path denied as claudeBoundary sets it, and (on Linux) bubblewrap and socat on the PATH.
 */
export function claudeContainment(
  root: string,
  env: NodeJS.ProcessEnv,
  judges: Judges,
  platform: NodeJS.Platform = process.platform,
  wanted: ClaudeBoundary = claudeBoundary(root, judges),
): Containment {
  const fix = "run `reins init claude` again (and, on Linux, install bubblewrap and socat)";
  if (platform !== "linux" && platform !== "darwin")
    return { contained: false, why: `Claude Code has no sandbox on ${platform}`, fix: "run it under WSL2" };
  if (platform === "linux") {
    const missing = ["bwrap", "socat"].filter((program) => !onPath(program, env));
    if (missing.length > 0)
      return {
        contained: false,
        why: `Claude Code's sandbox needs ${missing.join(" and ")}, not on the PATH`,
        fix: "install bubblewrap and socat (apt-get install bubblewrap socat)",
      };
  }
  const settings = claudeSettings(root, env);
  if (settings.enabled !== true) return { contained: false, why: "Claude Code's sandbox is off", fix };
  if (settings.unsandboxed !== false)
    return { contained: false, why: "Claude Code may run commands outside its sandbox", fix };
  const lacking = [
    ...wanted.sandbox.filesystem.denyRead.filter((p) => !settings.denyRead.includes(p)),
    ...wanted.sandbox.filesystem.denyWrite.filter((p) => !settings.denyWrite.includes(p)),
    ...wanted.permissions.deny.filter((rule) => !settings.deny.includes(rule)),
  ];
  if (lacking.length > 0)
    return {
      contained: false,
      why: `Claude Code's sandbox leaves ${lacking.length} of reins' paths in reach (${lacking[0]})`,
      fix,
    };
  return { contained: true, by: "Claude Code's sandbox" };
}

/**
 * What the user's settings must hold to keep a project whose `.reins` is linked into the state folder
 * (base/config/reins-link.ts), all by absolute path: the runtime and state folders (the store and secrets behind
 * the link among them) neither read nor written; the project's policy file, the user's Claude settings and
 * reins' install not written. The project's `.claude/` settings, `.git/hooks` and `.git/config` Claude Code's
 * sandbox keeps unwritable of itself (tried with 2.1.330: "Permission denied", "Read-only file system").
 */
export function linkedBoundary(
  root: string,
  env: NodeJS.ProcessEnv,
  bin: string | undefined,
): ClaudeBoundary {
  const install = bin !== undefined ? installDir(bin) : root;
  const inside = root === install || root.startsWith(`${install}/`);
  const hidden = [runtimeDir(env), stateDir(env)].map((p) => `${p}/**`);
  const policy = policyDenyEntries(root);
  const readOnly = [userClaudeSettings(env), ...(inside ? [] : [`${install}/**`])];
  return {
    sandbox: {
      enabled: true,
      failIfUnavailable: true,
      allowUnsandboxedCommands: false,
      filesystem: { denyRead: hidden, denyWrite: [...hidden, policy.denyWrite, ...readOnly] },
    },
    permissions: {
      deny: [
        ...hidden.map((p) => `Read(/${p})`),
        policy.deny,
        ...[...hidden, ...readOnly].map((p) => `Edit(/${p})`),
      ],
    },
  };
}

/**
 * Whether Claude Code is kept from switching reins off in the project at `root`: by the project's own
 * boundary (`reins init claude`), else, for a project whose `.reins` is linked into the state folder, by
 * the user's (`reins init --user claude`).
 */
function claudeContainmentOf(
  root: string,
  env: NodeJS.ProcessEnv,
  bin: string | undefined,
  platform: NodeJS.Platform,
): Containment {
  const judges = judgesOf(root, env, bin);
  const own = claudeContainment(root, env, judges, platform);
  if (own.contained || !reinsLinkIntact(root, env)) return own;
  const linked = claudeContainment(root, env, judges, platform, linkedBoundary(root, env, bin));
  return linked.contained
    ? {
        contained: true,
        by: "Claude Code's sandbox, set in the user's settings (.reins/ linked into reins' state folder)",
      }
    : linked;
}

/** Why an agent with no sandbox reins can set is not contained, by agent. */
const UNCONTAINED: Record<string, string> = {
  codex: "Codex CLI's sandbox cannot hide reins' secrets and store inside the project",
  gemini: "Gemini CLI's sandbox needs a container engine reins does not set up",
  qwen: "Qwen Code's sandbox needs a container engine reins does not set up",
  copilot:
    "Copilot CLI's sandbox is the user's setting, lets a command bypass it, and cannot keep the agent's file edits off reins' files",
  opencode:
    "opencode has no sandbox: its commands run as you, and can read reins' secrets and remove its plugin",
  kilo: "Kilo Code has no sandbox: its commands run as you, and can read reins' secrets and remove its plugin",
};

/** Whether the `agent` guarded in the project at `root` is kept from switching reins off. */
export function containmentOf(
  agent: string,
  root: string,
  env: NodeJS.ProcessEnv,
  bin: string | undefined,
  platform: NodeJS.Platform = process.platform,
): Containment {
  if (agent === "claude") return claudeContainmentOf(root, env, bin, platform);
  return {
    contained: false,
    why: UNCONTAINED[agent] ?? `reins sets no sandbox for ${agent}`,
    fix: "drive it with `reins run`, which boxes each iteration",
  };
}

/** The one line said of an agent that is not contained. */
export function notContainedLine(containment: Extract<Containment, { contained: false }>): string {
  return `reins: not contained: reins cannot keep this agent from switching it off (${containment.why}); to contain it, ${containment.fix}.`;
}
