/**
 * The folders of the user's that reins keeps outside every project: the runtime folder (the hook daemon's
 * socket, key and log) and the state folder (what `reins init` installed, each store's high-water marks).
 * Both lie outside the agent's reach: the boundary `reins init` sets denies the agent reading or writing
 * them (docs/threat-model.md).
 */
import { homedir } from "node:os";
import { join } from "node:path";

function home(env: NodeJS.ProcessEnv): string {
  return env.HOME !== undefined && env.HOME !== "" ? env.HOME : homedir();
}

/**
 * The folder of the user's daemons' sockets and logs: `$REINS_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/reins`,
 * else `~/.cache/reins/run`. The clients (src/client/reins-hook.c, bin/reins-hook) work it out the same way.
 */
export function runtimeDir(env: NodeJS.ProcessEnv): string {
  const given = env.REINS_RUNTIME_DIR;
  if (given !== undefined && given !== "") return given;
  const xdg = env.XDG_RUNTIME_DIR;
  if (xdg !== undefined && xdg !== "") return join(xdg, "reins");
  return join(home(env), ".cache", "reins", "run");
}

/**
 * The folder of what reins keeps about the user's projects outside them: `$REINS_STATE_DIR`, else
 * `$XDG_STATE_HOME/reins`, else `~/.local/state/reins`.
 */
export function stateDir(env: NodeJS.ProcessEnv): string {
  const given = env.REINS_STATE_DIR;
  if (given !== undefined && given !== "") return given;
  const xdg = env.XDG_STATE_HOME;
  if (xdg !== undefined && xdg !== "") return join(xdg, "reins");
  return join(home(env), ".local", "state", "reins");
}
