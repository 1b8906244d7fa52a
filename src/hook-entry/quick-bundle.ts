/** `reins status` and `reins doctor` as bin/reins.js runs them: the bundled quick entry, through the code cache. */
import { fileURLToPath } from "node:url";
import { codeCacheDir, requireCached } from "./code-cache.js";

/**
 * src/cli/quick-main.ts bundled into one CommonJS file by scripts/bundle-hook.js (`npm run build`). In
 * dist/cli/, beside the modules it was bundled from, so every path they compute from `import.meta.url`
 * (`../../package.json`, `../../bin/reins.js`, `../hook.cjs`) names the same file from the bundle.
 */
export const QUICK_BUNDLE = fileURLToPath(new URL("../cli/quick.cjs", import.meta.url));

/** What the bundle exports (src/cli/quick-main.ts, not imported here: cli and hook-entry share a floor). */
interface QuickEntry {
  quickMain(argv: readonly string[]): Promise<number>;
}

/**
 * `reins status …` or `reins doctor …`: the quick entry from its bundle, compiled through V8's code cache,
 * which is written after the first run's work, so it holds every function that run compiled.
 */
export async function quickMain(argv: readonly string[]): Promise<number> {
  const bundle = requireCached<QuickEntry>(QUICK_BUNDLE, codeCacheDir(process.env));
  const code = await bundle.exports.quickMain(argv);
  bundle.save();
  return code;
}
