/**
 * A run as the dashboard shows it: the plan's tree with each node's status, the last checks of each task,
 * why it is paused and the commands that let it go on, and the done proof once it finished. Built on the
 * server from the stored checkpoint with the control core's own `aggregates` and `doneProof`, so the page
 * computes nothing and a checkpoint that is not one reins wrote becomes a message, not a broken page.
 */
import { aggregates, doneProof } from "../run/control/index.js";
import type { DoneProof, TaskStatus } from "../run/control/types.js";
import type { StoredRun } from "../base/core/store.js";
import type { ScopeSummary } from "../base/core/summary.js";
import { checkRunState, isObject, own, type Json } from "./run-state-check.js";

/** The last result of one check of a task. */
export interface RunCheckView {
  name: string;
  /** fast, medium or slow, as the checkpoint says. */
  tier: string;
  passed: boolean;
  skipped: boolean;
  exitCode: number | null;
  failedTests: string[];
  tests: { passed: number; failed: number } | null;
  /** The tail of its output, as the driver kept it. */
  output: string;
}

/** One node of the plan, in plan order; `task` is set for units of work (leaves) only. */
export interface RunNodeView {
  id: string;
  kind: string;
  title: string;
  /** 0 for a top-level node. */
  depth: number;
  /** A leaf's own status; a parent's summed up from its leaves by the control core. */
  status: TaskStatus;
  /** Leaves under the node (itself, for a leaf) that are done, and all of them. */
  leaves: { done: number; total: number };
  tokens: number;
  costUsd: number;
  task: {
    attempts: number;
    fixOnly: boolean;
    noop: boolean;
    /** For a failed task: whether it is over for good (no retry). */
    permanent: boolean;
    commit: string | null;
    reason: string | null;
    checks: RunCheckView[];
    /**
     * Whether its change was witnessed (docs/proof.md): its evidence once known (`witnessed`,
     * `unwitnessed`, `already_done`, ...; null while it is not done), and the checks that went red with
     * its change set aside.
     */
    evidence: string | null;
    red: string[];
  } | null;
}

/** What `GET /api/runs/:id/view` answers. */
export interface RunView {
  id: string;
  /** The stored status: running, paused, proven or ended. */
  status: string;
  updatedAt: number;
  plan: string;
  agent: string;
  branch: string;
  base: string;
  iterations: number;
  maxIterations: number | null;
  tokens: number;
  costUsd: number;
  nodes: RunNodeView[];
  /** Why the run is paused, the guard scope it records in, and what a person types to let it go on. */
  paused: { reason: string; scope: string; commands: string[] } | null;
  finished: { proven: boolean } | null;
  /** The core's done proof of the stored state, once the run finished. */
  proof: DoneProof | null;
  /** Why the checkpoint could not be read; the other fields are then empty. */
  problem: string | null;
}

const text = (v: unknown): string => (typeof v === "string" ? v : "");
const textOrNull = (v: unknown): string | null => (typeof v === "string" ? v : null);
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s) => typeof s === "string") : []);

function checksOf(value: unknown): RunCheckView[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isObject).map((c) => ({
    name: text(c.name),
    tier: text(c.tier),
    passed: c.passed === true,
    skipped: c.skipped === true,
    exitCode: typeof c.exitCode === "number" ? c.exitCode : null,
    failedTests: strings(c.failedTests),
    tests: isObject(c.tests) ? { passed: num(c.tests.passed), failed: num(c.tests.failed) } : null,
    output: text(c.output),
  }));
}

/**
 * What a person types to let a paused run go on: act on what holds its guard scope now (an open breaker, a
 * paused budget), then resume. With no guard state, only the resume: the paused reason says the rest.
 */
export function goOnCommands(id: string, guard: ScopeSummary | null): string[] {
  const scope = `run:${id}`;
  const out: string[] = [];
  if (guard?.breaker.status === "open") out.push(`reins circuit reset ${scope} --reason "..."`);
  if (guard !== null && (guard.status === "paused" || guard.status === "exhausted")) {
    const session = guard.budget.find((b) => b.ratio >= 1);
    const line = session ?? guard.task?.budget.find((b) => b.ratio >= 1);
    const resource = line?.resource ?? "tokens";
    const options = `${resource === "tokens" ? "" : ` --resource ${resource}`}${session === undefined && line !== undefined ? " --task" : ""}`;
    out.push(
      `reins budget extend ${scope} <${resource === "tokens" ? "tokens" : "amount"}>${options} --reason "..."`,
    );
  }
  out.push(`reins run --resume ${id}`);
  return out;
}

