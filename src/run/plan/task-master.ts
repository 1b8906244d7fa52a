/**
 * claude-task-master's `tasks.json`, either `{ "tasks": [...] }` or tagged `{ "master": { "tasks": [...] } }`:
 * - each task is a task node with id `"<id>"`, each subtask a subtask node `"<task>.<subtask>"`;
 * - a subtask's numeric dependency names a sibling subtask (task-master's rule), `"3.2"` any subtask, and a
 *   number no sibling has a top-level task;
 * - priority high/medium/low → 2/1/0 (critical → 3; none → medium), subtasks take their task's;
 * - description, details and testStrategy become the acceptance text.
 * A task marked `done` is not taken as done (reins proves done itself): it stays, and a note says so. A
 * `cancelled` task is left out, with deps on it; each drop is noted.
 */
import * as z from "zod";
import { allIssues, formatPath, issueText, shorten } from "./issue-text.js";
import type { DraftNode, Place } from "./plan-graph.js";
import { ID_PATTERN } from "./plan-schema.js";
import { planError, planProblems, type PathSegment, type SourceData } from "./yaml-source.js";

/** A tasks.json read into plan nodes, before the graph is checked; notes say what was dropped or kept. */
export interface TaskMasterDraft {
  name: string;
  drafts: DraftNode[];
  notes: string[];
}

const idValue = z.union([z.int().nonnegative(), z.string().regex(ID_PATTERN, "not a task id")], {
  error: "expected a task id",
});
/** A text field; some files hold a list of lines (`"details": ["a", "b"]`), read as one text. */
const text = z
  .union([z.string(), z.array(z.string()).transform((lines) => lines.join("\n"))], {
    error: "expected a text",
  })
  .nullish();
const depList = z.array(idValue).nullish();

const subtaskSchema = z.object({
  id: idValue,
  title: z.string().trim().min(1),
  description: text,
  details: text,
  testStrategy: text,
  status: text,
  dependencies: depList,
  priority: text,
});

const taskSchema = subtaskSchema.extend({ subtasks: z.array(subtaskSchema).nullish() });

const tasksSchema = z.object({ tasks: z.array(taskSchema) });

const PRIORITY = new Map([
  ["critical", 3],
  ["high", 2],
  ["medium", 1],
  ["low", 0],
]);
const CANCELLED = new Set(["cancelled", "canceled"]);
const DONE = new Set(["done", "completed"]);

/**
 * True when parsed JSON looks like task-master's: a `tasks` list, tags each holding one, or such tags under
 * `tags` (with the file's own `version` and `name` beside them).
 */
export function isTaskMasterShape(value: unknown): boolean {
  if (!isObject(value)) return false;
  if (
    isObject(value.tags) &&
    Object.values(value.tags).some((tag) => isObject(tag) && Array.isArray(tag.tasks))
  )
    return true;
  if ("version" in value || "$schema" in value) return false;
  if (Array.isArray(value.tasks)) return true;
  const tags = Object.values(value);
  // A tag that holds its tasks as a bare list is task-master's too, written wrong: its reader says so.
  const list = (tag: unknown) =>
    Array.isArray(tag) && tag.length > 0 && tag.every((t) => isObject(t) && "id" in t && "title" in t);
  return tags.length > 0 && tags.every((tag) => (isObject(tag) && Array.isArray(tag.tasks)) || list(tag));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The tag to read: task-master's tags sit at the top level, under `tags`, or both (a tag written beside
 * `tags`). `tag`, else master, else the only one; a plain `{ tasks }` file has none (an empty base).
 */
function pickTag(
  source: SourceData,
  file: string,
  top: Record<string, unknown>,
  tag: string | undefined,
): { base: PathSegment[]; tagName: string | null; root: Record<string, unknown> } {
  // Each tag with where it is.
  const wrapped = !Array.isArray(top.tasks) && isObject(top.tags);
  const tagPaths = new Map<string, PathSegment[]>();
  const root: Record<string, unknown> = {};
  if (!Array.isArray(top.tasks)) {
    const holders: [Record<string, unknown>, PathSegment[]][] = [
      ...(wrapped
        ? [[top.tags as Record<string, unknown>, ["tags"]] as [Record<string, unknown>, PathSegment[]]]
        : []),
      [top, []],
    ];
    for (const [holder, at] of holders)
      for (const key of Object.keys(holder)) {
        const value = holder[key];
        if (tagPaths.has(key) || (holder === top && key === "tags" && wrapped)) continue;
        if (isObject(value) && Array.isArray(value.tasks)) {
          tagPaths.set(key, [...at, key]);
          root[key] = value;
        } else if (Array.isArray(value) && value.length > 0 && value.every((t) => isObject(t) && "id" in t))
          throw planError(
            file,
            source.lineOf([...at, key], true),
            `tag "${key}" holds a list; task-master writes its tasks as { "${key}": { "tasks": [...] } }`,
          );
      }
  }
  let base: PathSegment[] = [];
  let tagName: string | null = null;
  if (!Array.isArray(top.tasks)) {
    const tags = [...tagPaths.keys()];
    const picked = tag ?? (tags.includes("master") ? "master" : tags.length === 1 ? tags[0] : undefined);
    if (picked === undefined || !tags.includes(picked))
      throw planError(
        file,
        1,
        `(top level): ${tag === undefined ? "several tags, and none is master: pick one with --tag" : `no tag "${tag}"`}; tags: ${tags.join(", ") || "none"}`,
      );
    const count = (name: string) => ((root[name] as { tasks: unknown[] }).tasks ?? []).length;
    if (count(picked) === 0) {
      const others = tags.filter((name) => name !== picked && count(name) > 0);
      throw planError(
        file,
        1,
        `tag "${picked}" holds no tasks${others.length > 0 ? `; tags with tasks: ${others.join(", ")} (pick one with --tag)` : ""}`,
      );
    }
    base = tagPaths.get(picked) ?? [picked];
    tagName = picked;
  }
  return { base, tagName, root };
}

