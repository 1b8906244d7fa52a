/** The hook daemon's own settings: environment variables of the user's, never a project's policy. */
import { ReinsError } from "../core/errors.js";
import { duration } from "../config/duration.js";

/** How long the daemon and the projects in it live without hook calls. */
export interface DaemonSettings {
  /** `REINS_DAEMON_IDLE`: the daemon exits after this long without a hook call. @default 30 min */
  idleMs: number;
  /** `REINS_DAEMON_PROJECT_IDLE`: a project quiet this long is closed in the daemon. @default 10 min */
  projectIdleMs: number;
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

/** The daemon's settings from the environment; a ReinsError naming the variable for a bad value. */
export function daemonSettings(env: NodeJS.ProcessEnv): DaemonSettings {
  return {
    idleMs: read(env, "REINS_DAEMON_IDLE", 1_800_000),
    projectIdleMs: read(env, "REINS_DAEMON_PROJECT_IDLE", 600_000),
  };
}
