/** The project's effective policy: its root, policy file, REINS_* variables and detected checks. */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ReinsError } from "../core/errors.js";
import { defaultPolicy, resolvePolicy, type Policy } from "../core/policy.js";
import { detectProjectChecks } from "./project-checks.js";
import { projectFiles } from "./project-files.js";

/** The policy files reins reads, in order of preference, relative to the project root. */
export const POLICY_FILES = ["reins.config.json", join(".reins", "config.json")] as const;

/** Where each effective policy value came from: `default`, a file path, or `env REINS_...`. */
export type Sources = Record<string, string>;

export interface LoadedPolicy {
  policy: Policy;
  root: string;
  /** The policy file read, if any. */
  file: string | null;
  sources: Sources;
}

/** The project root: the nearest folder, from `cwd` up, with a policy file, a `.reins` folder or `.git`. */
export function findRoot(cwd: string): string {
  let dir = resolve(cwd);
  for (;;) {
    if (
      POLICY_FILES.some((f) => existsSync(join(dir, f))) ||
      existsSync(join(dir, ".reins")) ||
      existsSync(join(dir, ".git"))
    ) {
      return dir;
    }
    const up = dirname(dir);
    if (up === dir) return resolve(cwd);
    dir = up;
  }
}

/** `budget.session.tokens` → `REINS_BUDGET_SESSION_TOKENS`. */
export function envName(path: readonly string[]): string {
  return `REINS_${path.map((p) => p.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase()).join("_")}`;
}

/** Every leaf of a plain object as [path, value]; arrays are leaves. */
function leaves(value: unknown, path: string[] = []): [string[], unknown][] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [[path, value]];
  return Object.entries(value).flatMap(([k, v]) => leaves(v, [...path, k]));
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (next === null || typeof next !== "object" || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  const last = path[path.length - 1];
  if (last !== undefined) node[last] = value;
}

/** An environment value: JSON when it parses (numbers, booleans, null, lists), the raw string otherwise. */
function envValue(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/** The text of a policy file; a ReinsError when it cannot be read. */
export function readPolicyText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new ReinsError("invalid_policy", `cannot read ${path}: ${(error as Error).message}`);
  }
}

function parsePolicyText(path: string, text: string): Record<string, unknown> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ReinsError("invalid_policy", `${path} is not valid JSON: ${(error as Error).message}`);
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new ReinsError("invalid_policy", `${path} must hold a JSON object`);
  }
  return data as Record<string, unknown>;
}

/** The policy file of the project at `root`: the first of POLICY_FILES there, or null. */
export function findPolicyFile(root: string): string | null {
  return POLICY_FILES.map((f) => join(root, f)).find(existsSync) ?? null;
}

/**
 * Loads the effective policy: defaults, then the project's policy file, then `REINS_*` environment
 * variables (one per leaf, e.g. `REINS_BUDGET_SESSION_TOKENS=200000`, `REINS_BUDGET_MODE=soft`).
 * A bad value throws a ReinsError naming the field, the value and where it came from.
 */
export function loadPolicy(options: { cwd: string; env?: NodeJS.ProcessEnv; file?: string }): LoadedPolicy {
  const root = findRoot(options.cwd);
  const file = options.file !== undefined ? resolve(options.cwd, options.file) : findPolicyFile(root);
  return policyFromText(root, file, file === null ? null : readPolicyText(file), options.env ?? {});
}

/**
 * The second half of loadPolicy, for a policy file already read: `text` is the content of `file` (both
 * null when there is none). Throws like loadPolicy.
 */
export function policyFromText(
  root: string,
  file: string | null,
  text: string | null,
  env: NodeJS.ProcessEnv,
): LoadedPolicy {
  const input: Record<string, unknown> = file === null || text === null ? {} : parsePolicyText(file, text);
  const sources: Sources = {};
  for (const [path] of leaves(defaultPolicy)) sources[path.join(".")] = "default";
  for (const [path] of leaves(input)) if (path[0] !== "$schema") sources[path.join(".")] = file ?? "default";
  for (const [path] of leaves(defaultPolicy)) {
    const name = envName(path);
    const raw = env[name];
    if (raw === undefined) continue;
    setPath(input, path, envValue(raw));
    sources[path.join(".")] = `env ${name}`;
  }
  const origin = [file, ...Object.values(sources).filter((s) => s.startsWith("env "))].filter(
    (s) => s !== null,
  );
  const policy = resolvePolicy(input, origin.length > 0 ? `policy (from ${origin.join(", ")})` : "policy");
  // Inside an iteration `reins run` drives, the plan's checks judge the task: "done" refused names them.
  const planChecks = planChecksOf(env[PLAN_CHECKS_ENV]);
  if (planChecks !== null) {
    for (const check of new Set([
      ...policy.completion.required.session,
      ...policy.completion.required.task,
    ])) {
      policy.completion.commands[check] = planChecks;
      sources[`completion.commands.${check}`] = `env ${PLAN_CHECKS_ENV}`;
    }
  }
  // A check the policy names no command for is suggested by the project's own (package.json scripts,
  // pyproject.toml, go.mod...): never `npm test` in a project without a package.json.
  const detected = detectProjectChecks(projectFiles(root));
  for (const [check, command] of Object.entries(detected)) {
    if (policy.completion.commands[check] !== undefined) continue;
    policy.completion.commands[check] = command;
    sources[`completion.commands.${check}`] = "the project's files";
  }
  return { policy, root, file, sources };
}

/**
 * The variable `reins run` gives the agents it drives: the commands of the checks that will judge the task
 * (a JSON list of strings), which a refused "done" then names instead of the project's usual ones.
 */
export const PLAN_CHECKS_ENV = "REINS_PLAN_CHECKS";

/** The plan's check commands as one line to run, or null when the variable is unset or not a list of them. */
function planChecksOf(raw: string | undefined): string | null {
  if (raw === undefined || raw.length > 16_384) return null;
  let commands: unknown;
  try {
    commands = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!Array.isArray(commands) || commands.length === 0) return null;
  if (!commands.every((c): c is string => typeof c === "string" && c.trim() !== "" && !c.includes("\n")))
    return null;
  return commands.join(" && ");
}

/** The effective policy as rows of [field, value, source], for `reins config`. */
export function describePolicy(loaded: LoadedPolicy): [string, string, string][] {
  return leaves(loaded.policy).map(([path, value]) => {
    const key = path.join(".");
    return [key, JSON.stringify(value), loaded.sources[key] ?? loaded.file ?? "default"];
  });
}
