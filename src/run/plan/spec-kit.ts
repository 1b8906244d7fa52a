/**
 * GitHub spec-kit's `tasks.md`, read as markdown (mdast with GFM task lists), not by regular expressions
 * over the file:
 * - each `## ` heading holding task items is a component (`## Phase 3: User Story 1` → `phase-3`), and
 *   each depends on the one before it;
 * - each task item `- [ ] T012 [P] [US1] Create model in src/models/user.py` is a task; nested task items
 *   are its subtasks; nested plain items and further paragraphs are its acceptance;
 * - a task without `[P]` depends on the task before it (and on the run of `[P]` tasks just before it); a
 *   `[P]` task waits for the last task without `[P]` before it in its phase, and for the earlier phases;
 *   "(depends on T012, T013)" in a task's text adds deps;
 * - task ids may carry a letter (`T049a`, `T037A`: a task inserted later); in a file whose tasks carry ids,
 *   a checkbox item without one is a review item (a "Validation Checklist"), not a task;
 * - `**Goal**:`, `**Purpose**:`, `**Independent Test**:` and `**Checkpoint**:` paragraphs of a phase are its
 *   acceptance.
 * A ticked box (`[X]`) is not taken as done: reins proves done itself, so the task stays and a note says so.
 */
import type { List, ListItem, Nodes, RootContent } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { gfm } from "micromark-extension-gfm";
import type { NodeKind, PlanNode } from "../control/types.js";
import { ReinsError } from "../../base/core/errors.js";
import type { DraftNode, Place } from "./plan-graph.js";
import { ID_PATTERN } from "./plan-schema.js";
import { shorten } from "./issue-text.js";
import {
  acceptanceLine,
  blankFrontMatter,
  folderName,
  groupId,
  parseTaskText,
  plainText,
  uniqueId,
} from "./spec-kit-text.js";
import { planError } from "./yaml-source.js";

/** A tasks.md read into plan nodes, before the graph is checked; notes say what was not taken as written. */
export interface SpecKitDraft {
  name: string;
  drafts: DraftNode[];
  notes: string[];
}

interface Group {
  id: string;
  title: string;
  line: number;
  acceptance: string[];
  items: Item[];
}

/** A task item as written, before its deps are worked out. */
interface Item {
  id: string;
  /** Whether it carries a task id (`T012`) as written, not one made up from its place. */
  named: boolean;
  title: string;
  line: number;
  parallel: boolean;
  checked: boolean;
  explicitDeps: string[];
  acceptance: string[];
  subtasks: Item[];
}

/**
 * Bounds of a tasks.md, checked before the markdown parser sees it: the parser's time grows with the square
 * of the number of lists and with the depth of nesting, so a hostile file of a few hundred kilobytes could
 * hold it for minutes. Real ones are tens of kilobytes and a few hundred items.
 */
export const MARKDOWN_LIMITS = { bytes: 256 * 1024, listItems: 1000, depth: 32 } as const;

/** Container markers (`>`, `-`, `1.`) opening a line. */
const CONTAINERS = /^(?:[ \t]*(?:>|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t])))+/;

function assertMarkdownBounds(text: string, file: string): void {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MARKDOWN_LIMITS.bytes)
    throw new ReinsError(
      "invalid_plan",
      `${file}: ${Math.ceil(bytes / 1024)} KB is too large for a tasks.md (at most ${MARKDOWN_LIMITS.bytes / 1024} KB)`,
    );
  let items = 0;
  for (const [index, line] of text.split("\n").entries()) {
    const prefix = CONTAINERS.exec(line)?.[0];
    if (!prefix) continue;
    const markers = prefix.match(/>|[-*+]|\d{1,9}[.)]/g)?.length ?? 0;
    if (markers > MARKDOWN_LIMITS.depth) throw planError(file, index + 1, "nesting too deep");
    if (/[-*+]|\d[.)]/.test(prefix) && ++items > MARKDOWN_LIMITS.listItems)
      throw planError(
        file,
        index + 1,
        `more than ${MARKDOWN_LIMITS.listItems} list items: too many for a plan`,
      );
  }
}

/** Reads a spec-kit tasks.md into plan nodes (not yet graph-checked). */
export function readSpecKit(text: string, file: string): SpecKitDraft {
  assertMarkdownBounds(text, file);
  const { name, loose, groups } = readTree(blankFrontMatter(text), file);
  const notes: string[] = [];
  dropReviewItems(loose, groups, file, notes);
  dropRepeatingSections(groups, file, notes);
  settleIds(loose, groups, file, notes);
  const drafts = toDrafts(loose, groups, file, notes);
  for (const { node, idPlace } of drafts)
    if (!ID_PATTERN.test(node.id)) throw planError(file, idPlace.line, `${shorten(node.id)}: not a valid id`);
  return { name: name ?? folderName(file) ?? "tasks", drafts, notes };
}

