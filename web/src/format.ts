/** Small formatting helpers: counts, money, times, and what an event was about, always as plain text. */
import type { ReinsEvent } from "./types.js";

export function count(n: number): string {
  if (!Number.isFinite(n)) return "∞";
  if (Math.abs(n) >= 1e6) return `${(n / 1e6).toFixed(n >= 1e7 ? 0 : 1)}M`;
  if (Math.abs(n) >= 1e4) return `${(n / 1e3).toFixed(0)}k`;
  return Math.round(n).toLocaleString("en-US");
}

export function usd(n: number): string {
  return `$${n.toFixed(n >= 100 ? 0 : 2)}`;
}

/**
 * What was spent in USD, or "no price" where tokens were spent and nothing was priced (no price known for
 * the model): never "$0.00" for spend that has a cost nobody knows. "—" when nothing was spent.
 */
export function cost(n: number | null | undefined, tokens: number): string {
  if (n !== null && n !== undefined && n > 0) return usd(n);
  return tokens > 0 ? "no price" : "—";
}

export function amountOf(resource: string, n: number): string {
  if (resource === "usd") return usd(n);
  if (resource === "wallTimeMs") return `${Math.round(n / 60_000)} min`;
  return count(n);
}

export function time(at: number | null): string {
  if (at === null) return "—";
  const d = new Date(at);
  const today = new Date().toDateString() === d.toDateString();
  return today ? d.toLocaleTimeString() : d.toLocaleString();
}

export function ago(at: number | null, now = Date.now()): string {
  if (at === null) return "—";
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3_600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3_600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

/** Local midnight today, for "today" figures. */
export function startOfToday(): number {
  const d = new Date();
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

/** What an event was about, in one line: the command, the paths, the amounts. Plain text, never markup. */
export function describe(event: ReinsEvent): string {
  switch (event.kind) {
    case "tool.requested":
    case "tool.completed": {
      const what = event.command ?? [...(event.writes ?? []), ...(event.reads ?? [])].join(", ");
      const end =
        event.kind === "tool.completed"
          ? ` → ${event.outcome}${event.exitCode !== undefined ? ` (exit ${event.exitCode})` : ""}`
          : "";
      return `${event.tool} ${what}${end}`.trim();
    }
    case "usage.recorded": {
      const tokens = (event.inputTokens ?? 0) + (event.outputTokens ?? 0) + (event.cacheWriteTokens ?? 0);
      return `+${count(tokens)} tokens${event.costUsd !== undefined ? `, ${usd(event.costUsd)}` : ""}${event.model !== undefined ? ` (${event.model})` : ""}`;
    }
    case "verification.ran":
      return `${event.name} ${event.passed ? "passed" : "failed"}${event.command !== undefined ? `: ${event.command}` : ""}`;
    case "session.started":
      return `agent ${event.agent ?? "?"}${event.model !== undefined ? `, model ${event.model}` : ""}`;
    case "session.ended":
      return event.reason ?? "";
    case "task.started":
      return `${event.task}${event.taskType !== undefined ? ` (${event.taskType})` : ""}`;
    case "task.ended":
      return `${event.task}: ${event.status}`;
    case "iteration.ended":
      return event.outcome ?? "";
    case "completion.claimed":
      return `"done" (${event.level})`;
    case "human.budget_extended":
      return `+${amountOf(event.resource, event.amount)} ${event.resource === "usd" ? "" : event.resource} (${event.meter ?? "session"})`.replace(
        "  ",
        " ",
      );
    case "human.alert_acknowledged":
      return `alert ${event.alertId}`;
    case "human.spec_approved":
      return `${event.spec} approved (${event.hash.slice(0, 12)})`;
    case "human.task_approved":
      return `task ${event.task} of run ${event.run} approved (${event.commit.slice(0, 12)})`;
    case "guard.tampered":
      return event.detail;
    case "human.budget_reset":
    case "human.circuit_acknowledged":
    case "human.circuit_reset":
    case "human.confirmed":
      return "";
  }
}
