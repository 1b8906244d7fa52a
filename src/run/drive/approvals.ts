/**
 * A person's approval of judges a run's agent changed, its tests, fixtures or runner configuration (see
 * TaskRun.judgeChanges):
 * `reins approve --task` records `human.task_approved` in the run's scope, naming the task's commit; a
 * resumed run reads the approvals back and counts the task as proven again. Never while a process drives
 * the run: its agents run as children of that process, so an approval then could be the agent's own.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { recordAction } from "../../guard/people/actions.js";
import type { RunState } from "../control/types.js";
import { ReinsError } from "../../base/core/errors.js";
import type { Policy } from "../../base/core/policy.js";
import type { Store } from "../../base/core/store.js";
import { checkpointFrom } from "./checkpoint.js";
import { driverOf } from "./run-lock.js";
import { runDir } from "./run-trace.js";

/** The store scope a run records in. */
export const runScope = (run: string): string => `run:${run}`;

/** The tasks of `state` whose changed judges await a person. */
export function awaitingApproval(state: RunState): string[] {
  return state.order.filter((id) => {
    const task = state.tasks[id];
    return task?.status === "done" && task.judgeChanges !== undefined && task.judgeChanges.approved === null;
  });
}

/** The newest run of this project (its trace is here) with a task awaiting approval. */
async function newestAwaiting(store: Store, root: string): Promise<string> {
  const run = (await store.runs()).find(
    (r) => r.status === "awaiting_approval" && existsSync(join(runDir(root, r.id), "trace.jsonl")),
  );
  if (run === undefined)
    throw new ReinsError("usage", "no run has a task awaiting approval (name one with --run <id>)");
  return run.id;
}

/**
 * Records that `by` approved the judges `task`'s agent changed in `run` (the newest run awaiting approval
 * when omitted), as the task is committed now. Refused while a process drives the run, and for a task
 * with nothing awaiting approval. Returns the run and the commit approved.
 */
export async function approveTask(
  store: Store,
  policy: Policy,
  root: string,
  request: { run?: string; task: string; by: string; reason: string },
  now: number,
): Promise<{ run: string; commit: string; files: string[] }> {
  const run = request.run ?? (await newestAwaiting(store, root));
  const stored = await store.run(run);
  if (stored === null) throw new ReinsError("usage", `no run ${run} in ${store.location}`);
  const driver = driverOf(runDir(root, run));
  if (driver !== null)
    throw new ReinsError(
      "usage",
      `run ${run} is being driven by process ${driver}: approve once it has ended (an approval while it runs could be its agent's)`,
    );
  const { state } = checkpointFrom(stored);
  const task = state.tasks[request.task];
  const edited = task?.judgeChanges;
  if (task === undefined || edited === undefined || edited.approved !== null || task.commit === null) {
    const waiting = awaitingApproval(state);
    throw new ReinsError(
      "usage",
      `task ${request.task} of run ${run} awaits no approval${waiting.length > 0 ? ` (these do: ${waiting.join(", ")})` : ""}`,
    );
  }
  await recordAction(
    store,
    policy,
    root,
    runScope(run),
    {
      kind: "human.task_approved",
      run,
      task: request.task,
      commit: task.commit,
      by: request.by,
      reason: request.reason,
    },
    now,
    { create: true },
  );
  return { run, commit: task.commit, files: edited.files };
}

/**
 * The approvals recorded for `run` that answer a task awaiting one in `state`: recorded for the commit the
 * task has now (an approval of an earlier commit of a reopened task does not carry over).
 */
export async function approvalsFor(
  store: Store,
  run: string,
  state: RunState,
): Promise<{ task: string; by: string; reason: string }[]> {
  const waiting = new Set(awaitingApproval(state));
  if (waiting.size === 0) return [];
  const found = new Map<string, { task: string; by: string; reason: string }>();
  const page = 500;
  for (let from = 0; ;) {
    const records = await store.events(runScope(run), { from, limit: page });
    for (const { event, seq } of records) {
      from = Math.max(from, seq + 1);
      if (event.kind !== "human.task_approved" || event.run !== run || !waiting.has(event.task)) continue;
      if (state.tasks[event.task]?.commit !== event.commit) continue;
      found.set(event.task, { task: event.task, by: event.by, reason: event.reason ?? "" });
    }
    if (records.length < page) break;
  }
  return state.order.flatMap((id) => {
    const approval = found.get(id);
    return approval === undefined ? [] : [approval];
  });
}
