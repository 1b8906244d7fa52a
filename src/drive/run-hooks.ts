/**
 * reins' own hooks for the agents a run drives, so every guard applies inside each iteration: Claude Code
 * gets them through `--settings`, without touching the project's files.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { initAgent, isReinsHook, readSettings } from "../hooks/init.js";
import { reinsDir } from "../shell/reins-dir.js";

/** Whether a Claude Code settings file of the project already runs reins' hooks (then they apply as they are). */
function hasReinsHooks(path: string): boolean {
  if (!existsSync(path)) return false;
  const hooks = readSettings(path).hooks ?? {};
  return Object.values(hooks).some((groups) =>
    (groups ?? []).some((g) => (g.hooks ?? []).some((h) => isReinsHook(h, "claude"))),
  );
}

/**
 * The extra arguments that give a driven Claude Code reins' hooks: `--settings <file>` with command hooks
 * answered in-process (no daemon needed), or nothing when the project's own settings already have them.
 */
export function claudeRunArgs(root: string, bin: string): string[] {
  const own = [join(root, ".claude", "settings.json"), join(root, ".claude", "settings.local.json")];
  if (own.some(hasReinsHooks)) return [];
  const dir = join(reinsDir(root), "run-hooks");
  mkdirSync(dir, { recursive: true });
  const settingsPath = join(dir, "claude-settings.json");
  initAgent("claude", { settingsPath, bin, port: 0, mode: "in-process" });
  return ["--settings", settingsPath];
}
