/** A logged run's own project checks, read from the paths and commands in its log, never from reins' folder. */
import {
  detectProjectChecks,
  type ProjectChecks,
  type ProjectFiles,
} from "../../base/config/project-checks.js";
import type { Policy } from "../../base/core/policy.js";
import type { LoadedPolicy } from "../../base/config/load-policy.js";
import type { LoggedRun } from "../logs/run.js";

/**
 * The check a replay suggests must be the one the run's project uses: `python -m pytest` for a Python
 * repository, whatever folder `reins evaluate` runs in. A log holds no project files, only what the agent
 * touched and saw: the paths in its calls and in their output (an `ls` of the root, a traceback). Files at
 * the project's root seen there (by their path from it) stand for the project's files; with none, the files it edited say the
 * language.
 */

/** Every string in a JSON value. */
function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsOf(v, out);
  else if (value !== null && typeof value === "object")
    for (const v of Object.values(value)) stringsOf(v, out);
  return out;
}

/** Root files seen in the log and the extensions of every path in it. */
function seenFiles(run: LoggedRun): { root: Set<string>; extensions: Map<string, number> } {
  const root = new Set<string>();
  const extensions = new Map<string, number>();
  for (const call of run.calls) {
    const cwd = typeof call.input.cwd === "string" ? call.input.cwd.replace(/\/+$/, "") : "";
    const text = stringsOf([call.input.tool_input, call.input.tool_response, call.input.error]).join("\n");
    for (const [word] of text.matchAll(/[\w.][\w./-]*/g)) {
      const path = cwd !== "" && word.startsWith(`${cwd}/`) ? word.slice(cwd.length + 1) : word;
      const bare = path.replace(/^\.\//, "");
      if (bare !== "" && !bare.startsWith("/")) root.add(bare);
      const ext = /\.([a-z]{1,4})$/.exec(bare)?.[1];
      if (ext !== undefined && bare.includes("/")) extensions.set(ext, (extensions.get(ext) ?? 0) + 1);
    }
  }
  return { root, extensions };
}

/** Test commands by the language of the files a run touched, when no project file says more. */
const BY_EXTENSION: Record<string, string> = {
  py: "python -m pytest",
  go: "go test ./...",
  rs: "cargo test",
  rb: "bundle exec rake test",
  java: "mvn test",
};

/** The run's own check commands, from what its log shows of its project. */
export function runProjectChecks(run: LoggedRun): ProjectChecks {
  const { root, extensions } = seenFiles(run);
  const files: ProjectFiles = {
    exists: (path) => root.has(path),
    // A log shows names, not contents: a check that needs a file's text (package.json scripts) is not found.
    read: () => null,
    list: () => [...root],
  };
  const found = detectProjectChecks(files);
  if (found.tests !== undefined) return found;
  const top = [...extensions.entries()]
    .filter(([ext]) => ext in BY_EXTENSION)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0];
  const tests = top === undefined ? undefined : BY_EXTENSION[top[0]];
  return tests === undefined ? found : { ...found, tests };
}

/** `policy` with the run's own check commands where the policy names none. */
export function withRunChecks(policy: Policy, run: LoggedRun): Policy {
  const own = runProjectChecks(run);
  if (Object.keys(own).length === 0) return policy;
  return {
    ...policy,
    completion: { ...policy.completion, commands: { ...own, ...policy.completion.commands } },
  };
}

/**
 * The policy to judge other projects' logs with: the loaded one without the check commands read from the
 * files of the folder reins runs in (they belong to this project, not to the runs'). Configured ones stay.
 */
export function policyForLogs(loaded: LoadedPolicy): Policy {
  const commands = Object.fromEntries(
    Object.entries(loaded.policy.completion.commands).filter(
      ([check]) => loaded.sources[`completion.commands.${check}`] !== "the project's files",
    ),
  );
  return { ...loaded.policy, completion: { ...loaded.policy.completion, commands } };
}