/** The file's title, its task items outside any `## ` section, and its sections, as written. */
interface Written {
  name: string | null;
  loose: Item[];
  groups: Group[];
}

/** Walks the markdown tree once: the `# ` title, each `## ` section with its acceptance and task items. */
function readTree(source: string, file: string): Written {
  const tree = fromMarkdown(source, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });
  const slice = (node: Nodes) =>
    source
      .slice(node.position?.start.offset ?? 0, node.position?.end.offset ?? 0)
      .replace(/\s+/g, " ")
      .trim();
  const lineOf = (node: Nodes) => node.position?.start.line ?? 1;
  const written: Written = { name: null, loose: [], groups: [] };
  const groupIds = new Set<string>();
  let current: Group | null = null;

  const readItem = (item: ListItem, depth: number, siblings: number): Item => {
    const [first, ...rest] = item.children;
    const paragraph = first?.type === "paragraph" ? first : null;
    // The paragraph's source may still hold the box when its text opens with markup (`[ ] **T000**`).
    const raw = paragraph ? slice(paragraph) : "";
    const parsed = parseTaskText(typeof item.checked === "boolean" ? raw.replace(/^\[[ xX]\]\s+/, "") : raw);
    const line = lineOf(item);
    if (!parsed.title)
      throw planError(file, line, `${shorten(parsed.id ?? "task")}: a task item has no text`);
    const own: Item = {
      id: parsed.id ?? "",
      named: parsed.id !== null,
      title: parsed.title,
      line,
      parallel: parsed.parallel,
      checked: item.checked === true,
      explicitDeps: parsed.deps,
      acceptance: [],
      subtasks: [],
    };
    const nested: ListItem[] = [];
    for (const child of paragraph ? rest : item.children) {
      if (child.type === "list") {
        for (const sub of child.children)
          if (sub.checked !== null && sub.checked !== undefined && depth === 0) nested.push(sub);
          else own.acceptance.push(...itemText(sub, slice));
      } else own.acceptance.push(slice(child));
    }
    own.subtasks = nested.map((sub, i) => readItem(sub, depth + 1, i));
    // An item without a T-number gets one from its place: the group's id and its position.
    if (!own.id) own.id = `${depth === 0 ? (current?.id ?? "task") : "sub"}-${siblings + 1}`;
    return own;
  };

  const readList = (list: List, into: Item[]) => {
    for (const item of list.children) {
      if (item.checked === true || item.checked === false) into.push(readItem(item, 0, into.length));
      else for (const child of item.children) if (child.type === "list") readList(child, into);
    }
  };

  for (const node of tree.children) {
    if (node.type === "heading" && node.depth === 1 && written.name === null) {
      written.name =
        plainText(node)
          .replace(/^tasks\s*:\s*/i, "")
          .trim() || null;
    } else if (node.type === "heading" && node.depth === 2) {
      const title = plainText(node).trim();
      current = {
        id: uniqueId(groupId(title, written.groups.length), groupIds),
        title,
        line: lineOf(node),
        acceptance: [],
        items: [],
      };
      written.groups.push(current);
    } else if (node.type === "paragraph" && current) {
      const label = acceptanceLine(slice(node));
      if (label) current.acceptance.push(label);
    } else if (node.type === "list") {
      readList(node, current ? current.items : written.loose);
    }
  }
  return written;
}

/** An item and all its subtasks, depth first. */
const all = (items: Item[]): Item[] => items.flatMap((item) => [item, ...all(item.subtasks)]);

/**
 * In a file whose tasks carry ids, a checkbox item without one is a review item of a checklist
 * ("Validation Checklist: all contracts have tests"), not work: it is left out, and a note says so.
 */
function dropReviewItems(loose: Item[], groups: Group[], file: string, notes: string[]): void {
  if (![...loose, ...groups.flatMap((g) => g.items)].some((item) => item.named)) return;
  const keep = (items: Item[], where: string) => {
    const left = items.filter((item) => !item.named);
    if (left.length > 0)
      notes.push(
        `${file}:${left[0]!.line}: ${left.length} checklist item(s) ${where}without a task id are review items, not tasks: left out`,
      );
    return items.filter((item) => item.named);
  };
  loose.splice(0, loose.length, ...keep(loose, ""));
  for (const group of groups) group.items = keep(group.items, `under "${group.title}" `);
}

/**
 * A section whose every task repeats one written before ("Parallel Execution Examples" listing T003, T006,
 * T009 again) shows tasks, it holds none: it is left out.
 */
