/** The native plan format (reins.plan.yaml) validated field by field and flattened into draft nodes. */
import type { CheckDef, NodeKind, PlanNode } from "../control/types.js";
import { allIssues, formatPath, issueText } from "./issue-text.js";
import type { DraftNode, Place } from "./plan-graph.js";
import { FIELD_NAMES, planSchema, type PlanFile, type PlanFileNode } from "./plan-schema.js";
import type { PlanSettings } from "./plan-settings.js";
import { planError, planProblems, type PathSegment, type SourceData } from "./yaml-source.js";

/** @default 10 minutes, as CheckDef documents. */
const DEFAULT_CHECK_TIMEOUT_MS = 600_000;

/** The key holding each level's children, in the hierarchy modules → components → tasks → subtasks. */
const CHILDREN_KEY = { module: "components", component: "tasks", task: "subtasks", subtask: null } as const;
const CHILD_KIND = { module: "component", component: "task", task: "subtask", subtask: null } as const;

/** A native plan file read and checked field by field, before its graph is checked. */
export interface NativeDraft {
  name: string;
  checks: CheckDef[];
  settings: PlanSettings;
  drafts: DraftNode[];
  /** What `import:` asks for: a file relative to the plan, and checks every imported top node requires. */
  import: { file: string; checks: string[]; checkPlaces: Place[]; place: Place } | null;
}

/**
 * Validates a native plan (reins.plan.yaml) against its schema and flattens its hierarchy depth first.
 * The first problem, in the order of the file, throws one line: `file:line: field.path: what is wrong`.
 */
export function readNativePlan(source: SourceData, file: string): NativeDraft {
  const place = (path: readonly PathSegment[], key = false): Place => ({
    file,
    line: source.lineOf(path, key),
    path: formatPath(path),
  });
  if (source.value === null || source.value === undefined)
    throw planError(file, 1, "(top level): the plan is empty");
  const parsed = planSchema.safeParse(source.value, { reportInput: true, jitless: true });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const text = issueText(issue, FIELD_NAMES);
      return { ...text, line: source.lineOf(text.path, text.atKey) };
    });
    throw planProblems(
      allIssues(problems).map((p) => ({
        file,
        line: p.line,
        message: `${formatPath(p.path)}: ${p.message}`,
      })),
    );
  }
  const plan = parsed.data;
  checkWorkGiven(plan, place);
  const drafts: DraftNode[] = [];
  if (plan.modules) collect(plan.modules, "module", ["modules"], null, drafts, place);
  if (plan.tasks) collect(plan.tasks, "task", ["tasks"], null, drafts, place);
  return {
    name: plan.name,
    checks: Object.entries(plan.checks ?? {}).map(([name, check]) => ({
      name,
      command: check.command,
      tier: check.tier,
      format: check.format ?? "exit",
      ...(check.report === undefined ? {} : { report: check.report }),
      timeoutMs: check.timeout ?? DEFAULT_CHECK_TIMEOUT_MS,
    })),
    settings: settingsOf(plan, place),
    drafts,
    import: importOf(plan, place),
  };
}

/** Exactly one of `modules`, `tasks` and `import` says what the work is. */
function checkWorkGiven(plan: PlanFile, place: (path: PathSegment[], key?: boolean) => Place): void {
  const given = (["modules", "tasks", "import"] as const).filter((key) => plan[key] !== undefined);
  if (given.length === 0) {
    const at = place([]);
    throw planError(at.file, at.line, "(top level): no work: give modules, tasks or import");
  }
  const second = given[1];
  if (second) {
    const at = place([second], true);
    throw planError(at.file, at.line, `${second}: give only one of modules, tasks and import`);
  }
}

function collect(
  items: PlanFileNode[],
  kind: NodeKind,
  path: PathSegment[],
  parent: string | null,
  drafts: DraftNode[],
  place: (path: PathSegment[], key?: boolean) => Place,
): void {
  items.forEach((item, i) => {
    const at = [...path, i];
    const childKey = CHILDREN_KEY[kind];
    const childKind = CHILD_KIND[kind];
    const children = (childKey === null ? undefined : item[childKey]) ?? [];
    const acceptance = item.acceptance === undefined ? [] : [item.acceptance].flat();
    const node: PlanNode = {
      id: item.id,
      kind,
      title: item.title,
      deps: item.deps ?? [],
      priority: item.priority ?? 0,
      acceptance,
      checks: item.checks ?? [],
      ...(item.spec ? { spec: { file: item.spec.file, sections: item.spec.sections ?? [] } } : {}),
      ...(item.type ? { type: item.type } : {}),
      parent,
      children: children.map((child) => child.id),
      at: `${place(at).file}:${place(at).line}`,
    };
    drafts.push({
      node,
      idPlace: place([...at, "id"]),
      depPlaces: node.deps.map((_, d) => place([...at, "deps", d])),
      checkPlaces: node.checks.map((_, c) => place([...at, "checks", c])),
    });
    if (childKey !== null && childKind !== null && children.length > 0)
      collect(children, childKind, [...at, childKey], item.id, drafts, place);
  });
}

function settingsOf(plan: PlanFile, place: (path: PathSegment[]) => Place): PlanSettings {
  const { retries, backoff, ...flat } = plan.settings ?? {};
  if (backoff?.baseMs !== undefined && backoff.maxMs !== undefined && backoff.baseMs > backoff.maxMs) {
    const at = place(["settings", "backoff", "baseMs"]);
    throw planError(at.file, at.line, `${at.path}: ${backoff.baseMs} is more than maxMs (${backoff.maxMs})`);
  }
  const settings: PlanSettings = {};
  for (const [key, value] of Object.entries(flat))
    if (value !== undefined) Object.assign(settings, { [key]: value });
  if (retries)
    settings.retries = Object.fromEntries(Object.entries(retries).filter(([, v]) => v !== undefined));
  if (backoff)
    settings.backoff = {
      ...(backoff.baseMs === undefined ? {} : { baseMs: backoff.baseMs }),
      ...(backoff.maxMs === undefined ? {} : { maxMs: backoff.maxMs }),
    };
  return settings;
}

function importOf(plan: PlanFile, place: (path: PathSegment[]) => Place): NativeDraft["import"] {
  if (plan.import === undefined) return null;
  const spec = typeof plan.import === "string" ? { file: plan.import, checks: undefined } : plan.import;
  const checks = spec.checks ?? [];
  return {
    file: spec.file,
    checks,
    checkPlaces: checks.map((_, i) => place(["import", "checks", i])),
    place: place(typeof plan.import === "string" ? ["import"] : ["import", "file"]),
  };
}
