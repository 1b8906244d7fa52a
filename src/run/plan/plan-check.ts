/**
 * `reins plan check`: what a plan means before anything runs. The task tree with its deps and the checks
 * naming each task, the notes the loader wrote, the tasks no check verifies, and the first actions the run
 * would take, from the control core itself (so what it says is what `reins run` would do). Pure.
 */
import { namesChecks } from "../control/gates.js";
import { ancestorsOf, isLeaf } from "../control/graph.js";
import { resolveSettings } from "../control/settings.js";
import { begin } from "../control/step.js";
import type { PlanNode, RunAction } from "../control/types.js";
import type { LoadedPlan } from "./load-plan.js";
import { counted, plural } from "../../base/text/plural.js";

/** One node as the check shows it. */
export interface CheckedNode {
  id: string;
  title: string;
  kind: PlanNode["kind"];
  depth: number;
  deps: string[];
  /** The checks it names itself. */
  checks: string[];
  /** For a leaf: the checks its ancestors name, which judge it too. */
  inherited: string[];
  type: string | null;
}

/** What `reins plan check` reports. */
export interface PlanCheck {
  source: string;
  format: LoadedPlan["format"];
  name: string;
  nodes: CheckedNode[];
  leaves: number;
  deps: number;
  checks: { name: string; tier: string; command: string }[];
  notes: string[];
  /** Leaves no check verifies (no fast check in the plan, none named by them or an ancestor). */
  unchecked: string[];
  /** What the run would do first, one line each. */
  first: string[];
}

/**
 * The leaves of `plan` that no check verifies: the plan has no fast check (those run after every
 * iteration of every task), and neither the leaf nor an ancestor names one. `reins run` refuses to start
 * them without `--unverified`.
 */
export function uncheckedLeaves(plan: Pick<LoadedPlan, "nodes" | "checks">): string[] {
  if (plan.checks.some((c) => c.tier === "fast")) return [];
  const nodes = Object.fromEntries(plan.nodes.map((n) => [n.id, n]));
  const state = { nodes, checks: {}, tasks: {} };
  return plan.nodes.filter((n) => isLeaf(n) && !namesChecks(state, n.id)).map((n) => n.id);
}

function describe(action: RunAction): string | null {
  switch (action.kind) {
    case "check_noop":
      return `run ${action.task}'s checks (${action.checks.join(", ")}) before calling the agent: all green closes it without the agent`;
    case "run_agent":
      return `call the agent on ${action.task} (iteration ${action.attempt}, ${action.mode})`;
    case "write_report":
      return "write the report: nothing is left to run";
    default:
      return `${action.kind}${"task" in action ? ` ${action.task}` : ""}`;
  }
}

/** Checks `plan` as `reins run` would read it, without running anything. */
export function checkPlan(plan: LoadedPlan): PlanCheck {
  const byId = Object.fromEntries(plan.nodes.map((n) => [n.id, n]));
  const nodes = plan.nodes.map((n): CheckedNode => {
    const ancestors = ancestorsOf(byId, n.id);
    return {
      id: n.id,
      title: n.title,
      kind: n.kind,
      depth: ancestors.length,
      deps: n.deps,
      checks: n.checks,
      inherited: isLeaf(n) ? [...new Set(ancestors.flatMap((a) => byId[a]?.checks ?? []))] : [],
      type: n.type ?? null,
    };
  });
  const unchecked = uncheckedLeaves(plan);
  const first =
    unchecked.length > 0
      ? []
      : begin({
          kind: "run.started",
          at: 0,
          run: "plan-check",
          nodes: plan.nodes,
          checks: plan.checks,
          settings: resolveSettings(plan.settings, plan.source),
        }).actions.flatMap((a) => describe(a) ?? []);
  return {
    source: plan.source,
    format: plan.format,
    name: plan.name,
    nodes,
    leaves: plan.nodes.filter(isLeaf).length,
    deps: plan.nodes.reduce((n, node) => n + node.deps.length, 0),
    checks: plan.checks.map((c) => ({ name: c.name, tier: c.tier, command: c.command })),
    notes: plan.notes,
    unchecked,
    first,
  };
}

/**
 * The check as text for a person: the tree (titles cut at 100 characters; `--json` has them whole), the
 * checks, the notes, and what the run would do first.
 */
export function planCheckText(check: PlanCheck): string {
  const out = [
    `${check.source}: ${check.format} plan "${check.name}", ${counted(check.leaves, "task")} to run in ${counted(check.nodes.length, "node")}, ${counted(check.deps, "dependency edge")}, ${counted(check.checks.length, "check")}`,
    "",
    "tasks:",
  ];
  for (const n of check.nodes) {
    const title = n.title.length > 100 ? `${n.title.slice(0, 99)}…` : n.title;
    const parts = [`${"  ".repeat(n.depth + 1)}${n.id}  ${title}`];
    if (n.type !== null) parts.push(`type: ${n.type}`);
    if (n.deps.length > 0) parts.push(`after: ${n.deps.join(", ")}`);
    const checks = [...n.checks, ...n.inherited.map((c) => `${c} (inherited)`)];
    if (checks.length > 0) parts.push(`checks: ${checks.join(", ")}`);
    out.push(parts.join("  ·  "));
  }
  out.push("", "checks:");
  if (check.checks.length === 0) out.push("  none");
  for (const c of check.checks)
    out.push(`  ${c.name} (${c.tier}${c.tier === "fast" ? ", after every iteration" : ""}): ${c.command}`);
  if (check.notes.length > 0) out.push("", "notes:", ...check.notes.map((n) => `  ${n}`));
  out.push("");
  if (check.unchecked.length > 0) {
    const some = check.unchecked.slice(0, 10).join(", ");
    const more = check.unchecked.length > 10 ? ` and ${check.unchecked.length - 10} more` : "";
    out.push(
      `reins run would refuse it: no check verifies ${check.unchecked.length === check.leaves ? "any task" : `${plural(check.unchecked.length, "task")} ${some}${more}`} (give them checks, or run with --unverified; such a run ends unverified)`,
    );
  } else out.push("reins run would start with:", ...check.first.map((line) => `  ${line}`));
  return `${out.join("\n")}\n`;
}