/** The dashboard's view of a stored run; `guard` is the summary of its guard scope (`run:<id>`), if any. */
export function runView(run: StoredRun, guard: ScopeSummary | null): RunView {
  const summary = run.summary;
  const view: RunView = {
    id: run.id,
    status: run.status,
    updatedAt: run.updatedAt,
    plan: text(own(summary, "plan")),
    agent: text(own(summary, "agent")),
    branch: text(own(summary, "branch")),
    base: "",
    iterations: num(own(summary, "iterations")),
    maxIterations: null,
    tokens: num(own(summary, "tokens")),
    costUsd: num(own(summary, "costUsd")),
    nodes: [],
    paused: null,
    finished: null,
    proof: null,
    problem: null,
  };
  const checkpoint = run.checkpoint;
  const checked = isObject(checkpoint) ? checkRunState(checkpoint.state) : "it is not an object";
  if (typeof checked === "string")
    return { ...view, problem: `its checkpoint is not one reins wrote: ${checked}` };
  const { state, depth } = checked;
  const meta = isObject(checkpoint) && isObject(checkpoint.meta) ? checkpoint.meta : {};
  let aggregate: Record<string, TaskStatus>;
  let proof: DoneProof | null;
  try {
    aggregate = aggregates(state);
    proof = state.finished !== null && isObject(state.finished) ? doneProof(state) : null;
  } catch (error) {
    return { ...view, problem: `its checkpoint could not be read: ${String(error).split("\n")[0]}` };
  }
  // Leaves' figures summed into each ancestor, walking the plan order backwards (children come after parents).
  const sums = new Map<string, { done: number; total: number; tokens: number; costUsd: number }>();
  const nodes: RunNodeView[] = [];
  for (let i = state.order.length - 1; i >= 0; i--) {
    const id = state.order[i]!;
    const node = own(state.nodes, id) as Json;
    const task = (node.children as string[]).length > 0 ? null : (own(state.tasks, id) as Json);
    const sum =
      task === null
        ? (sums.get(id) ?? { done: 0, total: 0, tokens: 0, costUsd: 0 })
        : {
            done: task.status === "done" ? 1 : 0,
            total: 1,
            tokens: num(task.tokens),
            costUsd: num(task.costUsd),
          };
    const parent = node.parent as string | null;
    if (parent !== null) {
      const up = sums.get(parent) ?? { done: 0, total: 0, tokens: 0, costUsd: 0 };
      sums.set(parent, {
        done: up.done + sum.done,
        total: up.total + sum.total,
        tokens: up.tokens + sum.tokens,
        costUsd: up.costUsd + sum.costUsd,
      });
    }
    nodes.push({
      id,
      kind: text(node.kind),
      title: text(node.title),
      depth: depth.get(id) ?? 0,
      status:
        task !== null
          ? (task.status as TaskStatus)
          : Object.hasOwn(aggregate, id)
            ? aggregate[id]!
            : "pending",
      leaves: { done: sum.done, total: sum.total },
      tokens: sum.tokens,
      costUsd: Math.round(sum.costUsd * 1e6) / 1e6,
      task:
        task === null
          ? null
          : {
              attempts: num(task.attempts),
              fixOnly: task.fixOnly === true,
              noop: task.noop === true,
              permanent: task.permanent === true,
              commit: textOrNull(task.commit),
              reason: textOrNull(task.reason),
              checks: checksOf(task.lastChecks),
              evidence: textOrNull(task.evidence),
              red: isObject(task.witness) ? strings(task.witness.red) : [],
            },
    });
  }
  nodes.reverse();
  const settings: Json = isObject(state.settings) ? state.settings : {};
  return {
    ...view,
    plan: text(meta.plan) || view.plan,
    agent: text(meta.agent) || view.agent,
    branch: text(meta.branch) || view.branch,
    base: text(meta.base),
    iterations: num(state.iterations),
    maxIterations: typeof settings.maxIterations === "number" ? settings.maxIterations : null,
    nodes,
    paused:
      typeof state.paused === "string"
        ? { reason: state.paused, scope: `run:${run.id}`, commands: goOnCommands(run.id, guard) }
        : null,
    finished: isObject(state.finished) ? { proven: state.finished.proven === true } : null,
    proof,
  };
}
