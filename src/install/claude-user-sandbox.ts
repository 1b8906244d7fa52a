/**
 * `reins init --user claude` sets Claude Code's sandbox in the user's settings, for every project at once:
 * what can be denied there by absolute path (reins' runtime and state folders, its install, the user's hook
 * settings). A project's `.reins/` is kept by being a link into the state folder, its policy file by an entry
 * the hooks add per project (docs/user-install-hooks.md, "Containment").
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { installDir, type ClaudeBoundary } from "../base/config/boundary.js";
import { runtimeDir, stateDir } from "../base/config/user-dirs.js";
import { userSandboxRecord } from "../base/config/user-policy-deny.js";
import { mergeBoundary, removeBoundary } from "./claude-sandbox.js";

export { userSandboxRecord };

/**
 * The boundary of the user's settings: every Bash command in the sandbox with no way out, the runtime and
 * state folders neither read nor written, reins' install, its client and the user's Claude settings file not
 * written; the file tools denied the same paths. All absolute: in the user's settings a `./` path is taken
 * from `~/.claude`, and on Linux Claude Code 2.1.330's sandbox denies nothing by a `**` pattern (tried: a
 * `**`/.reins/** denyRead left a project's `.reins/` readable).
 */
export function claudeUserBoundary(
  env: NodeJS.ProcessEnv,
  home: string,
  bin: string,
  clientDir: string,
): ClaudeBoundary {
  const hidden = [runtimeDir(env), stateDir(env)].map((p) => `${p}/**`);
  const readOnly = [`${installDir(bin)}/**`, `${clientDir}/**`, join(home, ".claude", "settings.json")];
  return {
    sandbox: {
      enabled: true,
      failIfUnavailable: true,
      allowUnsandboxedCommands: false,
      filesystem: { denyRead: hidden, denyWrite: [...hidden, ...readOnly] },
    },
    permissions: {
      deny: [...hidden.map((p) => `Read(/${p})`), ...[...hidden, ...readOnly].map((p) => `Edit(/${p})`)],
    },
  };
}

/** Sets the user-level boundary in `settingsPath` (`~/.claude/settings.json`). Returns the lines to print. */
export function containClaudeUser(
  settingsPath: string,
  env: NodeJS.ProcessEnv,
  home: string,
  bin: string,
  clientDir: string,
): string[] {
  const lines = mergeBoundary(
    settingsPath,
    claudeUserBoundary(env, home, bin, clientDir),
    userSandboxRecord(env),
    env,
  );
  return [
    ...lines.map((line) =>
      line.startsWith("contained:")
        ? `Claude Code's sandbox in ${settingsPath} keeps every session's commands and file tools out of reins' runtime and state folders, its install and your user settings`
        : line,
    ),
    "a project guarded from here keeps its .reins/ in reins' state folder, linked from the project, and its reins.config.json is added to the sandbox's denied paths at its first session (docs/user-install-hooks.md)",
  ];
}

/**
 * Takes out of `settingsPath` exactly what containClaudeUser added, and the policy entries the hooks added
 * per project since. The projects' `.reins` links and the stores behind them stay (their history is the
 * user's; reins still finds each store through its link), and the last line says where.
 */
export function uncontainClaudeUser(settingsPath: string, env: NodeJS.ProcessEnv): string[] {
  const lines = removeBoundary(settingsPath, userSandboxRecord(env));
  const projects = join(stateDir(env), "projects");
  let linked = 0;
  try {
    linked = readdirSync(projects).filter((id) => existsSync(join(projects, id, "reins"))).length;
  } catch {
    // no project was ever linked
  }
  if (linked > 0)
    lines.push(
      `${linked} project(s) keep their .reins/ linked into ${projects}: their stores stay there (a project's .reins link and its folder there can be removed to forget it)`,
    );
  return lines;
}
