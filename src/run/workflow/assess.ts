/**
 * Where a spec-driven project stands, from facts the shell gathered just now: the spec on disk, the
 * approvals recorded for it, the plan, and the tasks commits show done. Pure and re-entrant: no saved step
 * is read, so every start of `reins run --spec` sees the project as it is.
 */
import type { PlanNode } from "../control/types.js";
import type { PhaseId, StepId } from "./definition.js";

/** The spec file, read now. */
export type SpecFact =
  { path: string; exists: false } | { path: string; exists: true; hash: string; sections: string[] };

/** One recorded approval of the spec: who, why, and the content hash it approved. */
export interface ApprovalFact {
  hash: string;
  by: string;
  reason: string | null;
  at: number;
}

/** The plan file, read and checked now. */
export type PlanFact =
  | { path: string; exists: false }
  | { path: string; exists: true; valid: false; error: string }
  | { path: string; exists: true; valid: true; nodes: PlanNode[] };

/** What the shell gathered. */
export interface WorkflowFacts {
  spec: SpecFact;
  /** Every approval recorded for this spec's path, any content, but those recorded while an agent drafted. */
  approvals: ApprovalFact[];
  /** How many approvals were recorded while the workflow's agent drafted the spec (they never count). */
  duringDrafting?: number;
  plan: PlanFact;
  /** Task ids shown done: by a `Reins-Task:` trailer on the current branch, or a finished run's state. */
  done: string[];
}

/** A component of the plan: a top-level node and the tasks (leaves) under it. */
export interface ComponentView {
  id: string;
  title: string;
  tasks: string[];
  done: string[];
}

/** Where the project stands and what is missing to go on. */
export interface Assessment {
  phase: PhaseId;
  /** The step to work on now, or done when every task is. */
  step: StepId | "done";
  /** Whether the spec's current content is approved; the approval that counts, when one does. */
  approval: ApprovalFact | null;
  /** What must happen before the step can end, one line each. */
  missing: string[];
  /** The plan's components with their tasks, once there is a valid plan. */
  components: ComponentView[];
  /** The component being built, when building. */
  component: string | null;
}

/** The leaves under `id`, in plan order. */
function leavesOf(nodes: readonly PlanNode[], id: string): string[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const out: string[] = [];
  const visit = (nid: string) => {
    const node = byId.get(nid);
    if (node === undefined) return;
    if (node.children.length === 0) out.push(nid);
    else for (const child of node.children) visit(child);
  };
  visit(id);
  return out;
}

/**
 * The plan's components, in plan order, each with its leaves: the nodes of kind component when the plan has
 * any, else its top-level nodes (a top-level task is a component of one).
 */
export function componentsOf(nodes: readonly PlanNode[], done: ReadonlySet<string>): ComponentView[] {
  const hasComponents = nodes.some((n) => n.kind === "component");
  return nodes
    .filter((n) => (hasComponents ? n.kind === "component" : n.parent === null))
    .map((n) => {
      const tasks = leavesOf(nodes, n.id);
      return { id: n.id, title: n.title, tasks, done: tasks.filter((t) => done.has(t)) };
    });
}

/** The approval that counts for the spec's current content: the newest of those with its hash. */
export function approvalFor(spec: SpecFact, approvals: readonly ApprovalFact[]): ApprovalFact | null {
  if (!spec.exists) return null;
  const matching = approvals.filter((a) => a.hash === spec.hash);
  return matching.reduce<ApprovalFact | null>((a, b) => (a === null || b.at >= a.at ? b : a), null);
}

/**
 * Assesses the workflow from `facts`: no spec is step 1; a spec whose current content no approval names
 * waits at the gate (still step 1); no valid plan is planning; a valid plan is building, on the first
 * component with a task left, until every task is done.
 */
export function assess(facts: WorkflowFacts): Assessment {
  const { spec, plan } = facts;
  const base = { approval: null, components: [], component: null };
  if (!spec.exists)
    return {
      ...base,
      phase: "requirements",
      step: "draft-spec",
      missing: [`the spec ${spec.path} does not exist`],
    };
  const approval = approvalFor(spec, facts.approvals);
  if (approval === null) {
    const during = facts.duringDrafting ?? 0;
    const older =
      during > 0
        ? ` (${during === 1 ? "one was" : `${during} were`} recorded while the agent drafted it: a person approves it after reading it)`
        : facts.approvals.length > 0
          ? " (an approval of an earlier content does not count)"
          : "";
    return {
      ...base,
      phase: "requirements",
      step: "draft-spec",
      missing: [`an approval of ${spec.path} as it is now${older}`],
    };
  }
  if (!plan.exists)
    return {
      ...base,
      approval,
      phase: "planning",
      step: "determine-dependencies",
      missing: [`a plan at ${plan.path}`],
    };
  if (!plan.valid)
    return {
      ...base,
      approval,
      phase: "planning",
      step: "determine-dependencies",
      missing: [`a valid plan: ${plan.error}`],
    };
  const components = componentsOf(plan.nodes, new Set(facts.done));
  const at = components.findIndex((c) => c.done.length < c.tasks.length);
  if (at === -1) return { ...base, approval, components, phase: "building", step: "done", missing: [] };
  const current = components[at]!;
  const left = current.tasks.length - current.done.length;
  // A component not begun after one that is finished: the loop is at step 7, moving on.
  const moving = current.done.length === 0 && at > 0;
  return {
    approval,
    components,
    component: current.id,
    phase: "building",
    step: moving ? "repeat-component" : "iterate-tasks",
    missing: [`${left} task(s) of component ${current.id} not done`],
  };
}

/**
 * What is wrong with a plan for this spec, one line each: every task (leaf) must name, in `spec:`, the spec
 * file and sections of it that exist.
 */
export function planSpecProblems(
  nodes: readonly PlanNode[],
  specPath: string,
  sections: readonly string[],
  sameFile: (named: string) => boolean,
  findSection: (name: string) => boolean,
): string[] {
  const problems: string[] = [];
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const named = (node: PlanNode | undefined): PlanNode["spec"] => {
    for (let n = node; n !== undefined; n = n.parent === null ? undefined : byId.get(n.parent))
      if (n.spec !== undefined && n.spec.sections.length > 0) return n.spec;
    return undefined;
  };
  for (const node of nodes) {
    if (node.children.length > 0) continue;
    const spec = named(node);
    if (spec === undefined) {
      problems.push(`task ${node.id} names no section of ${specPath} in spec:`);
      continue;
    }
    if (!sameFile(spec.file)) problems.push(`task ${node.id} names ${spec.file}, not ${specPath}`);
    else
      for (const section of spec.sections)
        if (!findSection(section))
          problems.push(
            `task ${node.id} names the section "${section}", which ${specPath} does not have (it has: ${sections.join(", ")})`,
          );
  }
  return problems;
}
