/** What a person watching `reins run` sees: the task tree on a terminal, plain lines when piped. */
import type { RunDecision, RunState, TaskStatus } from "../control/types.js";

const ICON: Record<TaskStatus, string> = {
  pending: "·",
  in_progress: "▶",
  verifying: "…",
  done: "✔",
  failed: "✘",
  canceled: "–",
};

/** One line per decision worth telling: transitions, schedules, retries, holds, the proof. */
export function decisionLine(decision: RunDecision): string | null {
  switch (decision.kind) {
    case "transition":
      return `${decision.task}: ${decision.from} → ${decision.to} (${decision.why})`;
    case "scheduled":
      return `${decision.task}: ${decision.mode === "fix" ? "fix-only iteration" : "iteration"} ${decision.attempt}`;
    case "retry_queued":
      return `${decision.task}: retry after a ${decision.class} failure`;
    case "held":
      return `${decision.task}: held (${decision.why})`;
    case "drift":
      return `${decision.task}: ${decision.why}`;
    case "approved":
      return `${decision.task}: its edited tests approved by ${decision.by} (${decision.reason})`;
    case "proof":
      // The clauses only: the run's last line says what they add up to, with the first cause.
      return `done proof: ${decision.proof.clauses.map((c) => `${c.holds ? "✔" : "✘"} ${c.name}`).join(", ")}`;
    case "ignored":
      return null;
  }
}

/** The task tree with each node's status (leaves' own, parents' aggregate from the leaves below). */
export function treeLines(state: RunState): string[] {
  const out: string[] = [];
  const statusOf = (id: string): TaskStatus => {
    const task = state.tasks[id];
    if (task !== undefined) return task.status;
    const leaves = (state.nodes[id]?.children ?? []).map(statusOf);
    if (leaves.includes("failed")) return "failed";
    if (leaves.every((s) => s === "done" || s === "canceled")) return "done";
    if (leaves.every((s) => s === "pending")) return "pending";
    return "in_progress";
  };
  const walk = (id: string, depth: number) => {
    const node = state.nodes[id];
    if (node === undefined) return;
    const task = state.tasks[id];
    const extra =
      task === undefined
        ? ""
        : `${task.attempts > 0 ? `  ${task.attempts} iteration(s)` : ""}${task.fixOnly ? "  fix-only" : ""}${task.noop ? "  no-op" : ""}${task.tokens > 0 ? `  ${task.tokens.toLocaleString("en")} tokens` : ""}`;
    out.push(`${"  ".repeat(depth)}${ICON[statusOf(id)]} ${id}  ${node.title}${extra}`);
    for (const child of node.children) walk(child, depth + 1);
  };
  for (const id of state.order) if (state.nodes[id]?.parent === null) walk(id, 0);
  const tokens = Object.values(state.tasks).reduce((n, t) => n + t.tokens, 0);
  const cost = Object.values(state.tasks).reduce((n, t) => n + t.costUsd, 0);
  out.push(
    `iterations ${state.iterations}/${state.settings.maxIterations}  tokens ${tokens.toLocaleString("en")}  $${cost.toFixed(4)}`,
  );
  return out;
}

/**
 * A progress writer. On a terminal it redraws the tree in place under the latest line; piped, it writes
 * one plain line per decision, so a log reads top to bottom.
 */
export function progressWriter(write: (text: string) => void, terminal: boolean) {
  let drawn = 0;
  // A task held for the same reason step after step is told once.
  const held = new Map<string, string>();
  return (state: RunState, decisions: RunDecision[]) => {
    const told = decisions.filter((d) => {
      if (d.kind !== "held") {
        if ("task" in d) held.delete(d.task);
        return true;
      }
      if (held.get(d.task) === d.why) return false;
      held.set(d.task, d.why);
      return true;
    });
    const lines = told.map(decisionLine).filter((l): l is string => l !== null);
    if (!terminal) {
      for (const line of lines) write(`${line}\n`);
      return;
    }
    const erase = drawn > 0 ? `\x1b[${drawn}A\x1b[J` : "";
    const tree = treeLines(state);
    write(`${erase}${lines.map((l) => `${l}\n`).join("")}${tree.join("\n")}\n`);
    drawn = tree.length;
  };
}
