/** A plan's graph checked, whatever its format: unique ids, known deps and checks, no cycle. */
import type { PlanNode } from "../control/types.js";
import { planProblems, type PlanProblem } from "./yaml-source.js";

/** Where something was written: the file, its line, and the field path a person can find it by. */
export interface Place {
  file: string;
  line: number;
  path: string;
}

/** A node as a plan format declared it, with the places of its parts for messages. */
export interface DraftNode {
  /** The node; `deps` and `checks` as written (not yet checked). */
  node: PlanNode;
  /** The node's `id` field. */
  idPlace: Place;
  /** One per entry of `node.deps`. */
  depPlaces: Place[];
  /** One per entry of `node.checks`. */
  checkPlaces: Place[];
}

/** `file:line` of a place, as PlanNode.at and the messages give it. */
export function placeText(place: Place): string {
  return `${place.file}:${place.line}`;
}

/** Where a graph check keeps what it finds, so every problem of the plan is said at once. */
type Problems = PlanProblem[];

function fail(problems: Problems, place: Place, message: string): void {
  problems.push({ file: place.file, line: place.line, message: `${place.path}: ${message}` });
}

/** A character no title, id or criterion may hold: the C0 controls and DEL (a tab and, in criteria, a newline aside). */
// eslint-disable-next-line no-control-regex -- control characters are exactly what it refuses
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex -- as above
const CONTROL_IN_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f]/;

