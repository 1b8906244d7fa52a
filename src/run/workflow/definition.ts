/**
 * The spec-driven workflow as data: three phases, seven steps, the transitions between them and the human
 * gate between Requirements and Planning. Nothing here runs; `assess.ts` finds where a project stands, the
 * shell (`run-spec.ts`) acts on it, and `toMermaid` draws it.
 */

/** A phase of the workflow. */
export type PhaseId = "requirements" | "planning" | "building";

/** A step of the workflow, in the order they are first met. */
export type StepId =
  | "draft-spec"
  | "determine-dependencies"
  | "identify-components"
  | "select-component"
  | "break-into-tasks"
  | "iterate-tasks"
  | "repeat-component";

/** Where a transition leads: a step, or the end of the workflow. */
export type Target = StepId | "done";

export interface PhaseDef {
  id: PhaseId;
  title: string;
}

export interface StepDef {
  id: StepId;
  /** 1 to 7. */
  n: number;
  phase: PhaseId;
  title: string;
  /** What the step produces, in one line. */
  produces: string;
}

/** A human gate: the transition it guards is taken only once a person has acted, as a recorded human action. */
export interface GateDef {
  id: string;
  title: string;
  /** The command that records the action; `<spec>` stands for the spec's path. */
  command: string;
}

export interface TransitionDef {
  from: StepId;
  to: Target;
  /** When it is taken, in words. */
  when: string;
  /** The gate that must be passed first, by id. */
  gate?: string;
}

export interface WorkflowDefinition {
  phases: PhaseDef[];
  steps: StepDef[];
  gates: GateDef[];
  transitions: TransitionDef[];
}

/** The workflow of `reins run --spec`. */
export const WORKFLOW: WorkflowDefinition = {
  phases: [
    { id: "requirements", title: "Requirements" },
    { id: "planning", title: "Planning" },
    { id: "building", title: "Building" },
  ],
  steps: [
    {
      id: "draft-spec",
      n: 1,
      phase: "requirements",
      title: "Draft the specification",
      produces: "the spec, markdown with ## sections, committed",
    },
    {
      id: "determine-dependencies",
      n: 2,
      phase: "planning",
      title: "Determine dependencies",
      produces: "the order of the work: deps: between tasks",
    },
    {
      id: "identify-components",
      n: 3,
      phase: "planning",
      title: "Identify components",
      produces: "the plan's top-level nodes",
    },
    {
      id: "select-component",
      n: 4,
      phase: "planning",
      title: "Select the next component",
      produces: "the first component with work left",
    },
    {
      id: "break-into-tasks",
      n: 5,
      phase: "planning",
      title: "Break it into tasks",
      produces: "tasks with checks, each naming the spec sections it implements",
    },
    {
      id: "iterate-tasks",
      n: 6,
      phase: "building",
      title: "Iterate through the tasks",
      produces: "one commit per proven task (Reins-Task: trailer)",
    },
    {
      id: "repeat-component",
      n: 7,
      phase: "building",
      title: "Repeat for the next component",
      produces: "the next component selected, or the workflow done",
    },
  ],
  gates: [
    {
      id: "spec-approval",
      title: "a person approves the spec",
      command: 'reins approve <spec> --reason "..."',
    },
  ],
  transitions: [
    { from: "draft-spec", to: "determine-dependencies", when: "spec approved", gate: "spec-approval" },
    { from: "determine-dependencies", to: "identify-components", when: "dependencies known" },
    { from: "identify-components", to: "select-component", when: "components known" },
    { from: "select-component", to: "break-into-tasks", when: "a component has work left" },
    { from: "break-into-tasks", to: "iterate-tasks", when: "a valid plan" },
    { from: "iterate-tasks", to: "iterate-tasks", when: "a task proven, more left in the component" },
    { from: "iterate-tasks", to: "repeat-component", when: "the component's tasks are done" },
    { from: "repeat-component", to: "select-component", when: "another component has work left" },
    { from: "repeat-component", to: "done", when: "every task done" },
  ],
};

/** The step with id `id`; throws on an id the definition lacks (a bug, not input). */
export function stepOf(definition: WorkflowDefinition, id: StepId): StepDef {
  const step = definition.steps.find((s) => s.id === id);
  if (step === undefined) throw new Error(`the workflow has no step ${id}`);
  return step;
}

