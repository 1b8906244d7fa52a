/**
 * Every project of the user's at once, the hook daemon up or down: the projects the running daemons hold
 * open (their proven status over the socket) and those of the records in the state folder
 * (base/config/project-registry.ts), each read from its own store (guard/people/project-view.ts). Nothing new is
 * asked of the daemon: its signed `GET /status` already names what it serves, and the spend, sessions,
 * breakers and alerts come from the projects' stores, which this process reads itself, read-only.
 */
import { realpathSync } from "node:fs";
import { knownProjects, projectId, type KnownProject } from "../../base/config/project-registry.js";
import { readProject, type ProjectView } from "../people/project-view.js";
import { listDaemons } from "./list.js";

/** The user's hook daemons as the all-projects view says them. */
export type DaemonLine =
  | { running: true; pids: number[]; versions: string[]; projectsOpen: number }
  | { running: false; detail: string };

/** What `reins status --all --json` prints and `GET /api/all` answers. */
export interface AllStatus {
  at: number;
  daemon: DaemonLine;
  projects: ProjectView[];
}

/** Local midnight of the day of `now`. */
export function startOfDay(now: number): number {
  const d = new Date(now);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

function real(root: string): string {
  try {
    return realpathSync(root);
  } catch {
    return root;
  }
}

/** Every project of the user's, read at `now`. */
export async function allStatus(env: NodeJS.ProcessEnv, now = Date.now()): Promise<AllStatus> {
  const daemons = (await listDaemons(env)).flatMap((d) => (d.running ? [d.status] : []));
  const open = new Set(daemons.flatMap((d) => d.projects.map((p) => real(p.root))));
  const known = knownProjects(env);
  const byRoot = new Map<string, KnownProject>(known.map((k) => [real(k.root), k]));
  // A project the daemon holds whose record could not be written is listed all the same.
  for (const d of daemons)
    for (const p of d.projects)
      if (!byRoot.has(real(p.root)))
        byRoot.set(real(p.root), { id: projectId(p.root, env), root: p.root, servedAt: p.lastCallAt });
  const since = startOfDay(now);
  const projects: ProjectView[] = [];
  for (const [root, project] of byRoot)
    projects.push(await readProject(project, { env, now, since, servedNow: open.has(root) }));
  const daemon: DaemonLine =
    daemons.length > 0
      ? {
          running: true,
          pids: daemons.map((d) => d.pid),
          versions: [...new Set(daemons.map((d) => d.version))],
          projectsOpen: open.size,
        }
      : {
          running: false,
          detail:
            "the hook daemon is down: the projects below are those of reins' records in the state folder",
        };
  return { at: now, daemon, projects };
}
