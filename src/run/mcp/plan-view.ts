/** The plan as reins' MCP tools see it: its nodes by id, the checks each scope requires, its guard scope. */
import { statSync } from "node:fs";
import { ancestorsOf, own } from "../control/graph.js";
import type { CheckDef, NodeKind, PlanNode } from "../control/types.js";
import { ReinsError } from "../../base/core/errors.js";
import { loadPlan } from "../plan/index.js";

/** The completion level a node is verified and claimed at: a subtask is a task. */
export type Level = "task" | "component" | "module";

/** A loaded plan, indexed. */
export interface PlanView {
  name: string;
  /** The file it was read from. */
  file: string;
  /** The guard scope its verifies and statuses are recorded in: `plan:<name>`. */
  scope: string;
  nodes: Record<string, PlanNode>;
  /** Node ids in plan order. */
  order: string[];
  checks: Record<string, CheckDef>;
  /**
   * How what judges the work (check definitions, nodes' checks) differs in the file from what the server
   * started with, which it keeps using (planSource); empty when it does not.
   */
  judgesChanged: string[];
}

/** The level of a node kind. */
export function levelOf(kind: NodeKind): Level {
  return kind === "module" ? "module" : kind === "component" ? "component" : "task";
}

/** A user's text (an id, a section) for a one-line message: control characters out, long text cut. */
export function quoteInput(text: string, max = 80): string {
  // eslint-disable-next-line no-control-regex -- control characters are what it removes
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, " ");
  return JSON.stringify(clean.length > max ? `${clean.slice(0, max)}…` : clean);
}

/** Up to `max` names joined for a message, with how many more there are. */
export function someOf(names: readonly string[], max = 30): string {
  if (names.length === 0) return "none";
  const shown = names.slice(0, max).join(", ");
  return names.length > max ? `${shown} and ${names.length - max} more` : shown;
}

/** Builds the view of a plan read from `file`. */
export function planView(file: string): PlanView {
  const plan = loadPlan(file);
  // A scope is one line of at most 1024 characters; a plan's name is free text.
  // eslint-disable-next-line no-control-regex -- control characters are what it removes
  const name = plan.name.replace(/[\u0000-\u001f\u007f]/g, " ").slice(0, 200) || "plan";
  const nodes: Record<string, PlanNode> = {};
  for (const node of plan.nodes) nodes[node.id] = node;
  const checks: Record<string, CheckDef> = {};
  for (const check of plan.checks) checks[check.name] = check;
  return {
    name,
    file,
    scope: `plan:${name}`,
    nodes,
    order: plan.nodes.map((n) => n.id),
    checks,
    judgesChanged: [],
  };
}

/**
 * `fresh` judged as `pinned` was: its check definitions, and each node's checks as the node had them (a
 * node added since keeps only the checks `pinned` defines). An agent that edits the plan (a check's command
 * set to `true`, a task's checks emptied) changes nothing a verify runs; each difference is named.
 */
function pinJudges(pinned: PlanView, fresh: PlanView): PlanView {
  const changed: string[] = [];
  const same = (a: CheckDef, b: CheckDef) => JSON.stringify(a) === JSON.stringify(b);
  for (const [name, def] of Object.entries(fresh.checks)) {
    const was = own(pinned.checks, name);
    if (was === undefined) changed.push(`check ${name} was added`);
    else if (!same(was, def)) changed.push(`check ${name} was changed`);
  }
  for (const name of Object.keys(pinned.checks))
    if (own(fresh.checks, name) === undefined) changed.push(`check ${name} was removed`);
  const nodes: Record<string, PlanNode> = {};
  for (const [id, node] of Object.entries(fresh.nodes)) {
    const was = own(pinned.nodes, id);
    if (was !== undefined && was.checks.join("\n") !== node.checks.join("\n"))
      changed.push(`the checks of ${id} were changed`);
    const checks = was?.checks ?? node.checks.filter((c) => own(pinned.checks, c) !== undefined);
    nodes[id] = { ...node, checks };
  }
  return { ...fresh, nodes, checks: pinned.checks, judgesChanged: changed };
}

/**
 * The plan of `file`, read again when the file changes (its size or modification time), so a person's edit
 * of its tasks is seen without restarting the server; what judges the work stays as first read (pinJudges):
 * a new check takes a restart. A plan that cannot be read is an error of each call, not of the server:
 * `reins mcp` starts in a project that has no plan yet and says what is missing.
 */
export function planSource(find: () => string): () => PlanView {
  let cached: { key: string; view: PlanView } | null = null;
  let pinned: PlanView | null = null;
  return () => {
    const file = find();
    let key: string;
    try {
      const stat = statSync(file);
      key = `${file}:${stat.size}:${stat.mtimeMs}`;
    } catch {
      throw new ReinsError("usage", `the plan ${file} cannot be read`);
    }
    if (cached?.key !== key) {
      const fresh = planView(file);
      pinned ??= fresh;
      cached = { key, view: pinned.file === fresh.file ? pinJudges(pinned, fresh) : fresh };
    }
    return cached.view;
  };
}

/** The node `id`, or an error naming the known ones; `level` also requires its level (a verify tool's). */
export function nodeOf(view: PlanView, id: string, level?: Level): PlanNode {
  const node = own(view.nodes, id);
  if (node === undefined) {
    const known = level === undefined ? view.order : view.order.filter((n) => matches(view, n, level));
    throw new ReinsError(
      "not_found",
      `no ${level ?? "task"} ${quoteInput(id)} in plan ${view.name}; known: ${someOf(known)}`,
    );
  }
  if (level !== undefined && levelOf(node.kind) !== level)
    throw new ReinsError(
      "usage",
      `${node.id} is a ${node.kind}: verify it with verify_${levelOf(node.kind)}_completion`,
    );
  return node;
}

function matches(view: PlanView, id: string, level: Level): boolean {
  const node = own(view.nodes, id);
  return node !== undefined && levelOf(node.kind) === level;
}

/** Every node under `id`, depth first (not `id` itself). */
export function descendantsOf(view: PlanView, id: string): string[] {
  const out: string[] = [];
  const visit = (at: string) => {
    for (const child of own(view.nodes, at)?.children ?? []) {
      out.push(child);
      visit(child);
    }
  };
  visit(id);
  return out;
}

/**
 * The checks a verify of `id` runs, in the plan's order by tier: every fast check of the plan; the medium
 * checks named by the node, its ancestors or anything under it; the slow checks named by the node or
 * anything under it. For a leaf that is `reins run`'s gate before a task's commit (run/control/gates.ts
 * `noopGate`); a component or module adds its leaves' checks and its own slow ones, which `reins run` runs
 * when the last of its leaves completes. An ancestor's slow checks wait for the ancestor's own verify.
 */
export function scopeChecks(view: PlanView, id: string): CheckDef[] {
  const below = descendantsOf(view, id);
  const names = (ids: readonly string[]) => new Set(ids.flatMap((n) => own(view.nodes, n)?.checks ?? []));
  const medium = names([id, ...ancestorsOf(view.nodes, id), ...below]);
  const slow = names([id, ...below]);
  const all = Object.values(view.checks);
  return [
    ...all.filter((c) => c.tier === "fast"),
    ...all.filter((c) => c.tier === "medium" && medium.has(c.name)),
    ...all.filter((c) => c.tier === "slow" && slow.has(c.name)),
  ];
}

/** The spec files the plan names, in plan order, each once. */
export function specFiles(view: PlanView): string[] {
  return [...new Set(view.order.flatMap((id) => own(view.nodes, id)?.spec?.file ?? []))];
}
