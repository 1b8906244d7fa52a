/** The churn escalation level of a task: how far its consecutive failures have gone under the policy. */
import type { Policy } from "./policy.js";

/** The escalation level of a task after `failures` consecutive failures: 0 normal .. 3 halted. */
export function churnLevel(failures: number, policy: Policy): number {
  const { warningAt, interventionAt, haltAt } = policy.churn;
  if (failures >= haltAt) return 3;
  if (failures >= interventionAt) return 2;
  if (failures >= warningAt) return 1;
  return 0;
}
