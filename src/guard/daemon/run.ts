/**
 * `reins daemon run`: the hook daemon in the foreground until it stops. bin/reins.js runs it without the
 * CLI framework, so the long-lived process holds only what answering hooks needs.
 */
import { rmSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { INSTALL_FILES, REINS_BIN, REINS_VERSION } from "../../base/config/package-info.js";
import { HANDOFF_VARIABLE, receiveHandover } from "./handoff.js";
import { installStamp, startHookDaemon } from "./hook-daemon.js";
import { daemonName, privateRuntimeDir, socketPath } from "./paths.js";
import { daemonSettings } from "./settings.js";
import { spawnSuccessor } from "./start.js";

/** A daemon name as the clients pass it: letters, digits, `.`, `_`, `-`. */
const NAME = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Runs the hook daemon `name` (default: this install's) until it stops, writing its start, its stop and its
 * failures to `log`. Returns the exit code: 0, also when another daemon already answered on its socket; 2
 * for a bad name or setting.
 */
export async function runDaemon(
  name: string | undefined,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<number> {
  const chosen = name ?? daemonName(REINS_BIN);
  if (!NAME.test(chosen)) {
    log(`reins: a daemon name is 1-64 letters, digits, '.', '_' or '-', not "${chosen}"`);
    return 2;
  }
  const socket = socketPath(env, chosen);
  // Its old generation grown by 20% of what is live before the next full collection, not by up to 4x: the
  // daemon's live heap is bounded by its caps, and its RSS should be too (docs/performance.md).
  setFlagsFromString("--heap-growing-percent=20");
  // A successor, started by a retiring daemon to take over its http hooks' port (handoff.ts).
  const successor = env[HANDOFF_VARIABLE] !== undefined;
  let started;
  try {
    const settings = daemonSettings(env);
    privateRuntimeDir(env);
    const inherited = successor ? await receiveHandover(process) : undefined;
    if (inherited === null) {
      log(`reins: the daemon that started this one handed it no port; stopping`);
      return 0;
    }
    started = await startHookDaemon({
      socket,
      bin: REINS_BIN,
      version: REINS_VERSION,
      idleMs: settings.idleMs,
      projects: { idleMs: settings.projectIdleMs },
      states: settings.states,
      stamp: installStamp(INSTALL_FILES),
      log: (line) => log(`${new Date().toISOString()} ${line}`),
      successor: () => spawnSuccessor({ bin: REINS_BIN, name: chosen, env }),
      ...(inherited !== undefined ? { inherited } : {}),
    });
  } catch (error) {
    log(`reins: the hook daemon could not start: ${(error as Error).message.split("\n")[0] ?? ""}`);
    return 2;
  } finally {
    // The start is over, one way or the other: another hook may start one again. A successor took no lock.
    if (!successor) rmSync(`${socket}.starting`, { force: true });
  }
  if (started.kind === "running") {
    log(`reins hook daemon already running (pid ${started.status.pid}) on ${socket}`);
    return 0;
  }
  const { daemon } = started;
  const stop = () => void daemon.close("stopped by a signal");
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  await daemon.closed;
  process.off("SIGTERM", stop);
  process.off("SIGINT", stop);
  return 0;
}
