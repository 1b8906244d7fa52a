/** `reins hook <agent>` as bin/reins.js runs it: the bundled hook command, through the code cache. */
import { fileURLToPath } from "node:url";
import { codeCacheDir, requireCached } from "./code-cache.js";

/** The hook command bundled into one CommonJS file by scripts/bundle-hook.js (`npm run build`). */
export const HOOK_BUNDLE = fileURLToPath(new URL("../hook.cjs", import.meta.url));

/**
 * `reins hook <agent>` as bin/reins.js runs it: hook-main.ts from the bundle, compiled through V8's code
 * cache. The command starts a Node process per agent tool call, and loading one bundle with its compiled
 * code cached takes a fraction of loading the modules one by one. With `startDaemon` (a hook client found no
 * daemon), it also starts the user's hook daemon of that name for the calls that follow; with `unproven` (an
 * answer came without the daemon's proof), it records that first.
 */
export async function hookMain(agent: string, startDaemon?: string, unproven = false): Promise<number> {
  const bundle = requireCached<typeof import("./hook-main.js")>(HOOK_BUNDLE, codeCacheDir(process.env));
  const code = await bundle.exports.hookMain(agent, startDaemon, unproven);
  bundle.save();
  return code;
}
