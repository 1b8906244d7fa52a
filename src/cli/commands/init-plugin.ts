/** `reins init opencode|kilo`: reins' plugin in the project (or out of it), as the other agents get their hooks. */
import { existsSync } from "node:fs";
import { ReinsError } from "../../base/core/errors.js";
import { REINS_BIN } from "../../base/config/package-info.js";
import { containmentOf, notContainedLine } from "../../base/config/boundary.js";
import { daemonName } from "../../guard/daemon/paths.js";
import { installPlugin, pluginPath } from "../../install/opencode-plugin.js";
import { missingDirs, noteWritten, releaseWritten } from "../../base/config/local-files.js";
import { hookSecret } from "../../base/config/hook-secret.js";
import type { AgentContext } from "../context.js";

/** Writes (or with `uninstall` removes) the plugin of `agent` in the project, and says what it did. */
export function initPlugin(
  ctx: AgentContext,
  agent: string,
  opts: { user?: boolean; uninstall?: boolean; inProcess?: boolean; http?: boolean },
): void {
  if (opts.user === true || opts.inProcess === true || opts.http === true)
    throw new ReinsError(
      "usage",
      `${agent} is guarded by a plugin in the project: --user, --in-process and --http are not for it`,
    );
  const { io } = ctx;
  const loaded = ctx.loaded();
  const uninstall = opts.uninstall === true;
  const path = pluginPath(agent, loaded.root);
  const existed = existsSync(path);
  const dirs = missingDirs(path);
  // The plugin signs every call with the project's hook secret, made here if there is none.
  if (!uninstall) hookSecret(loaded.root);
  const said = [
    installPlugin(
      path,
      { agent, node: process.execPath, bin: REINS_BIN, daemon: daemonName(REINS_BIN) },
      uninstall,
    ),
  ];
  if (!uninstall) {
    const containment = containmentOf(agent, loaded.root, io.env, REINS_BIN);
    if (!containment.contained) said.push(notContainedLine(containment).replace(/^reins: /, ""));
  }
  // The plugin names this machine's Node and reins: kept out of git, as the other agents' hook settings.
  said.push(
    ...(uninstall ? releaseWritten(loaded.root, path) : noteWritten(loaded.root, path, !existed, dirs)),
  );
  io.stdout(`${said.join("\n")}\n`);
}
