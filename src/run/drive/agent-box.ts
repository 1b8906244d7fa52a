/**
 * The box a driven agent works in (docs/driven-boundary.md): a bubblewrap mount namespace around the whole
 * agent process, in which what judges its work (`.git`, the plan, the agents' hook settings, the policy,
 * reins' install) is read-only and what keeps reins' records and secrets (`.reins/`, the runtime and state
 * folders) is an empty read-only folder; the rest of the machine and the network stay as the user has them.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { REINS_BIN } from "../../base/config/package-info.js";
import { runtimeDir, stateDir } from "../../base/config/user-dirs.js";

/** How a run asks for its box: on where it can be had (`auto`), refused without one, or deliberately off. */
export type ContainMode = "auto" | "required" | "off";

/** Whether a run's agents work in a box, and the line that says so at the start and in the report. */
export type Containment =
  { contained: true; line: string; bwrap: string } | { contained: false; line: string; deliberate: boolean };

/** What a box is made for: the project, the task's working tree, the plan file, the user's environment. */
export interface BoxPlace {
  root: string;
  cwd: string;
  /** The plan file, read-only in the box. @default none (the spec workflow's agent writes it) */
  plan?: string;
  env: NodeJS.ProcessEnv;
  /** reins' install (the package folder of bin/reins.js). @default this reins' */
  install?: string;
}

/** The agents' hook settings and reins' policy: read-only in the box (when they exist). */
const SETTINGS = [".claude", ".codex", ".gemini", ".github/hooks", "reins.config.json"];