function dropRepeatingSections(groups: Group[], file: string, notes: string[]): void {
  const seen = new Set<string>();
  for (const group of [...groups]) {
    const ids = group.items.filter((item) => item.named).map((item) => item.id);
    if (ids.length > 0 && ids.length === group.items.length && ids.every((id) => seen.has(id))) {
      notes.push(
        `${file}:${group.line}: "${shorten(group.title)}" only repeats tasks written earlier (${ids.join(", ")}): left out`,
      );
      groups.splice(groups.indexOf(group), 1);
      continue;
    }
    for (const item of all(group.items)) if (item.named) seen.add(item.id);
  }
}

/**
 * Ids are unique in a plan: a task id written twice (a slip in a long file) keeps both tasks, the second
 * under a suffixed id with a note; a dependency on it means the first. Ids made up from a place give way to
 * written ones.
 */
function settleIds(loose: Item[], groups: Group[], file: string, notes: string[]): void {
  const taken = new Set(groups.map((g) => g.id));
  const every = [...all(loose), ...groups.flatMap((g) => all(g.items))];
  for (const item of every.filter((i) => i.named)) {
    if (!taken.has(item.id)) {
      taken.add(item.id);
      continue;
    }
    const first = item.id;
    item.id = uniqueId(first, taken);
    notes.push(`${file}:${item.line}: task id ${first} is written twice; this one is read as ${item.id}`);
  }
  for (const item of every.filter((i) => !i.named && !/^sub-\d+$/.test(i.id)))
    item.id = uniqueId(item.id, taken);
}

/** The plan nodes: loose tasks first, then each section as a component over its tasks and subtasks. */
function toDrafts(loose: Item[], groups: Group[], file: string, notes: string[]): DraftNode[] {
  const drafts: DraftNode[] = [];
  const place = (line: number, path: string): Place => ({ file, line, path });
  // Subtasks of an item without a T-number are named after the task: T005.1, T005.2.
  const nameSubtasks = (item: Item) =>
    item.subtasks.forEach((sub, i) => {
      if (/^sub-\d+$/.test(sub.id)) sub.id = `${item.id}.${i + 1}`;
    });
  const addItems = (items: Item[], kind: NodeKind, parent: string | null) => {
    const deps = sequence(items);
    items.forEach((item, i) => {
      nameSubtasks(item);
      if (item.checked)
        notes.push(`${file}:${item.line}: ${item.id} is ticked in ${file}; reins verifies it again`);
      const allDeps = [...deps[i]!, ...item.explicitDeps.filter((dep) => !deps[i]!.includes(dep))];
      drafts.push(
        draft(
          { id: item.id, kind, title: item.title, deps: allDeps, acceptance: item.acceptance, parent },
          item.subtasks.map((sub) => sub.id),
          place(item.line, item.id),
        ),
      );
      if (item.subtasks.length > 0) addItems(item.subtasks, "subtask", item.id);
    });
  };

  addItems(loose, "task", null);
  let previous: string | null = null;
  for (const group of groups) {
    if (group.items.length === 0) continue;
    drafts.push(
      draft(
        {
          id: group.id,
          kind: "component",
          title: group.title,
          deps: previous === null ? [] : [previous],
          acceptance: group.acceptance,
          parent: null,
        },
        group.items.map((item) => item.id),
        place(group.line, group.id),
      ),
    );
    addItems(group.items, "task", group.id);
    previous = group.id;
  }
  return drafts;
}

function draft(
  fields: Pick<PlanNode, "id" | "kind" | "title" | "deps" | "acceptance" | "parent">,
  children: string[],
  place: Place,
): DraftNode {
  return {
    node: { ...fields, priority: 0, checks: [], children, at: `${place.file}:${place.line}` },
    idPlace: place,
    depPlaces: fields.deps.map(() => place),
    checkPlaces: [],
  };
}

/**
 * The deps of each item from its place in the list: a `[P]` item runs beside the `[P]` items next to it,
 * after the last item without `[P]` before it (spec-kit's "[P] tasks = different files, no dependencies"
 * is among themselves: `T002 Initialize the project`, then `T003 [P] Configure the linter` needs T002);
 * any other waits for the item before it and for the run of `[P]` items just before it.
 */
function sequence(items: readonly Item[]): string[][] {
  let lastSequential: string | null = null;
  let parallelRun: string[] = [];
  return items.map((item) => {
    if (item.parallel) {
      parallelRun.push(item.id);
      return lastSequential === null ? [] : [lastSequential];
    }
    const deps = [...(lastSequential === null ? [] : [lastSequential]), ...parallelRun];
    lastSequential = item.id;
    parallelRun = [];
    return deps;
  });
}

/** The text of a plain list item and of the items nested in it, one entry each. */
function itemText(item: ListItem, slice: (node: Nodes) => string): string[] {
  return item.children.flatMap((child: RootContent) =>
    child.type === "list"
      ? child.children.flatMap((sub) => itemText(sub, slice))
      : [prefix(item) + slice(child)],
  );
}

function prefix(item: ListItem): string {
  return item.checked === true ? "[x] " : item.checked === false ? "[ ] " : "";
}
