/**
 * The user-level hooks of `reins init --user` (docs/user-install-hooks.md): which project a call belongs to,
 * when they stand down for a project's own hooks, and what they say outside any project.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { POLICY_FILES } from "../../base/config/project-root.js";
import { isLinkedProject } from "../../base/config/reins-link.js";
import { denyProjectPolicy } from "../../base/config/user-policy-deny.js";
import { contextReply } from "../../base/vocabulary/replies.js";
import { AGENT_HOOKS } from "./hook-events.js";

/**
 * The variable a user-level hook command sets for its client and for reins (`REINS_HOOK_SCOPE=user "…"
 * claude …`): it travels to the daemon with the project's other `REINS_*` variables.
 */
export const HOOK_SCOPE_ENV = "REINS_HOOK_SCOPE";

/** The prefix of a user-level hook command. */
export const USER_HOOK_PREFIX = `${HOOK_SCOPE_ENV}=user `;

/** Whether a hook call came through the user-level hooks. */
export function isUserHook(env: NodeJS.ProcessEnv | Record<string, string>): boolean {
  return env[HOOK_SCOPE_ENV] === "user";
}

/**
 * Whether `root` is a project: it holds a `.git` (a repository, or a worktree's or submodule's `.git`
 * file), a `.reins/` or a policy file. findRoot stops at the nearest such folder and falls back to the folder
 * itself when none is found up to `/`: that folder is then no project.
 */
export function isProject(root: string): boolean {
  return [".git", ".reins", ...POLICY_FILES].some((name) => existsSync(join(root, name)));
}

/** The files in the project where `agent` reads project hooks (Claude Code: its shared and local settings). */
export function projectHookFiles(agent: string, root: string): string[] {
  const [dir = "", file = ""] = AGENT_HOOKS[agent]?.file ?? [];
  if (dir === "") return [];
  const files = [join(root, dir, file)];
  if (agent === "claude") files.push(join(root, dir, "settings.local.json"));
  return files;
}

/**
 * Whether a settings file's text holds a reins hook for `agent` that is not a user-level one: a command that
 * runs reins' hook or client for it, or an http hook to a reins server's `/hooks/<agent>`. The same shapes
 * install/agent-hooks.ts `isReinsHook` knows, read from the text (this floor cannot import it).
 */
export function hasProjectReinsHook(text: string, agent: string): boolean {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return false;
  }
  const hooks = (data as { hooks?: unknown } | null)?.hooks;
  if (hooks === null || typeof hooks !== "object") return false;
  const command = new RegExp(`(reins\\.js" hook|reins-hook") ${agent}\\b`);
  const url = new RegExp(`^http://127\\.0\\.0\\.1:\\d+/hooks/${agent}$`);
  for (const groups of Object.values(hooks as Record<string, unknown>)) {
    if (!Array.isArray(groups)) continue;
    for (const group of groups as { hooks?: unknown }[]) {
      if (!Array.isArray(group?.hooks)) continue;
      for (const entry of group.hooks as Record<string, unknown>[]) {
        if (typeof entry?.command === "string" && command.test(entry.command))
          if (!entry.command.startsWith(USER_HOOK_PREFIX)) return true;
        if (typeof entry?.url === "string" && url.test(entry.url)) return true;
      }
    }
  }
  return false;
}

/** What one settings file said, by path: its size and time, so an unchanged file is not read again. */
const seen = new Map<string, { stamp: string; has: boolean }>();

/**
 * Whether the project at `root` has reins hooks of its own for `agent` (`reins init <agent>` in it): then the
 * project's hooks answer and the user-level ones stand down, so no call is counted twice. Each file is read
 * again only when its size or time changed.
 */
export function projectHasOwnHooks(agent: string, root: string): boolean {
  let has = false;
  for (const file of projectHookFiles(agent, root)) {
    let stamp: string;
    try {
      const stat = statSync(file);
      stamp = `${stat.size}:${stat.mtimeMs}:${stat.ino}`;
    } catch {
      seen.delete(file);
      continue;
    }
    let known = seen.get(file);
    if (known?.stamp !== stamp) {
      let text = "";
      try {
        text = readFileSync(file, "utf8");
      } catch {
        // unreadable: no hooks of its own to count on
      }
      known = { stamp, has: hasProjectReinsHook(text, agent) };
      seen.set(file, known);
    }
    has ||= known.has;
  }
  return has;
}

/** The hook events that open a turn, where the model (and the person) are told what reins is doing. */
const TURN_EVENTS = new Set(["SessionStart", "UserPromptSubmit", "BeforeAgent"]);

/** The line said at each turn's start of a session a user-level hook does not guard. */
export function unguardedLine(dir: string, agent: string): string {
  return `reins: not guarding this session: ${dir} is in no git repository (and no reins project), so it has no project to keep a store in. To guard it, run \`git init\` or \`reins init ${agent}\` there.`;
}

/**
 * What a user-level hook answers for a call outside any project: nothing is recorded; a turn's start is told
 * it is not guarded (so it is never silent), every other call is allowed as it is.
 */
export function unguardedReply(input: unknown, dir: string, agent: string): object | null {
  const event = (input as { hook_event_name?: unknown } | null)?.hook_event_name;
  return typeof event === "string" && TURN_EVENTS.has(event)
    ? contextReply(event, unguardedLine(dir, agent))
    : null;
}

/**
 * For a call through the user-level hooks, the answer that stands in for guarding it here, or undefined
 * when it is to be guarded as usual: nothing when the project has hooks of its own for the agent, the
 * "not guarding" notice outside any project.
 */
export function userHookAnswer(
  agent: string,
  input: unknown,
  root: string,
  env: NodeJS.ProcessEnv | Record<string, string>,
): { reply: object | null } | undefined {
  if (!isUserHook(env)) return undefined;
  if (!isProject(root)) return { reply: unguardedReply(input, root, agent) };
  if (projectHasOwnHooks(agent, root)) return { reply: null };
  return undefined;
}

/**
 * What a guarded call through Claude Code's user-level hooks keeps up when a turn opens, in a project whose
 * `.reins` is linked into the state folder: the project's policy file in the user's sandbox (base/config/user-policy-deny.ts).
 * Never throws: a settings file that cannot be written leaves the project said "not contained".
 */
export function userTurnUpkeep(
  agent: string,
  input: unknown,
  root: string,
  env: NodeJS.ProcessEnv | Record<string, string>,
): void {
  if (agent !== "claude" || !isUserHook(env)) return;
  const event = (input as { hook_event_name?: unknown } | null)?.hook_event_name;
  if (typeof event !== "string" || !TURN_EVENTS.has(event)) return;
  // The daemon answers with the call's REINS_* variables: the home and state folder are its own.
  const full = { ...process.env, ...env };
  try {
    if (isLinkedProject(root, full)) denyProjectPolicy(root, full);
  } catch {
    // said at this turn's start: the containment notice finds the entry missing
  }
}
