/**
 * What the shell tells the model about guarding itself, beside the budget and the breaker: reins not
 * contained, tampering found, a config that did not load. Each source is asked only when a reply needs it
 * (a turn's start, a deny), never on an allowed tool call.
 */
import { runtimeDir } from "../config/user-dirs.js";
import type { Notices } from "./agent-adapter.js";
import { tamperNotices } from "./tamper-notice.js";

/** One source of notices for a project's hook replies. */
export type NoticeSource = Notices;

/** The notices of all `sources`, in order; a source that throws says so instead of silencing the rest. */
export function combineNotices(sources: readonly NoticeSource[]): Notices {
  return (when) => {
    const lines: string[] = [];
    for (const source of sources) {
      try {
        lines.push(...source(when));
      } catch (error) {
        lines.push(
          `reins could not check its own guarding: ${(error as Error).message.split("\n")[0] ?? ""}`,
        );
      }
    }
    return lines;
  };
}

/** Nothing to tell. */
export const noNotices: Notices = () => [];

/**
 * The notices of the project at `root`: one source per thing reins checks about its own guarding. Each is
 * asked only when a reply needs it. `runtime` is the user's runtime folder (the hook daemon passes its own:
 * the variables a call brings are the project's, not where the daemon lives).
 */
export function projectNotices(
  root: string,
  env: NodeJS.ProcessEnv,
  runtime: string = runtimeDir(env),
): Notices {
  void root;
  return combineNotices([tamperNotices(runtime)]);
}
