/** The two hook clients `reins init` installs, as tests run them: the compiled one, and sh + curl. */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { REINS_BIN } from "../../src/base/config/package-info.js";
import { daemonName } from "../../src/guard/daemon/paths.js";
import { buildClient } from "../../src/install/native-client.js";

const repo = join(import.meta.dirname, "..", "..");

function hasCurl(): boolean {
  try {
    execFileSync("curl", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** A client: its label, whether it can run here, and the command and arguments for an agent's hook. */
export type HookClient = [string, boolean, (agent: string) => [string, string[]]];

/** Both clients, the compiled one built into `dir` (skipped where there is no C compiler, or no curl). */
export function hookClients(dir: string): HookClient[] {
  const compiled = buildClient(dir, join(repo, "src", "client", "reins-hook.c"));
  const name = daemonName(REINS_BIN);
  return [
    [
      "the compiled client",
      compiled !== null,
      (agent) => [compiled ?? "", [agent, process.execPath, REINS_BIN, name]],
    ],
    [
      "the sh + curl client",
      hasCurl(),
      (agent) => [join(repo, "bin", "reins-hook"), [agent, name, process.execPath]],
    ],
  ];
}
