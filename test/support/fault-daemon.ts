import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { serverAt } from "../../src/server/server-process.js";
import { waitFor } from "./fault-redis.js";
import { alive, cleanEnv, reinsBin } from "./processes.js";

/**
 * The project's server (`reins serve`) of a fault test's project as real processes: started with `reins serve`, killed with
 * SIGKILL, and found again (a server that a hook's `--ensure-daemon` restarted is not this process's child)
 * by its command line, which names the project's unique folder.
 */

/** Starts `reins --cwd <project> serve --port <port>` and waits until it answers as the project's server. */
export async function startServer(project: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [reinsBin, "--cwd", project, "serve", "--port", String(port)], {
    cwd: project,
    // Nothing of this process's environment: a developer's REINS_STORE or REINS_TOKEN would change it.
    env: cleanEnv(homedir()),
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4_000)));
  await waitFor(`the server on port ${port}`, async () => {
    if (child.exitCode !== null) throw new Error(`reins serve exited with ${child.exitCode}:\n${stderr}`);
    return (await serverAt("127.0.0.1", port, project)) === "ours";
  });
  return child;
}

/** The pids of every `reins serve` process of `project` (started by anyone), from /proc. */
export function servePids(project: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
    } catch {
      continue; // exited meanwhile
    }
    const cwd = args.indexOf("--cwd");
    if (args[1] === reinsBin && cwd >= 0 && args[cwd + 1] === project && args.includes("serve"))
      pids.push(Number(entry));
  }
  return pids;
}

/**
 * The pid of the server that holds the project's port: the one that wrote `.reins/serve.pid` after it
 * started listening (a `reins serve` that lost the port to it never writes one), if it is alive.
 */
export function listeningServer(project: string): number | null {
  let pid: number;
  try {
    pid = Number(readFileSync(join(project, ".reins", "serve.pid"), "utf8").trim());
  } catch {
    return null;
  }
  return servePids(project).includes(pid) ? pid : null;
}

/** SIGKILLs each pid and waits until it is gone. */
export async function killPids(pids: readonly number[]): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  await waitFor(`pids ${pids.join(", ")} to exit`, () => pids.every((pid) => !alive(pid)), 10_000);
}