/** Reads task-master's tasks.json into plan nodes (not yet graph-checked). `tag` picks a tag's list. */
export function readTaskMaster(source: SourceData, file: string, tag?: string): TaskMasterDraft {
  const place = (path: readonly PathSegment[], key = false): Place => ({
    file,
    line: source.lineOf(path, key),
    path: formatPath(path),
  });
  const top = source.value;
  if (!isObject(top)) throw planError(file, 1, "(top level): expected task-master's { tasks: [...] }");
  const { base, tagName, root } = pickTag(source, file, top, tag);
  const parsed = tasksSchema.safeParse(base.length > 0 ? root[tagName!] : top, {
    reportInput: true,
    jitless: true,
  });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const found = issueText(issue, []);
      const path = [...base, ...found.path];
      return { ...found, path, line: source.lineOf(path, found.atKey) };
    });
    throw planProblems(
      allIssues(problems).map((p) => ({
        file,
        line: p.line,
        message: `${formatPath(p.path)}: ${p.message}`,
      })),
    );
  }

  const tasks = parsed.data.tasks;
  const reading: Reading = { file, base, place, notes: [], cancelled: new Set() };
  const subIdsOf = subtaskIds(tasks, reading);
  tasks.forEach((task, t) => {
    const id = String(task.id);
    if (CANCELLED.has(task.status ?? "")) reading.cancelled.add(id);
    (task.subtasks ?? []).forEach((sub, s) => {
      if (reading.cancelled.has(id) || CANCELLED.has(sub.status ?? ""))
        reading.cancelled.add(subIdsOf.get(t)![s]!);
    });
  });
  const drafts = tasks.flatMap((task, t) => taskDrafts(task, t, subIdsOf.get(t)!, reading));
  for (const { node, idPlace } of drafts)
    if (!ID_PATTERN.test(node.id))
      throw planError(file, idPlace.line, `${idPlace.path}: "${shorten(node.id)}" is not a valid id`);
  return { name: tagName && tagName !== "master" ? tagName : "tasks", drafts, notes: reading.notes };
}

type Task = z.infer<typeof taskSchema>;

/** What the steps of one reading share: where its tasks are, its notes, the ids left out as cancelled. */
interface Reading {
  file: string;
  base: PathSegment[];
  place: (path: readonly PathSegment[], key?: boolean) => Place;
  notes: string[];
  cancelled: Set<string>;
}

/**
 * Each subtask's plan id by its task's index: `<task>.<subtask>`, or its own when it is written whole
 * ("92.1" under 92). A subtask id written twice under one task (task-master's own files have some) is kept
 * as work under a suffixed id, and a dependency on it means the first, as task-master's lookup by id finds
 * the first.
 */
function subtaskIds(tasks: readonly Task[], reading: Reading): Map<number, string[]> {
  const subIdsOf = new Map<number, string[]>();
  tasks.forEach((task, t) => {
    const id = String(task.id);
    const seen = new Set<string>();
    subIdsOf.set(
      t,
      (task.subtasks ?? []).map((sub, s) => {
        const own = String(sub.id);
        const whole = own.startsWith(`${id}.`) ? own : `${id}.${own}`;
        let unique = whole;
        for (let n = 2; seen.has(unique); n++) unique = `${whole}-${n}`;
        if (unique !== whole)
          reading.notes.push(
            `${reading.file}:${reading.place([...reading.base, "tasks", t, "subtasks", s]).line}: subtask ${whole} is written twice under task ${id}; the second is read as ${unique}`,
          );
        seen.add(unique);
        return unique;
      }),
    );
  });
  return subIdsOf;
}

