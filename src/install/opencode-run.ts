/** reins' plugin for a driven opencode: an opencode config folder of the run's own, the user's left as they are. */
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { daemonName } from "../guard/daemon/paths.js";
import { reinsDir } from "../base/config/reins-dir.js";
import { installPlugin, pluginPath, readPlugin } from "./opencode-plugin.js";
import { hookSecret } from "../base/config/hook-secret.js";

/**
 * The environment that gives a driven opencode reins' plugin: `OPENCODE_CONFIG_DIR=.reins/run-hooks/opencode-config`,
 * a config folder opencode loads after the user's and the project's (its `plugins/*.js` among them), which
 * holds reins' plugin as `reins init opencode` writes it, unless the project's own `.opencode/plugins/reins.js`
 * is reins' (then that one applies, and a second would judge each call twice). When the user has an
 * `OPENCODE_CONFIG_DIR` of their own (`userDir`), its every entry is a link in the run's folder, and its
 * plugins are links beside reins'. The user's files are never written; the same folder made again gives
 * the same files.
 */
export function opencodeRunEnv(
  root: string,
  options: { node: string; bin: string },
  userDir: string | undefined,
): Record<string, string> {
  const dir = join(reinsDir(root), "run-hooks", "opencode-config");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "plugins"), { recursive: true });
  const user = userDir !== undefined && userDir !== "" && existsSync(userDir) ? userDir : null;
  if (user !== null) {
    for (const name of readdirSync(user))
      if (name !== "plugins") symlinkSync(join(user, name), join(dir, name));
    const plugins = join(user, "plugins");
    for (const name of existsSync(plugins) ? readdirSync(plugins) : [])
      if (name !== "reins.js") symlinkSync(join(plugins, name), join(dir, "plugins", name));
  }
  if (readPlugin(pluginPath("opencode", root)) === null) {
    // The plugin signs every call with the project's hook secret.
    hookSecret(root);
    const settings = { agent: "opencode", ...options, daemon: daemonName(options.bin) };
    installPlugin(join(dir, "plugins", "reins.js"), settings, false);
  }
  return { OPENCODE_CONFIG_DIR: dir };
}