/** The package folder of the reins that runs (bin/reins.js's parent's parent). */
export function installDir(): string {
  return dirname(dirname(REINS_BIN));
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** Whether `inner` is `outer` or lies under it. */
function within(inner: string, outer: string): boolean {
  const rel = relative(outer, inner);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/**
 * The bwrap arguments (before the agent's command) of the box for `place`. Folders to hide that do not
 * exist yet are made first (owner only), so the agent cannot make them either; a folder that holds the
 * working tree itself is never hidden or made read-only (a project kept in the runtime folder, say).
 */
export function boxArgs(place: BoxPlace): string[] {
  const root = real(place.root);
  const cwd = real(place.cwd);
  // Every capability dropped, even for root (bwrap run by root keeps them otherwise: the agent could
  // unmount the box), so nothing in the box mounts, unmounts or remounts.
  const args = [
    ...["--dev-bind", "/", "/", "--die-with-parent", "--unshare-pid", "--proc", "/proc"],
    ...["--cap-drop", "ALL"],
  ];
  const hidden = [join(root, ".reins"), runtimeDir(place.env), stateDir(place.env)];
  for (const given of hidden) {
    if (!existsSync(given)) mkdirSync(given, { recursive: true, mode: 0o700 });
    const dir = real(given);
    if (within(root, dir)) continue;
    args.push("--tmpfs", dir);
    // A task's own worktree lies under `.reins/`: it comes back (its `.git` file read-only, below).
    if (within(cwd, dir) && cwd !== dir) args.push("--bind", cwd, cwd);
    args.push("--remount-ro", dir);
  }
  const install = place.install ?? installDir();
  const readOnly = [
    join(root, ".git"),
    ...(place.plan !== undefined ? [real(isAbsolute(place.plan) ? place.plan : join(cwd, place.plan))] : []),
    ...SETTINGS.map((name) => join(root, name)),
    ...(cwd !== root ? [join(cwd, ".git"), ...SETTINGS.map((name) => join(cwd, name))] : []),
    real(install),
  ];
  // An install's dependencies may be a link to a folder elsewhere: they are reins' code too.
  if (existsSync(join(install, "node_modules"))) readOnly.push(real(join(install, "node_modules")));
  for (const path of new Set(readOnly))
    if (existsSync(path) && !within(cwd, path)) args.push("--ro-bind", path, path);
  return args;
}

/** `$REINS_BWRAP` when set, else the first `bwrap` on PATH; null when there is none. */
function findBwrap(env: NodeJS.ProcessEnv): string | null {
  const given = env.REINS_BWRAP;
  if (given !== undefined && given !== "") return existsSync(given) ? given : null;
  for (const dir of (env.PATH ?? "").split(":")) {
    if (dir === "") continue;
    const path = join(dir, "bwrap");
    try {
      if (statSync(path).isFile()) return path;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Whether a box can be had for `place` under `mode`: bwrap found and a trivial box (`true`) made with the
 * same arguments the agent's will have, once per run. `agent` names the agent for the line said.
 */
export function containment(
  mode: ContainMode,
  place: BoxPlace,
  agent: string,
  unboxable: string | null = null,
): Containment {
  if (mode === "off")
    return {
      contained: false,
      deliberate: true,
      line: `not contained (--no-contain): reins cannot keep the agent ${agent} from switching it off; its commands can write .git, .reins/ and the plan`,
    };
  if (unboxable !== null)
    return {
      contained: false,
      deliberate: false,
      line: `not contained: ${unboxable}; reins cannot keep the agent ${agent} from switching it off (--require-contained refuses to run it)`,
    };
  const why = boxProblem(place);
  if (why.problem !== null)
    return {
      contained: false,
      deliberate: false,
      line: `not contained: ${why.problem}; reins cannot keep the agent ${agent} from switching it off (install bubblewrap; --require-contained refuses to run without a box)`,
    };
  return {
    contained: true,
    bwrap: why.bwrap,
    line: `contained: the agent ${agent} works in a bubblewrap box (.git, the plan, the hook settings and reins' install read-only; .reins/ and reins' runtime and state folders hidden)`,
  };
}

function boxProblem(place: BoxPlace): { problem: string | null; bwrap: string } {
  const env = place.env;
  const bwrap = findBwrap(place.env);
  if (bwrap === null)
    return {
      problem: `bwrap (bubblewrap) is not ${env.REINS_BWRAP ? `at ${env.REINS_BWRAP}` : "on PATH"}`,
      bwrap: "",
    };
  let args: string[];
  try {
    args = boxArgs(place);
  } catch (error) {
    return { problem: `the box cannot be set up (${(error as Error).message})`, bwrap };
  }
  const tried = spawnSync(bwrap, [...args, "true"], { stdio: ["ignore", "ignore", "pipe"], timeout: 10_000 });
  if (tried.status === 0) return { problem: null, bwrap };
  const said = tried.stderr?.toString().trim().split("\n")[0] ?? "";
  return {
    problem: `bwrap cannot make a box here (${said !== "" ? said : (tried.error?.message ?? `exit ${tried.status}`)})`,
    bwrap,
  };
}

/** Lines of an agent's output that show the box refusing a write: what it tried, for the report. */
export function boxRefusals(stdout: string, stderr: string): string[] {
  const lines = `${stdout}\n${stderr}`
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => /read-only file system|EROFS/i.test(line));
  return [...new Set(lines)]
    .slice(0, 20)
    .map((line) => (line.length > 300 ? `${line.slice(0, 300)}…` : line));
}

/**
 * Why `runner` cannot work in a box, or null when it can: one that runs in reins' own process has no
 * process to box, and a driven agent CLI's hooks and MCP tools reach the run's store under `.reins/`, which
 * the box hides (docs/driven-boundary.md, "Agent CLIs").
 */
export function unboxableWhy(runner: { boxable?: boolean; hooked?: boolean; name: string }): string | null {
  if (runner.boxable !== true)
    return `the agent ${runner.name} runs in reins' own process, not in a program a box can hold`;
  if (runner.hooked === true)
    return `the hooks and MCP tools of ${runner.name} reach the run's store in .reins/, which a box around it would hide, so it runs without one`;
  return null;
}
