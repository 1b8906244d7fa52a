/** A run's checkpoint: what the store keeps after every step so the run resumes from it. */
import type { RunState } from "../control/types.js";
import type { StoredRun } from "../../base/core/store.js";
import { ReinsError } from "../../base/core/errors.js";
import type { SectionHashes } from "../spec/section-hashes.js";
import type { RunMeta } from "./run-trace.js";
import { outcomeOf } from "../control/index.js";

/** Everything a resumed run needs that the trace's length does not say. */
export interface Checkpoint {
  meta: RunMeta;
  state: RunState;
  /** Bytes of the trace this state stands for; a resume cuts the trace back to them. */
  traceBytes: number;
  /** The next action key and step number. */
  keys: { next: number; step: number };
  /** Worktrees of tasks in flight (WIP above 1): task → path and the commit it started from. */
  worktrees: Record<string, { path: string; base: string }>;
  /** The recorded hashes of the spec sections the plan names, as of this step (absent: the plan names none). */
  spec?: SectionHashes;
  /** The run branch's commit reins last made or started from (absent in runs of older versions). */
  tip?: string;
}

/** How a run stands, for lists: running, paused (until a person acts), or how it ended. */
export function runStatus(state: RunState): string {
  if (state.finished === null) return state.paused !== null ? "paused" : "running";
  // A finished run is its outcome: proven, failed, paused, unverified, unwitnessed or unproven.
  return outcomeOf(state, state.finished).kind;
}

/** Task counts by status, tokens and cost: the summary a list of runs shows. */
export function runSummary(meta: RunMeta, state: RunState): Record<string, unknown> {
  const counts: Record<string, number> = {};
  let tokens = 0;
  let costUsd = 0;
  for (const task of Object.values(state.tasks)) {
    counts[task.status] = (counts[task.status] ?? 0) + 1;
    tokens += task.tokens;
    costUsd += task.costUsd;
  }
  return {
    plan: meta.plan,
    agent: meta.agent,
    branch: meta.branch,
    tasks: Object.keys(state.tasks).length,
    counts,
    iterations: state.iterations,
    tokens,
    costUsd: Math.round(costUsd * 1e6) / 1e6,
    paused: state.paused,
  };
}

/** The store record of a checkpoint. */
export function checkpointOf(checkpoint: Checkpoint, now: number): StoredRun {
  return {
    id: checkpoint.meta.run,
    status: runStatus(checkpoint.state),
    updatedAt: now,
    summary: runSummary(checkpoint.meta, checkpoint.state),
    checkpoint,
  };
}

/** The checkpoint of a stored run, checked for the fields a resume reads. */
export function checkpointFrom(stored: StoredRun): Checkpoint {
  const c = stored.checkpoint as Partial<Checkpoint> | null;
  if (
    c === null ||
    typeof c !== "object" ||
    typeof c.traceBytes !== "number" ||
    c.meta === undefined ||
    c.state === undefined ||
    c.keys === undefined
  )
    throw new ReinsError("usage", `run ${stored.id}: its checkpoint in the store is not one reins wrote`);
  return {
    meta: c.meta,
    state: c.state,
    traceBytes: c.traceBytes,
    keys: c.keys,
    worktrees: c.worktrees ?? {},
    ...(c.spec !== undefined ? { spec: c.spec } : {}),
    ...(typeof c.tip === "string" ? { tip: c.tip } : {}),
  };
}
