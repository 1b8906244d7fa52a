/** The done proof (seed 004): the clauses that must all hold before a run may end as done. */
import { aggregates } from "./aggregate.js";
import { readiness } from "./graph.js";
import { isTerminal } from "./task-state.js";
import type { DoneProof, Evidence, ProofClause, RunState } from "./types.js";
import { counted } from "../../base/text/plural.js";

/** The evidence that makes a done task proven (see Evidence). */
const PROVEN: ReadonlySet<Evidence> = new Set(["witnessed", "already_done", "no_behaviour"]);

/** Lists ids for evidence, the first 20 of them: enough to act on, short enough to read. */
function list(ids: readonly string[]): string {
  return ids.length <= 20 ? ids.join(", ") : `${ids.slice(0, 20).join(", ")} and ${ids.length - 20} more`;
}

function clause(
  name: ProofClause["name"],
  offenders: readonly string[],
  ok: string,
  bad: string,
): ProofClause {
  return offenders.length === 0
    ? { name, holds: true, evidence: ok }
    : { name, holds: false, evidence: `${bad}: ${list(offenders)}` };
}

/**
 * Computes the done proof of a state, each clause with its evidence naming the ids that break it. Runnable
 * means eligible by the plan, whatever the limits: a ready task held by WIP, a pause or the iteration cap
 * still breaks "no runnable task", because the run did not finish it.
 */
export function doneProof(state: RunState): DoneProof {
  const aggregate = aggregates(state);
  const runnable: string[] = [];
  const retrying: string[] = [];
  const unblocked: string[] = [];
  const doomed: string[] = [];
  const open: string[] = [];
  for (const id of state.order) {
    const task = state.tasks[id];
    if (task === undefined) continue;
    const idle = !Object.hasOwn(state.inFlight, id);
    if (!isTerminal(task)) open.push(`${id} (${task.status})`);
    if (task.status === "pending") {
      const ready = readiness(state, id, aggregate);
      if (ready.kind === "doomed") doomed.push(`${id} (dependency ${ready.dep} ${ready.why})`);
      if (ready.kind === "ready" && idle) {
        unblocked.push(id);
        runnable.push(`${id} (ready)`);
      }
    } else if (task.status === "failed" && !task.permanent) {
      retrying.push(`${id} (at ${task.retryAt ?? state.now})`);
      if (idle && (task.retryAt ?? 0) <= state.now) runnable.push(`${id} (retry due)`);
    } else if ((task.status === "in_progress" || task.status === "verifying") && idle) {
      runnable.push(`${id} (${task.status}, nothing in flight)`);
    }
  }
  const unproven = state.order.flatMap((id) => {
    const task = state.tasks[id];
    if (task?.status !== "done") return [];
    const evidence = task.evidence ?? "unverified";
    // Checks that pass only through the agent's change to their judges stand on a person's word alone.
    if (evidence === "changed_judges" && task.judgeChanges?.approved != null) return [];
    return PROVEN.has(evidence) ? [] : [`${id} (${evidence})`];
  });
  const hunksMissed = state.order.flatMap((id) => {
    const task = state.tasks[id];
    const hunks = task?.hunks;
    if (task?.status !== "done" || hunks === undefined) return [];
    const missed = hunks.unwitnessed.length + hunks.untried;
    return missed === 0 ? [] : [`${id} (${missed} of ${counted(hunks.total, "hunk")})`];
  });
  const tampered = state.order.flatMap((id) => {
    const said = state.tasks[id]?.tampering;
    return said === undefined || said.length === 0 ? [] : [`${id} (${said[0]})`];
  });
  const awaiting = state.order.flatMap((id) => {
    const task = state.tasks[id];
    const edited = task?.judgeChanges;
    return task?.status !== "done" || edited === undefined || edited.approved !== null
      ? []
      : [`${id} (${edited.files.join(", ")})`];
  });
  const inFlight = Object.entries(state.inFlight).map(([key, kind]) => `${key || "run"} (${kind})`);
  const clauses: ProofClause[] = [
    clause("no_runnable_task", runnable, "no task is ready, due for retry or stalled", "runnable"),
    clause("nothing_in_flight", inFlight, "no action awaits an answer", "in flight"),
    clause("no_retry_pending", retrying, "no retry is scheduled", "retry pending"),
    clause(
      "graph_stable",
      [...unblocked.map((id) => `${id} (unblocked)`), ...doomed],
      "readiness and dependency cancellation are at a fixpoint",
      "would change",
    ),
    clause(
      "every_task_terminal",
      open,
      Object.keys(state.tasks).length === 1
        ? "the one task is terminal"
        : `all ${counted(Object.keys(state.tasks).length, "task")} are terminal`,
      "open",
    ),
    clause(
      "every_change_witnessed",
      unproven,
      "every done task's checks witnessed its change (or it was already done, or changes no behaviour)",
      "not witnessed",
    ),
    clause(
      "judges_untouched",
      tampered,
      "no agent touched what judges the work (commits, branches, git hooks)",
      "a person must look: the agent touched what judges its work, and reins undid it",
    ),
    clause(
      "changed_judges_approved",
      awaiting,
      "no task's agent changed what judges it (its tests, fixtures, runner configuration), or a person approved the change",
      "judges changed by the agent, awaiting a person's approval (reins approve --task)",
    ),
    state.settings.witness === "hunks"
      ? clause(
          "every_hunk_witnessed",
          hunksMissed,
          "every hunk of every done task's change is witnessed on its own (witness: hunks)",
          "hunks no check witnesses alone (witness: hunks)",
        )
      : {
          name: "every_hunk_witnessed",
          holds: true,
          evidence:
            hunksMissed.length === 0
              ? "every hunk tried is witnessed on its own"
              : `reported, not required (witness: change): ${list(hunksMissed)}`,
        },
    state.reportWritten
      ? { name: "report_written", holds: true, evidence: "the report is written" }
      : { name: "report_written", holds: false, evidence: "no report is written yet" },
  ];
  return { holds: clauses.every((c) => c.holds), clauses };
}
