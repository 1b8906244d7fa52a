/**
 * `reins doctor` on where an agent's guarding comes from here (docs/user-install-hooks.md): the project's own
 * hooks, the user-level hooks of `reins init --user`, or none, outside any git repository.
 */
import { existsSync } from "node:fs";
import { join, relative } from "node:path";
import { reinsLinkIntact } from "../base/config/reins-link.js";
import { isProject } from "../guard/hooks/user-hook.js";

/** An agent's reins hooks in one settings file, as doctor.ts reads them (only what this line needs). */
interface Install {
  file: string;
  user: boolean;
}

/** A doctor line (doctor.ts's DoctorCheck, which imports this file). */
interface GuardedLine {
  subject: string;
  check: string;
  status: "ok" | "warn";
  message: string;
  fix?: string;
}

/** One line per agent with hooks anywhere: which hooks guard the project at `root`, and from where. */
export function guardedCheck(
  agent: string,
  installs: readonly Install[],
  root: string,
  home: string,
  env: NodeJS.ProcessEnv = { HOME: home },
): GuardedLine | null {
  const shown = (file: string) =>
    file.startsWith(`${root}/`) ? relative(root, file) : file.replace(home, "~");
  const project = installs.filter((i) => !i.user);
  const user = installs.find((i) => i.user);
  const base = { subject: agent, check: "guarded" };
  if (project.length > 0)
    return {
      ...base,
      status: "ok",
      message: `by the project's hooks (${project.map((i) => shown(i.file)).join(", ")})${user !== undefined ? `; the user-level hooks (${shown(user.file)}) stand down here, so no call is counted twice` : ""}`,
    };
  if (user === undefined) return null;
  if (!isProject(root))
    return {
      ...base,
      status: "warn",
      message: `not guarded: ${root} is in no git repository (nor a reins project); the user-level hooks (${shown(user.file)}) only say so at each session start`,
      fix: `git init, or reins init ${agent} here`,
    };
  return {
    ...base,
    status: "ok",
    message: `by the user-level hooks (${shown(user.file)}), for this git root; its store is ${shown(`${root}/.reins`)}/ (${storeWhere(root, env)})`,
  };
}

/** Where a project guarded by the user-level hooks keeps its `.reins/` (base/config/reins-link.ts). */
function storeWhere(root: string, env: NodeJS.ProcessEnv): string {
  if (reinsLinkIntact(root, env)) return "a link into reins' state folder";
  if (existsSync(join(root, ".reins")))
    return "a folder of the project's own, which the user-level sandbox cannot hide";
  return "made on first use, as a link into reins' state folder";
}
