/** What Claude Code's http hooks to the user's hook daemon carry: its loopback URL and the project's token. */
import { daemonName, privateRuntimeDir } from "../guard/daemon/paths.js";
import { hookPort, hookUrl, httpHookToken, recordPort } from "../guard/daemon/http-port.js";
import { encodeHeaderValue } from "../guard/daemon/protocol.js";
import { hookSecret } from "../base/config/hook-secret.js";

/**
 * The URL and headers of the project at `root`'s http hooks to the daemon of the reins at `bin`: the port
 * recorded for the user (derived and recorded now when none is), the root, and the project's http hook
 * token (never the hook secret itself; docs/threat-model.md, "Claude Code's http hooks").
 */
export function daemonHttpHooks(
  env: NodeJS.ProcessEnv,
  root: string,
  bin: string,
): { url: string; headers: Record<string, string> } {
  const name = daemonName(bin);
  const port = hookPort(env, name);
  try {
    privateRuntimeDir(env);
    recordPort(env, name, port);
  } catch {
    // the daemon records it when it starts
  }
  return {
    url: hookUrl(port),
    headers: {
      "X-Reins-Root": encodeHeaderValue(root),
      Authorization: `Bearer ${httpHookToken(hookSecret(root), root)}`,
    },
  };
}
