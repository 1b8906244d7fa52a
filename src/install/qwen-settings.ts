/** What Qwen Code does to the settings file reins' hooks are in, and how `reins init qwen` allows for it. */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { initAgent } from "./agent-hooks.js";
import { noteWritten, releaseWritten } from "../base/config/local-files.js";

/**
 * Qwen Code (0.15) migrates every settings file it reads: it rewrites it with a `"$version"` key and keeps
 * the old text beside it as `<file>.orig`, which then holds reins' hooks too (this machine's paths). So an
 * install keeps the `.orig` out of git with the file, and an uninstall takes reins' hooks out of it as well,
 * and counts a file holding nothing but `"$version"` as empty, so what reins made goes again.
 */
export function qwenSettingsTidy(
  root: string,
  settingsPath: string,
  bin: string,
  uninstall: boolean,
): string[] {
  const orig = `${settingsPath}.orig`;
  if (!uninstall) return noteWritten(root, orig, !existsSync(orig), []);
  const said: string[] = [];
  if (existsSync(orig)) {
    const removed = initAgent("qwen", { settingsPath: orig, bin, uninstall: true });
    if (removed.startsWith("removed")) said.push(removed);
  }
  for (const file of [settingsPath, orig]) {
    if (onlyVersion(file)) writeFileSync(file, "{}\n");
    said.push(...releaseWritten(root, file));
  }
  return said;
}

/** Whether a settings file holds only Qwen Code's own `"$version"`. */
function onlyVersion(file: string): boolean {
  try {
    const data = JSON.parse(readFileSync(file, "utf8")) as unknown;
    if (data === null || typeof data !== "object" || Array.isArray(data)) return false;
    const keys = Object.keys(data);
    return keys.length > 0 && keys.every((k) => k === "$version");
  } catch {
    return false;
  }
}
