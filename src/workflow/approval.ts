/**
 * The human gate's record: `reins approve` appends `human.spec_approved` (who, why, the spec's content hash)
 * to the scope `spec:<path>` through the same path every human action takes, and the workflow reads the
 * approvals back from that scope's log.
 */
import type { Policy } from "../core/policy.js";
import type { Store } from "../core/store.js";
import { recordAction } from "../people/actions.js";
import { specFileKey } from "../spec/snapshot.js";
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

/** Every approval recorded for `spec`, oldest first, whatever content it approved. */
export async function approvalsOf(store: Store, spec: string): Promise<ApprovalFact[]> {
  const scope = specScope(spec);
  const out: ApprovalFact[] = [];
  const page = 500;
  for (let from = 0; ;) {
    const records = await store.events(scope, { from, limit: page });
    for (const { event, seq } of records) {
      from = Math.max(from, seq + 1);
      if (event.kind === "human.spec_approved" && event.spec === specFileKey(spec))
        out.push({ hash: event.hash, by: event.by, reason: event.reason ?? null, at: event.at });
    }
    if (records.length < page) return out;
  }
}