/** The code point of the first control character `pattern` finds in `text`, as U+XXXX. */
function controlOf(text: string, pattern: RegExp): string | null {
  const found = pattern.exec(text)?.[0];
  return found === undefined ? null : `U+${found.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * Refuses control characters where reins writes a node's text: its id and title go into commit messages
 * (a NUL fails every commit; a newline could add a `Reins-Task:` trailer), its criteria into prompts.
 */
function checkText({ node, idPlace }: DraftNode, problems: Problems): void {
  const inId = controlOf(node.id, CONTROL);
  if (inId !== null) fail(problems, idPlace, `the id holds a control character (${inId}): remove it`);
  const inTitle = controlOf(node.title, CONTROL);
  if (inTitle !== null)
    fail(
      problems,
      idPlace,
      `the title of "${node.id}" holds a control character (${inTitle}): titles go into commit messages; remove it`,
    );
  for (const criterion of node.acceptance) {
    const inCriterion = controlOf(criterion, CONTROL_IN_TEXT);
    if (inCriterion !== null)
      fail(
        problems,
        idPlace,
        `an acceptance criterion of "${node.id}" holds a control character (${inCriterion}): remove it`,
      );
  }
}

/**
 * Checks the graph of a plan and returns its nodes in plan order: ids are unique, every dep and check
 * names something that exists, no node depends on itself, on a node containing it or on a node it contains,
 * no id, title or criterion holds a control character, and there is no dependency cycle, counting the hierarchy (a parent's deps hold for its descendants and a
 * node is done only when its descendants are). Every problem found throws at once, one line each naming file:line.
 */
export function checkGraph(drafts: readonly DraftNode[], checkNames: readonly string[]): PlanNode[] {
  const problems: Problems = [];
  const byId = new Map<string, DraftNode>();
  for (const draft of drafts) {
    checkText(draft, problems);
    const first = byId.get(draft.node.id);
    if (first)
      fail(problems, draft.idPlace, `duplicate id "${draft.node.id}" (first at ${placeText(first.idPlace)})`);
    else byId.set(draft.node.id, draft);
  }
  const known = new Set(checkNames);
  const defined = checkNames.length > 0 ? `defined: ${checkNames.join(", ")}` : "the plan defines no checks";
  for (const { node, depPlaces, checkPlaces } of drafts) {
    node.checks.forEach((name, index) => {
      if (!known.has(name)) fail(problems, checkPlaces[index]!, `unknown check "${name}" (${defined})`);
    });
    node.deps.forEach((dep, index) => {
      const place = depPlaces[index]!;
      if (!byId.has(dep)) return fail(problems, place, `unknown id "${dep}"`);
      if (dep === node.id) return fail(problems, place, `"${node.id}" depends on itself`);
      if (ancestors(node.id, byId).includes(dep))
        fail(problems, place, `"${node.id}" depends on "${dep}", which contains it`);
      if (ancestors(dep, byId).includes(node.id))
        fail(problems, place, `"${node.id}" depends on "${dep}", which it contains`);
    });
  }
  // A cycle is looked for only in a graph whose edges all hold; else it would be told from broken ones.
  const cycle = problems.length === 0 ? findCycle(drafts, byId) : null;
  if (cycle)
    problems.push({
      file: cycle.place.file,
      line: cycle.place.line,
      message: `dependency cycle: ${cycle.text}`,
    });
  if (problems.length > 0) throw planProblems([...problems].sort((a, b) => a.line - b.line));
  return drafts.map(({ node }) => ({
    ...node,
    deps: [...new Set(node.deps)],
    checks: [...new Set(node.checks)],
  }));
}

/** The ids of a node's ancestors, nearest first. */
function ancestors(id: string, byId: ReadonlyMap<string, DraftNode>): string[] {
  const found: string[] = [];
  for (
    let parent = byId.get(id)?.node.parent ?? null;
    parent !== null;
    parent = byId.get(parent)?.node.parent ?? null
  )
    found.push(parent);
  return found;
}

/** Nodes a cycle message names before it elides the middle. */
const MAX_CYCLE_NAMES = 16;

/** An edge of the waiting graph; `dep` edges are the ones a person wrote. */
interface Edge {
  to: number;
  /** For a dep edge: the node that declared it and which of its deps. */
  dep?: { from: number; index: number; to: number };
}

/**
 * Finds a dependency cycle, if any. Each node is two vertices, "may start" and "is done": start waits for
 * the done of each dep and for its parent's start (inherited deps); done waits for each child's done, and a
 * leaf's done for its own start. A cycle among these is a plan that can never finish.
 */
function findCycle(
  drafts: readonly DraftNode[],
  byId: ReadonlyMap<string, DraftNode>,
): { text: string; place: Place } | null {
  const index = new Map(drafts.map((draft, i) => [draft.node.id, i]));
  const start = (i: number) => 2 * i;
  const done = (i: number) => 2 * i + 1;
  const edges: Edge[][] = Array.from({ length: 2 * drafts.length }, () => []);
  drafts.forEach(({ node }, i) => {
    node.deps.forEach((dep, d) => {
      const to = index.get(dep)!;
      edges[start(i)]!.push({ to: done(to), dep: { from: i, index: d, to } });
    });
    if (node.parent !== null) edges[start(i)]!.push({ to: start(index.get(node.parent)!) });
    for (const child of node.children) edges[done(i)]!.push({ to: done(index.get(child)!) });
    if (node.children.length === 0) edges[done(i)]!.push({ to: start(i) });
  });

  // Iterative depth-first search: a plan of thousands of tasks in a chain must not overflow the stack.
  const color = new Uint8Array(edges.length); // 0 unseen, 1 on the path, 2 finished
  for (let root = 0; root < edges.length; root++) {
    if (color[root] !== 0) continue;
    const path: { vertex: number; next: number; via: Edge | null }[] = [{ vertex: root, next: 0, via: null }];
    color[root] = 1;
    while (path.length > 0) {
      const frame = path[path.length - 1]!;
      const edge = edges[frame.vertex]![frame.next++];
      if (!edge) {
        color[frame.vertex] = 2;
        path.pop();
        continue;
      }
      if (color[edge.to] === 0) {
        color[edge.to] = 1;
        path.push({ vertex: edge.to, next: 0, via: edge });
      } else if (color[edge.to] === 1) {
        const from = path.findIndex((f) => f.vertex === edge.to);
        const cycleEdges = [...path.slice(from + 1).map((f) => f.via!), edge];
        return describeCycle(
          cycleEdges.flatMap((e) => (e.dep ? [e.dep] : [])),
          drafts,
          byId,
        );
      }
    }
  }
  return null;
}

/**
 * Names a cycle by the deps a person wrote, starting at the earliest node in plan order: `a → b → c → a`.
 * When the cycle goes through the hierarchy, the step from a dep to the node whose dep comes next is the tree
 * path between them: `a → C2 → C1/a` (a depends on C2, C2 on C1, and C1 contains a).
 */
function describeCycle(
  deps: { from: number; index: number; to: number }[],
  drafts: readonly DraftNode[],
  byId: ReadonlyMap<string, DraftNode>,
): { text: string; place: Place } {
  const first = deps.reduce((best, dep, i) => (dep.from < deps[best]!.from ? i : best), 0);
  const ordered = [...deps.slice(first), ...deps.slice(0, first)];
  const id = (i: number) => drafts[i]!.node.id;
  const steps = ordered.map((dep, i) =>
    treePath(id(dep.to), id(ordered[(i + 1) % ordered.length]!.from), byId),
  );
  const head = ordered[0]!;
  const names = [id(head.from), ...steps];
  // A ring of thousands stays one readable line: its start and its end, with the count between.
  const shown =
    names.length > MAX_CYCLE_NAMES
      ? [...names.slice(0, 6), `… ${names.length - 11} more …`, ...names.slice(-5)]
      : names;
  return {
    text: shown.join(" → "),
    place: drafts[head.from]!.depPlaces[head.index]!,
  };
}

/** The tree path between a node and one of its ancestors or descendants, outer first: `C1/a`. */
function treePath(a: string, b: string, byId: ReadonlyMap<string, DraftNode>): string {
  if (a === b) return a;
  const up = (from: string, to: string) => {
    const chain = [from];
    for (const parent of ancestors(from, byId)) {
      chain.push(parent);
      if (parent === to) return chain.reverse().join("/");
    }
    return null;
  };
  return up(b, a) ?? up(a, b) ?? `${a}…${b}`;
}
