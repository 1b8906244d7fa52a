/**
 * What the shell tells the model about guarding itself, beside the budget and the breaker: reins not
 * contained, tampering found, a config that did not load. Each source is asked only when a reply needs it
 * (a turn's start, a deny), never on an allowed tool call.
 */
import { runtimeDir } from "../../base/config/user-dirs.js";
import { configNotices } from "./config-notices.js";
import { containmentNotices } from "./containment-notice.js";
import type { NoticeSource, ProjectNotices } from "./notice-source.js";
import { tamperNotices } from "./tamper-notice.js";

export type { NoticeSource, ProjectNotices } from "./notice-source.js";

/** The notices of all `sources`, in order; a source that throws says so instead of silencing the rest. */
export function combineNotices(sources: readonly NoticeSource[]): ProjectNotices {
  return (when, agent) => {
    const lines: string[] = [];
    for (const source of sources) {
      try {
        lines.push(...source(when, agent));
      } catch (error) {
        lines.push(
          `reins could not check its own guarding: ${(error as Error).message.split("\n")[0] ?? ""}`,
        );
      }
    }
    return lines;
  };
}

/**
 * The notices of the project at `root`: one source per thing reins checks about its own guarding. Each is
 * asked only when a reply needs it. `runtime` is the user's runtime folder (the hook daemon passes its own:
 * the variables a call brings are the project's, not where the daemon lives).
 */
export function projectNotices(
  root: string,
  env: NodeJS.ProcessEnv,
  runtime: string = runtimeDir(env),
): ProjectNotices {
  return combineNotices([configNotices(root, env), containmentNotices(root, env), tamperNotices(runtime)]);
}
