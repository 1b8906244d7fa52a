/** `reins status --all`: every project of the user's at once, from its own store, the daemon up or down. */
import { createColors } from "picocolors";
import { formatCount, formatUsd } from "../../base/core/format.js";
import { stateDir } from "../../base/config/user-dirs.js";
import { allStatus, type AllStatus } from "../../guard/daemon/all-status.js";
import type { ProjectView, SessionLine } from "../../guard/people/project-view.js";
import { table } from "../../base/text/table.js";
import type { Io } from "../io.js";

/** "5s ago", "3m ago", "2h ago", "4d ago"; "never" for no time. */
export function agoText(at: number | null, now: number): string {
  if (at === null) return "never";
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3_600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3_600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

/** USD, or "no price" where no price is known (never "$0.00" for spend that was not priced). */
export const usdText = (usd: number | null, tokens: number) =>
  usd !== null ? formatUsd(usd) : tokens > 0 ? "no price" : "—";

function sessionRow(s: SessionLine, now: number): string[] {
  return [
    s.scope,
    s.agent || "—",
    s.state === "stopped" ? `stopped (${s.why})` : s.state,
    agoText(s.lastAt, now),
    formatCount(s.tokens),
    usdText(s.usd, s.tokens),
  ];
}

function projectText(p: ProjectView, now: number, io: Io): string {
  const c = createColors(io.color);
  const served = p.servedNow ? "held open by the hook daemon" : `last served ${agoText(p.servedAt, now)}`;
  const out = [`${c.bold(p.name)}  ${p.root}  (${served})`];
  if (p.problem !== "") return `${out[0]}\n  ${p.problem}\n`;
  const s = p.sessions;
  out.push(
    `  store ${p.store ?? "—"}; sessions: ${s.active} active, ${s.stopped} stopped, ${s.ended} ended; today: ${formatCount(p.today.tokens)} tokens, ${usdText(p.today.usd, p.today.tokens)}`,
  );
  if (s.latest.length > 0)
    out.push(
      table(
        ["session", "agent", "state", "last seen", "tokens", "cost"],
        s.latest.map((line) => sessionRow(line, now)),
        ["left", "left", "left", "left", "right", "right"],
      )
        .trimEnd()
        .replace(/^/gm, "  "),
    );
  for (const b of p.breakers)
    out.push(
      `  ${c.red("breaker open")}: ${b.scope}${b.reason !== null ? ` (${b.reason})` : ""}${b.detail !== null ? `: ${b.detail}` : ""}\n    release: ${b.release}`,
    );
  for (const a of p.alerts) out.push(`  ${c.yellow("alert")} ${a.kind} on ${a.scope}: ${a.message}`);
  return `${out.join("\n")}\n`;
}

/** The all-projects view for the terminal. */
export function formatAllStatus(status: AllStatus, io: Io, where: string): string {
  const d = status.daemon;
  const head = d.running
    ? `hook daemon: running (pid ${d.pids.join(", ")}, reins ${d.versions.join(", ")}), ${d.projectsOpen} project(s) open\n`
    : `hook daemon: down; the projects below are those of reins' records in ${where}\n`;
  if (status.projects.length === 0)
    return `${head}no projects known yet: \`reins init <agent>\` in a project, or run an agent with reins' hooks\n`;
  return [head, ...status.projects.map((p) => projectText(p, status.at, io))].join("\n");
}

/** Runs `reins status --all [--json]`. */
export async function statusAll(io: Io, json: boolean): Promise<void> {
  const status = await allStatus(io.env);
  io.stdout(
    json
      ? `${JSON.stringify(status, null, 2)}\n`
      : formatAllStatus(status, io, `${stateDir(io.env)}/projects`),
  );
}
