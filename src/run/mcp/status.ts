/** `update_task_status`: a node's status, with `complete` gated on a passing verify of the tree as it is. */
import { ReinsError } from "../../base/core/errors.js";
import { headCommit, isGitTree, treeFingerprint } from "./fingerprint.js";
import { adviceOf, memoOf, readLedger, record, type NodeStatus, type PlanEvent } from "./ledger.js";
import { levelOf, nodeOf } from "./plan-view.js";
import type { McpContext } from "./context.js";

/** The statuses an agent may set; `pending` is where every node starts (set `in_progress` to reopen one). */
export const SETTABLE = ["in_progress", "complete", "failed", "canceled"] as const;
export type SettableStatus = (typeof SETTABLE)[number];

/** What a status change did. */
export interface StatusChange {
  task: string;
  status: NodeStatus;
  previous: NodeStatus;
  /** One line on what it rests on (the verify that let `complete` through, the base of `in_progress`). */
  note: string;
  /** What reins' guards said on recording it (a red check while a new task starts, a WIP limit). */
  advice: string[];
}

/** A refused `complete`: the reason is the error's message, one line for the agent. */
export class CompletionRefused extends ReinsError {
  constructor(message: string) {
    super("conflict", message);
    this.name = "CompletionRefused";
  }
}

/**
 * Runs the functions it is given one at a time, in the order given, each after the one before ended
 * (rejected or not): the status changes of one server, so two at once never both read the same statuses.
 */
export function oneAtATime(): <T>(fn: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return (fn) => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };
}

/**
 * Sets node `id`'s status. `complete` is refused (CompletionRefused) unless the node's last verify passed
 * and the working tree's fingerprint is still the one that verify ran on: any edit since, committed or
 * not, needs a new verify. The refusal is not recorded; a change is, in the plan scope (ledger.ts).
 */
export async function updateStatus(
  ctx: McpContext,
  id: string,
  status: SettableStatus,
): Promise<StatusChange> {
  const view = ctx.plan();
  const node = nodeOf(view, id);
  const level = levelOf(node.kind);
  const at = (ctx.now ?? Date.now)();
  const memo = memoOf(await readLedger(ctx.store, view.scope), node.id);
  const change = (note: string, advice: string[]): StatusChange => ({
    task: node.id,
    status,
    previous: memo.status,
    note,
    advice,
  });
  // Set again (a retried call, two at once): said, not recorded twice.
  if (memo.status === status) return change(`${node.id} is already ${status}`, []);

  if (status === "in_progress") {
    const commit = (await isGitTree(ctx.root)) ? await headCommit(ctx.root) : null;
    const event: PlanEvent = {
      kind: "task.started",
      at,
      task: node.id,
      ...(node.type !== undefined ? { taskType: node.type } : {}),
      ...(commit !== null ? { commit } : {}),
    };
    const advice = adviceOf(await record(ctx.store, view.scope, ctx.policy, [event]));
    const base = memo.base ?? commit;
    return change(
      base === null
        ? `${node.id} is in progress`
        : `${node.id} is in progress; its diff is taken from ${base.slice(0, 12)}`,
      advice,
    );
  }

  if (status === "failed" || status === "canceled") {
    const advice = adviceOf(
      await record(ctx.store, view.scope, ctx.policy, [{ kind: "task.ended", at, task: node.id, status }]),
    );
    return change(`${node.id} is ${status}`, advice);
  }

  const tool = `verify_${level}_completion(${node.id})`;
  const verify = memo.verify;
  if (verify === null)
    throw new CompletionRefused(
      `rejected: ${node.id} cannot be complete: ${tool} has not run; run it, fix what it finds, then set complete`,
    );
  if (!verify.passed)
    throw new CompletionRefused(
      `rejected: ${node.id} cannot be complete: the last ${tool} failed; fix what it found and run it again`,
    );
  const now = await treeFingerprint(ctx.root);
  if (verify.fingerprint !== now)
    throw new CompletionRefused(
      `rejected: ${node.id} cannot be complete: the working tree changed after the last passing ${tool}; run it again on the tree as it is`,
    );
  const decisions = await record(ctx.store, view.scope, ctx.policy, [
    { kind: "completion.claimed", at, task: node.id, level },
  ]);
  const claim = decisions[0];
  if (claim?.verdict === "block")
    throw new CompletionRefused(
      `rejected: ${node.id} cannot be complete: reins' guards refused it: ${claim.instructions.join(" ") || "no reason given"}`,
    );
  const ended = await record(ctx.store, view.scope, ctx.policy, [
    { kind: "task.ended", at, task: node.id, status: "done" },
  ]);
  return change(
    `${node.id} is complete: ${tool} passed at ${new Date(verify.at).toISOString()} on this tree (${now.slice(0, 12)})`,
    adviceOf([...decisions, ...ended]),
  );
}
