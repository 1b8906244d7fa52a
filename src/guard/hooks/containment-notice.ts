/** The notice that an agent is not contained: said at every turn's start while reins cannot keep its judges. */
import { containmentOf, notContainedLine, runningBin } from "../../base/config/boundary.js";
import type { NoticeSource } from "./notice-source.js";

/**
 * Tells the model at each turn's start when the agent's boundary is missing or incomplete (docs/threat-model.md):
 * "reins cannot keep this agent from switching it off". Checked afresh each time (a few small file reads), so
 * a sandbox the agent or a person turned off is said at the next prompt.
 */
export function containmentNotices(root: string, env: NodeJS.ProcessEnv): NoticeSource {
  // The daemon opens a project with the REINS_* variables its call sent: HOME and PATH are its own.
  const full = { ...process.env, ...env };
  return (when, agent) => {
    if (when !== "turn") return [];
    const containment = containmentOf(agent, root, full, runningBin());
    return containment.contained ? [] : [notContainedLine(containment)];
  };
}
