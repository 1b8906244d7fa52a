/**
 * Who holds a Unix socket, as far as Linux lets a process of the same user tell without SO_PEERCRED (which
 * Node does not give): the socket's inode from /proc/net/unix, then the process with it open in /proc/<pid>/fd.
 * Only asked when a daemon finds its socket taken, never on a hook call.
 */
import { readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs";

/** The pid and command line of the process listening on `path`, or a sentence saying why it is not known. */
export function socketHolder(path: string): string {
  let target: string;
  let table: string;
  try {
    target = realpathSync(path);
    table = readFileSync("/proc/net/unix", "utf8");
  } catch {
    return "its pid is not known (no /proc/net/unix here)";
  }
  const inodes = new Set<string>();
  for (const line of table.split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length >= 8 && fields.slice(7).join(" ") === target) inodes.add(fields[6]!);
  }
  if (inodes.size === 0) return `nothing listens on ${target} that this user can see`;
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
      if (inode === undefined || !inodes.has(inode)) continue;
      let command = "";
      try {
        command = readFileSync(`/proc/${pid}/cmdline`, "utf8")
          .replace(/[\0\s]+/g, " ")
          .trim()
          .slice(0, 200);
      } catch {
        // gone meanwhile
      }
      return `pid ${pid}${command !== "" ? ` (${command})` : ""} listens on ${target}`;
    }
  }
  return `a process this user cannot see listens on ${target}`;
}