/**
 * What is wrong with a definition, one line each; empty when it holds together: unique step numbers, every
 * step in a known phase, every transition between known steps through known gates, and every step reachable
 * from the first.
 */
export function checkDefinition(definition: WorkflowDefinition): string[] {
  const problems: string[] = [];
  const phases = new Set(definition.phases.map((p) => p.id));
  const steps = new Set<string>(definition.steps.map((s) => s.id));
  const gates = new Set(definition.gates.map((g) => g.id));
  const numbers = new Set<number>();
  for (const step of definition.steps) {
    if (!phases.has(step.phase)) problems.push(`step ${step.id}: unknown phase ${step.phase}`);
    if (numbers.has(step.n)) problems.push(`step ${step.id}: number ${step.n} used twice`);
    numbers.add(step.n);
  }
  for (const t of definition.transitions) {
    if (!steps.has(t.from)) problems.push(`transition from unknown step ${t.from}`);
    if (t.to !== "done" && !steps.has(t.to)) problems.push(`transition to unknown step ${t.to}`);
    if (t.gate !== undefined && !gates.has(t.gate))
      problems.push(`transition through unknown gate ${t.gate}`);
  }
  const first = definition.steps[0];
  if (first === undefined) return [...problems, "no steps"];
  const reached = new Set<string>([first.id]);
  for (let grew = true; grew;) {
    grew = false;
    for (const t of definition.transitions)
      if (reached.has(t.from) && !reached.has(t.to)) {
        reached.add(t.to);
        grew = true;
      }
  }
  for (const step of definition.steps)
    if (!reached.has(step.id)) problems.push(`step ${step.id} cannot be reached`);
  if (!reached.has("done")) problems.push("the workflow never ends");
  return problems;
}

const nodeId = (id: string) => id.replace(/[^A-Za-z0-9]/g, "_");
/** Text safe inside a quoted Mermaid label: quotes and angle brackets as entity codes. */
const label = (text: string) => text.replace(/"/g, "#quot;").replace(/</g, "#lt;").replace(/>/g, "#gt;");

/** The definition as a Mermaid flowchart: a subgraph per phase, a hexagon per gate, one edge per transition. */
export function toMermaid(definition: WorkflowDefinition): string {
  const lines = ["flowchart TD"];
  for (const phase of definition.phases) {
    lines.push(`  subgraph ${nodeId(phase.id)}["${label(phase.title)}"]`);
    for (const step of definition.steps.filter((s) => s.phase === phase.id))
      lines.push(`    ${nodeId(step.id)}["${step.n}. ${label(step.title)}"]`);
    lines.push("  end");
  }
  for (const gate of definition.gates)
    lines.push(`  gate_${nodeId(gate.id)}{{"gate: ${label(gate.title)}<br/>${label(gate.command)}"}}`);
  lines.push('  done(["done"])');
  for (const t of definition.transitions) {
    const to = t.to === "done" ? "done" : nodeId(t.to);
    if (t.gate !== undefined) {
      lines.push(`  ${nodeId(t.from)} --> gate_${nodeId(t.gate)}`);
      lines.push(`  gate_${nodeId(t.gate)} -->|"${label(t.when)}"| ${to}`);
    } else lines.push(`  ${nodeId(t.from)} -->|"${label(t.when)}"| ${to}`);
  }
  return `${lines.join("\n")}\n`;
}

/** The steps as text, one a line under their phase, with the gate where it stands. */
export function stepsText(definition: WorkflowDefinition): string {
  const out: string[] = [];
  for (const phase of definition.phases) {
    out.push(`${phase.title}`);
    for (const step of definition.steps.filter((s) => s.phase === phase.id)) {
      out.push(`  ${step.n}. ${step.title}: ${step.produces}`);
      for (const t of definition.transitions.filter((x) => x.from === step.id && x.gate !== undefined)) {
        const gate = definition.gates.find((g) => g.id === t.gate);
        if (gate !== undefined) out.push(`  -- human gate: ${gate.title} (${gate.command})`);
      }
    }
  }
  return `${out.join("\n")}\n`;
}
