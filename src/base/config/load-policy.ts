/** The project's effective policy: its root, policy file, REINS_* variables and detected checks. */
import { existsSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { defaultPolicy, type Policy } from "../core/policy.js";
import { lastValidText } from "./policy-cache-entry.js";
import { parsePolicyDocument, repairPolicy, type Override } from "./policy-problems.js";
import { detectProjectChecks } from "./project-checks.js";
import { projectFiles } from "./project-files.js";

import { findRoot, POLICY_FILES } from "./project-root.js";

export { findRoot, POLICY_FILES } from "./project-root.js";

/** Where each effective policy value came from: `default`, a file path, or `env REINS_...`. */
export type Sources = Record<string, string>;

export interface LoadedPolicy {
  policy: Policy;
  root: string;
  /** The policy file read, if any. */
  file: string | null;
  sources: Sources;
  /**
   * One line per problem of the config (file:line:column, what is wrong, what reins guards with instead);
   * empty when it is valid.
   */
  problems: string[];
  /** The policy file's text when it held no problem at all (the cache keeps it as the last valid one). */
  validText: string | null;
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

/** An environment value: JSON when it parses (numbers, booleans, null, lists), the raw string otherwise. */
function envValue(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/** A policy file larger than this is not read: no policy needs that much, and a hook must stay quick. */
export const MAX_POLICY_BYTES = 1024 * 1024;

/** A policy file as read: its text, or the one line saying why it could not be read. */
export type PolicySource = { text: string } | { problem: string };

/** How a message names the policy file: relative to the project root when inside it. */
export function policyLabel(root: string, file: string): string {
  const inside = relative(root, file);
  return inside !== "" && !inside.startsWith("..") && !isAbsolute(inside) ? inside : file;
}

/** The text of the policy file at `path`, or why it cannot be used (unreadable, over MAX_POLICY_BYTES). */
export function readPolicySource(root: string, path: string): PolicySource {
  const label = policyLabel(root, path);
  try {
    const { size } = statSync(path);
    if (size > MAX_POLICY_BYTES)
      return { problem: `${label}: ${size} bytes, over the ${MAX_POLICY_BYTES} a policy file may hold` };
    return { text: readFileSync(path, "utf8") };
  } catch (error) {
    return { problem: `${label}: cannot be read (${(error as Error).message.split("\n")[0] ?? ""})` };
  }
}

/** The policy file of the project at `root`: the first of POLICY_FILES there, or null. */
export function findPolicyFile(root: string): string | null {
  return POLICY_FILES.map((f) => join(root, f)).find(existsSync) ?? null;
}

/**
 * Loads the effective policy: defaults, then the project's policy file, then `REINS_*` environment
 * variables (one per leaf, e.g. `REINS_BUDGET_SESSION_TOKENS=200000`, `REINS_BUDGET_MODE=soft`). Never
 * throws for a bad config: each invalid part is dropped (its default stands) and said in `problems`.
 */
export function loadPolicy(options: { cwd: string; env?: NodeJS.ProcessEnv; file?: string }): LoadedPolicy {
  const root = findRoot(options.cwd);
  const file = options.file !== undefined ? resolve(options.cwd, options.file) : findPolicyFile(root);
  const source = file === null ? null : readPolicySource(root, file);
  return policyFromText(root, file, source, options.env ?? {}, () =>
    file === null ? null : lastValidText(root, file),
  );
}

/** The file's content to validate, and what is said when the file cannot be used at all. */
function fileInput(
  root: string,
  file: string | null,
  source: PolicySource | null,
  lastValid: () => string | null,
): { input: Record<string, unknown>; text: string | null; from: string | null; problem?: string } {
  if (file === null || source === null) return { input: {}, text: null, from: null };
  const label = policyLabel(root, file);
  const read = "text" in source ? parsePolicyDocument(label, source.text) : source;
  if ("data" in read) return { input: read.data, text: "text" in source ? source.text : null, from: file };
  const last = lastValid();
  const fallback = last === null ? null : parsePolicyDocument(label, last);
  if (fallback !== null && "data" in fallback)
    return {
      input: fallback.data,
      text: null,
      from: `${file} (last valid)`,
      problem: `${read.problem}; reins is guarding with the last valid ${label} for all of it`,
    };
  return {
    input: {},
    text: null,
    from: null,
    problem: `${read.problem}; reins is guarding with the defaults for all of it`,
  };
}

/**
 * The second half of loadPolicy, for a policy file already read: `source` is what reading `file` gave
 * (both null when there is none), `lastValid` the file's last text that held no problem (used when it no
 * longer parses). Never throws for a bad config (see loadPolicy).
 */
export function policyFromText(
  root: string,
  file: string | null,
  source: PolicySource | null,
  env: NodeJS.ProcessEnv,
  lastValid: () => string | null = () => null,
): LoadedPolicy {
  const read = fileInput(root, file, source, lastValid);
  const overrides: Override[] = [];
  for (const [path] of leaves(defaultPolicy)) {
    const name = envName(path);
    const raw = env[name];
    if (raw !== undefined) overrides.push({ name, path, value: envValue(raw) });
  }
  const repaired = repairPolicy({
    label: file === null ? "policy" : policyLabel(root, file),
    text: read.text,
    input: read.input,
    overrides,
  });
  const policy = repaired.policy;
  const sources: Sources = {};
  for (const [path] of leaves(defaultPolicy)) sources[path.join(".")] = "default";
  for (const [path] of leaves(repaired.input))
    if (path[0] !== "$schema") sources[path.join(".")] = read.from ?? "default";
  for (const o of repaired.overrides) sources[o.path.join(".")] = `env ${o.name}`;
  const problems = read.problem !== undefined ? [read.problem, ...repaired.problems] : repaired.problems;
  const validText =
    read.problem === undefined && !repaired.fromFile && source !== null && "text" in source
      ? source.text
      : null;
  addCheckCommands(root, env, policy, sources);
  return { policy, root, file, sources, problems, validText };
}

/** The commands of the policy's checks, from the plan `reins run` drives or the project's own files. */
function addCheckCommands(root: string, env: NodeJS.ProcessEnv, policy: Policy, sources: Sources): void {
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
