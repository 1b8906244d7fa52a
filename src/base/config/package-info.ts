/** What reins knows of its own install: its version and the script its hooks and daemon run. */
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

/** The installed reins' version, from its package.json. */
export const REINS_VERSION: string = (
  createRequire(import.meta.url)("../../../package.json") as { version: string }
).version;

/** reins' own bin script (`bin/reins.js`), which agents' hooks and the daemon run. */
export const REINS_BIN: string = fileURLToPath(new URL("../../../bin/reins.js", import.meta.url));

/**
 * The files whose change means reins was updated or rebuilt: a daemon started from the old ones retires
 * (see installStamp).
 */
export const INSTALL_FILES: readonly string[] = [
  fileURLToPath(new URL("../../../package.json", import.meta.url)),
  fileURLToPath(new URL("../../hook.cjs", import.meta.url)),
  fileURLToPath(new URL("../../guard/daemon/hook-daemon.js", import.meta.url)),
];