/** The plan nodes of one task: the task and its subtasks not cancelled (none when the task is). */
function taskDrafts(task: Task, t: number, subIds: readonly string[], reading: Reading): DraftNode[] {
  const { file, place, notes, cancelled } = reading;
  const id = String(task.id);
  const at = [...reading.base, "tasks", t];
  const here = place(at);
  if (cancelled.has(id)) {
    notes.push(`${file}:${here.line}: task ${id} is cancelled in ${file}; left out of the plan`);
    return [];
  }
  if (DONE.has(task.status ?? ""))
    notes.push(`${file}:${here.line}: task ${id} is done in ${file}; reins verifies it again`);
  const priority = priorityOf(task.priority, 1, place([...at, "priority"]));
  const subtasks = (task.subtasks ?? []).map((sub, s) => ({ sub, s, subId: subIds[s]! }));
  for (const { s, subId } of subtasks)
    if (cancelled.has(subId))
      notes.push(`${file}:${place([...at, "subtasks", s]).line}: subtask ${subId} is cancelled; left out`);
  const kept = subtasks.filter(({ subId }) => !cancelled.has(subId));
  // A subtask's number names a sibling (the first written with it), whether written `2` or `"7.2"`.
  const siblings = new Map<string, string>();
  for (const { sub, subId } of subtasks) {
    const own = String(sub.id);
    const local = own.startsWith(`${id}.`) ? own.slice(id.length + 1) : own;
    if (!siblings.has(local)) siblings.set(local, subId);
  }
  const deps = resolveDeps(reading, task.dependencies ?? [], String, [...at, "dependencies"], id, null);
  const drafts: DraftNode[] = [
    {
      node: {
        id,
        kind: "task",
        title: task.title,
        deps: deps.ids,
        priority,
        acceptance: acceptanceOf(task),
        checks: [],
        parent: null,
        children: kept.map(({ subId }) => subId),
        at: `${file}:${here.line}`,
      },
      idPlace: place([...at, "id"]),
      depPlaces: deps.places,
      checkPlaces: [],
    },
  ];
  for (const { sub, s, subId } of kept) {
    const subAt = [...at, "subtasks", s];
    const subHere = place(subAt);
    if (DONE.has(sub.status ?? ""))
      notes.push(`${file}:${subHere.line}: subtask ${subId} is done in ${file}; reins verifies it again`);
    const subDeps = resolveDeps(
      reading,
      sub.dependencies ?? [],
      (dep) => (String(dep).includes(".") ? String(dep) : (siblings.get(String(dep)) ?? String(dep))),
      [...subAt, "dependencies"],
      subId,
      id,
    );
    drafts.push({
      node: {
        id: subId,
        kind: "subtask",
        title: sub.title,
        deps: subDeps.ids,
        priority: sub.priority ? priorityOf(sub.priority, priority, place([...subAt, "priority"])) : priority,
        acceptance: acceptanceOf(sub),
        checks: [],
        parent: id,
        children: [],
        at: `${file}:${subHere.line}`,
      },
      idPlace: place([...subAt, "id"]),
      depPlaces: subDeps.places,
      checkPlaces: [],
    });
  }
  return drafts;
}

/** Deps as plan ids with their places; deps on cancelled tasks, or a subtask's on its own task, dropped. */
function resolveDeps(
  reading: Reading,
  raw: readonly (string | number)[],
  toId: (dep: string | number) => string,
  path: PathSegment[],
  owner: string,
  parent: string | null,
): { ids: string[]; places: Place[] } {
  const ids: string[] = [];
  const places: Place[] = [];
  raw.forEach((dep, d) => {
    const depId = toId(dep);
    const at = reading.place([...path, d]);
    if (reading.cancelled.has(depId))
      reading.notes.push(`${reading.file}:${at.line}: ${owner}'s dependency on cancelled ${depId} dropped`);
    else if (depId === parent)
      reading.notes.push(
        `${reading.file}:${at.line}: ${owner}'s dependency on its own task ${depId} dropped`,
      );
    else {
      ids.push(depId);
      places.push(at);
    }
  });
  return { ids, places };
}

function priorityOf(value: string | null | undefined, fallback: number, at: Place): number {
  if (value === null || value === undefined) return fallback;
  const priority = PRIORITY.get(value.toLowerCase());
  if (priority === undefined)
    throw planError(
      at.file,
      at.line,
      `${at.path}: got "${value}"; expected one of critical, high, medium, low`,
    );
  return priority;
}

type Texts = "description" | "details" | "testStrategy";

function acceptanceOf(task: Partial<Record<Texts, string | null | undefined>>): string[] {
  return [
    task.description?.trim(),
    task.details?.trim() ? `Details: ${task.details.trim()}` : undefined,
    task.testStrategy?.trim() ? `Test strategy: ${task.testStrategy.trim()}` : undefined,
  ].filter((line): line is string => Boolean(line));
}
