/**
 * The human gate's record: `reins approve` appends `human.spec_approved` (who, why, the spec's content hash)
 * to the scope `spec:<path>` through the same path every human action takes, and the workflow reads the
 * approvals back from that scope's log.
 */
import { randomUUID } from "node:crypto";
import type { Policy } from "../../base/core/policy.js";
import type { Store } from "../../base/core/store.js";
import { recordAction } from "../../guard/people/actions.js";
import { specFileKey } from "../spec/section-hashes.js";
import type { ApprovalFact } from "./assess.js";

/** The store scope of a spec's approvals: `spec:<path relative to the project>`. */
export function specScope(spec: string): string {
  return `spec:${specFileKey(spec)}`;
}

/** Records that `by` approved `spec` with content hash `hash`, because `reason`. */
export async function recordApproval(
  store: Store,
  policy: Policy,
  root: string,
  approval: { spec: string; hash: string; by: string; reason: string },
  now: number,
): Promise<void> {
  const spec = specFileKey(approval.spec);
  await recordAction(
    store,
    policy,
    root,
    specScope(spec),
    { kind: "human.spec_approved", spec, hash: approval.hash, by: approval.by, reason: approval.reason },
    now,
    { create: true },
  );
}

/** The task name of the marks the workflow leaves in a spec's scope while its agent drafts the spec. */
const DRAFTING = "draft-spec";

/**
 * Marks in the spec's scope that the workflow's agent starts (or has ended) drafting it. An approval
 * recorded between the two marks was recorded while the agent ran, so by the agent (an unhooked agent can
 * run `reins approve` like anyone), and never counts. Direct to the store, not spooled: the workflow cannot
 * go on without its store anyway, and a mark that could not be written must stop the drafting.
 */
export async function markDrafting(
  store: Store,
  policy: Policy,
  spec: string,
  mark: "started" | "ended",
  now: number,
): Promise<void> {
  const scope = specScope(spec);
  const base = { id: `drafting:${randomUUID()}`, scope, at: now, task: DRAFTING };
  await store.append(
    scope,
    [
      mark === "started"
        ? { ...base, kind: "task.started" }
        : { ...base, kind: "task.ended", status: "done" },
    ],
    policy,
  );
}

/** What the spec's scope holds: the approvals that count, and how many were recorded while an agent drafted. */
export interface Approvals {
  /** Every approval that counts, oldest first, whatever content it approved. */
  approvals: ApprovalFact[];
  /** Approvals recorded while the workflow's agent drafted the spec: they never count. */
  duringDrafting: number;
  /** Whether a drafting began and never ended (the workflow was killed while its agent drafted). */
  draftingOpen: boolean;
}

/**
 * The approvals recorded for `spec`, less those recorded while the workflow's agent drafted it (between a
 * drafting's marks, or after a mark that never ended).
 */
export async function approvalsOf(store: Store, spec: string): Promise<Approvals> {
  const scope = specScope(spec);
  const out: Approvals = { approvals: [], duringDrafting: 0, draftingOpen: false };
  const page = 500;
  for (let from = 0; ;) {
    const records = await store.events(scope, { from, limit: page });
    for (const { event, seq } of records) {
      from = Math.max(from, seq + 1);
      if (event.kind === "task.started" && event.task === DRAFTING) out.draftingOpen = true;
      else if (event.kind === "task.ended" && event.task === DRAFTING) out.draftingOpen = false;
      else if (event.kind === "human.spec_approved" && event.spec === specFileKey(spec)) {
        if (out.draftingOpen) out.duringDrafting += 1;
        else
          out.approvals.push({ hash: event.hash, by: event.by, reason: event.reason ?? null, at: event.at });
      }
    }
    if (records.length < page) return out;
  }
}
