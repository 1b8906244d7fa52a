/** Every hook daemon of this user: what answers on each socket of the runtime folder, and what is left over. */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { runtimeDir } from "../../base/config/user-dirs.js";
import { probeDaemon, type DaemonStatus } from "./probe.js";

/** One socket of the runtime folder: the daemon answering on it, or none (a socket left by a crash). */
export type DaemonEntry = { name: string; socket: string } & (
  { running: true; status: DaemonStatus } | { running: false }
);

/** The daemons of the user's runtime folder (see runtimeDir), each asked for its status. */
export async function listDaemons(env: NodeJS.ProcessEnv, timeoutMs = 1_000): Promise<DaemonEntry[]> {
  const dir = runtimeDir(env);
  let names: string[];
  try {
    names = readdirSync(dir).filter((file) => file.endsWith(".sock"));
  } catch {
    return [];
  }
  return Promise.all(
    names.sort().map(async (file): Promise<DaemonEntry> => {
      const socket = join(dir, file);
      const name = file.slice(0, -".sock".length);
      const status = await probeDaemon(socket, timeoutMs);
      return status === null ? { name, socket, running: false } : { name, socket, running: true, status };
    }),
  );
}
