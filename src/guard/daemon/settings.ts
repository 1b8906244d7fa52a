/** The hook daemon's own settings: environment variables of the user's, never a project's policy. */
import { ReinsError } from "../../base/core/errors.js";
import { duration } from "../../base/config/duration.js";

/** Session states a daemon keeps in memory by default, across all its projects (about 5 KB each). */
export const DAEMON_STATES = 1_024;

/** How long the daemon and the projects in it live without hook calls. */
export interface DaemonSettings {
  /** `REINS_DAEMON_IDLE`: the daemon exits after this long without a hook call. @default 30 min */
  idleMs: number;
  /** `REINS_DAEMON_PROJECT_IDLE`: a project quiet this long is closed in the daemon. @default 10 min */
  projectIdleMs: number;
  /**
   * `REINS_DAEMON_STATES`: at most this many session states kept in memory across all the daemon's
   * projects; one let go is rebuilt from its store when its session calls again. @default 1024
   */
  states: number;
}

function read(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name];
  if (text === undefined || text.trim() === "") return fallback;
  const parsed = duration.safeParse(/^\d+$/.test(text.trim()) ? Number(text.trim()) : text.trim());
  if (!parsed.success)
    throw new ReinsError(
      "usage",
      `${name}=${JSON.stringify(text)}: ${parsed.error.issues[0]?.message ?? "not a duration"}`,
    );
  return parsed.data;
}

function count(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name]?.trim();
  if (text === undefined || text === "") return fallback;
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1)
    throw new ReinsError("usage", `${name}=${JSON.stringify(env[name])}: not a whole number of at least 1`);
  return Number(text);
}

/** The daemon's settings from the environment; a ReinsError naming the variable for a bad value. */
export function daemonSettings(env: NodeJS.ProcessEnv): DaemonSettings {
  return {
    idleMs: read(env, "REINS_DAEMON_IDLE", 1_800_000),
    projectIdleMs: read(env, "REINS_DAEMON_PROJECT_IDLE", 600_000),
    states: count(env, "REINS_DAEMON_STATES", DAEMON_STATES),
  };
}
