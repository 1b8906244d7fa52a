/** `reins daemon`: the user's hook daemon, run, started, listed and stopped. */
import type { Command } from "commander";
import { REINS_BIN } from "../../base/config/package-info.js";
import { listDaemons, type DaemonEntry } from "../../guard/daemon/list.js";
import { daemonName, logPath } from "../../guard/daemon/paths.js";
import { socketRequest } from "../../guard/daemon/probe.js";
import { ensureDaemon } from "../../guard/daemon/start.js";
import type { Io } from "../io.js";
import { table } from "../../base/text/table.js";
import { runtimeDir } from "../../base/config/user-dirs.js";
import { acknowledgeTamper, readTamper, tamperLines } from "../../guard/hooks/tamper-record.js";

const ago = (ms: number) =>
  ms < 60_000
    ? `${Math.round(ms / 1000)} s`
    : ms < 3_600_000
      ? `${Math.round(ms / 60_000)} min`
      : `${(ms / 3_600_000).toFixed(1)} h`;

/** What `reins daemon status` and `reins status --daemons` print for the daemons found. */
export function formatDaemons(entries: readonly DaemonEntry[], now: number, bin: string): string {
  if (entries.length === 0)
    return "no reins hook daemon is running: the next hook call starts one (reins daemon start starts it now)\n";
  const lines: string[] = [];
  for (const entry of entries) {
    if (!entry.running) {
      lines.push(`${entry.name}: not running (a socket left behind; the next hook call replaces it)`);
      continue;
    }
    const s = entry.status;
    const own = s.bin === bin ? " (this reins)" : "";
    lines.push(
      `${entry.name}: pid ${s.pid}, reins ${s.version} at ${s.bin}${own}; up ${ago(now - s.startedAt)}, ${s.calls} hook calls, last ${ago(now - s.lastCallAt)} ago, exits after ${ago(s.idleMs)} without one; ${Math.round(s.rssBytes / 1_048_576)} MB`,
    );
    if (s.projects.length === 0) lines.push("  no project open");
    else
      lines.push(
        table(
          ["project", "calls", "last call", "store"],
          s.projects.map((p) => [
            p.root,
            Object.entries(p.calls)
              .map(([agent, n]) => `${agent} ${n}`)
              .join(", "),
            `${ago(now - p.lastCallAt)} ago`,
            p.store,
          ]),
        )
          .trimEnd()
          .split("\n")
          .map((line) => `  ${line}`)
          .join("\n"),
      );
  }
  return `${lines.join("\n")}\n`;
}

/** Registers `reins daemon run|start|status|stop`. */
export function registerDaemonCommands(root: Command, io: Io, result: { code: number }): void {
  const daemon = root
    .command("daemon")
    .description(
      "the user's hook daemon: one process that answers the hooks of every project (started by the hooks themselves)",
    );
  const ownName = () => daemonName(REINS_BIN);

  daemon
    .command("run")
    .description("run the hook daemon in the foreground (what a hook starts in the background)")
    .option("--name <name>", "the daemon's name (its socket in the runtime folder)")
    .action(async (opts: { name?: string }) => {
      const { runDaemon } = await import("../../guard/daemon/run.js");
      result.code = await runDaemon(opts.name, io.env, (line) => io.stderr(`${line}\n`));
    });

  daemon
    .command("start")
    .description("start this reins' hook daemon in the background unless it runs")
    .action(async () => {
      const found = await ensureDaemon({ bin: REINS_BIN, name: ownName(), env: io.env });
      if (found === null) {
        io.stderr(
          `reins: the hook daemon did not start; see ${logPath(io.env, ownName())} (hooks answer in-process meanwhile)\n`,
        );
        result.code = 1;
        return;
      }
      io.stdout(`reins hook daemon ${found.state} (pid ${found.status.pid}) on ${found.status.socket}\n`);
    });

  daemon
    .command("status")
    .description("list this user's hook daemons and the projects each answers for")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const entries = await listDaemons(io.env);
      const tampering = readTamper(runtimeDir(io.env));
      io.stdout(
        opts.json === true
          ? `${JSON.stringify(entries, null, 2)}\n`
          : formatDaemons(entries, Date.now(), REINS_BIN) +
              tamperLines(tampering)
                .map((line) => `${line} (reins daemon ack, once looked into)\n`)
                .join(""),
      );
    });

  daemon
    .command("ack")
    .description(
      "acknowledge the tamper record (programs that stood in for the hook daemon): turn starts stop telling of it",
    )
    .action(() => {
      const acknowledged = acknowledgeTamper(runtimeDir(io.env), Date.now());
      io.stdout(
        acknowledged === 0
          ? "nothing to acknowledge: no program has stood in for the hook daemon\n"
          : `acknowledged ${acknowledged} tamper record line(s); kept in tamper-acknowledged.jsonl\n`,
      );
    });

  daemon
    .command("stop")
    .description("stop this reins' hook daemon (--all: every one of this user's); hooks start it again")
    .option("--all", "every hook daemon of this user")
    .action(async (opts: { all?: boolean }) => {
      const entries = (await listDaemons(io.env)).filter(
        (e) => e.running && (opts.all === true || e.name === ownName()),
      );
      if (entries.length === 0) {
        io.stdout("no reins hook daemon to stop\n");
        return;
      }
      for (const entry of entries) {
        await socketRequest(entry.socket, "POST", "/stop", 5_000);
        io.stdout(`stopped ${entry.name}${entry.running ? ` (pid ${entry.status.pid})` : ""}\n`);
      }
    });
}
