/** Reads a plan of any format (native, spec-kit, task-master) into the checked plan a run starts with. */
import { readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import type { CheckDef, PlanNode } from "../control/types.js";
import { ReinsError } from "../../base/core/errors.js";
import { readNativePlan, type NativeDraft } from "./native-plan.js";
import { checkGraph, type DraftNode } from "./plan-graph.js";
import type { PlanSettings } from "./plan-settings.js";
import { readSpecKit } from "./spec-kit.js";
import { isTaskMasterShape, readTaskMaster } from "./task-master.js";
import { assertPlanSize, planError, readSource } from "./yaml-source.js";

/** Which format a plan was read from. */
export type PlanFormat = "reins" | "spec-kit" | "task-master";

/** A plan read and checked: what `reins run` starts a run with. */
export interface LoadedPlan {
  name: string;
  /** The file it was read from, as given. */
  source: string;
  format: PlanFormat;
  /** Every node, flattened depth first in plan order; parents and children by id. */
  nodes: PlanNode[];
  checks: CheckDef[];
  /** The plan's settings; the shell lays them over the defaults (resolveRunSettings) and flags over them. */
  settings: PlanSettings;
  /**
   * What a person should know and is not an error: tasks the source marks done (reins verifies them
   * again), cancelled ones left out, an imported plan without checks. Each is `file:line: text`.
   */
  notes: string[];
}

/** Options of parsePlan and loadPlan. */
export interface PlanOptions {
  /** For a task-master file with several tags: the tag to run. @default "master", or the only tag */
  tag?: string;
  /**
   * Reads a file a native plan names in `import:` (its path joined to the plan's folder). loadPlan reads
   * the file system; without it, parsePlan refuses a plan with `import:`.
   */
  readImport?: (file: string) => string;
}

/** Said when a plan has no checks: nothing can then show a task done but the agent's word. */
const NO_CHECKS: Record<PlanFormat, string> = {
  reins: "no checks: nothing verifies the tasks; define `checks:`",
  "spec-kit":
    "no checks: nothing verifies the tasks; add them with a reins.plan.yaml holding `import:` and `checks:`",
  "task-master":
    "no checks: nothing verifies the tasks; add them with a reins.plan.yaml holding `import:` and `checks:`",
};

/**
 * Parses and checks a plan from its text, choosing the format by the file name and shape: `*.md` is
 * spec-kit's tasks.md; `*.json` holding task-master's `{ tasks }` (or tags of them) is task-master's
 * tasks.json; anything else is the native format. Pure but for `options.readImport`. Throws
 * ReinsError("invalid_plan") with one line naming file:line and the field.
 */
export function parsePlan(text: string, fileName: string, options: PlanOptions = {}): LoadedPlan {
  if (/\.(md|markdown)$/i.test(fileName)) return importSpecKit(text, fileName);
  const source = readSource(text, fileName);
  if (/\.json$/i.test(fileName) && isTaskMasterShape(source.value)) {
    const read = readTaskMaster(source, fileName, options.tag);
    return finish(read.name, fileName, "task-master", read.drafts, [], {}, read.notes);
  }
  const plan = readNativePlan(source, fileName);
  const imported = plan.import ? importInto(plan.import, fileName, options) : { drafts: [], notes: [] };
  return finish(
    plan.name,
    fileName,
    "reins",
    [...plan.drafts, ...imported.drafts],
    plan.checks,
    plan.settings,
    imported.notes,
  );
}

/** Reads what a native plan's `import:` names; its checks become required by each imported top node. */
function importInto(
  spec: NonNullable<NativeDraft["import"]>,
  fileName: string,
  options: PlanOptions,
): { drafts: DraftNode[]; notes: string[] } {
  const { file, checks, checkPlaces, place } = spec;
  const fail = (why: string) => planError(place.file, place.line, `${place.path}: ${why}`);
  const path = isAbsolute(file) ? file : join(dirname(fileName), file);
  if (!options.readImport) throw fail("imports are read by loadPlan");
  let text: string;
  try {
    text = options.readImport(path);
  } catch (error) {
    throw fail(ReinsError.is(error) ? error.message : `${path}: cannot read it: ${messageOf(error)}`);
  }
  const read = readImported(text, path, options.tag);
  if (!read) throw fail(`${path} is neither a spec-kit tasks.md nor a task-master tasks.json`);
  for (const draft of read.drafts)
    if (draft.node.parent === null) {
      draft.node.checks = [...draft.node.checks, ...checks];
      draft.checkPlaces = [...draft.checkPlaces, ...checkPlaces];
    }
  return read;
}

/** Reads an imported file by its name and shape; null when it is neither importable format. */
function readImported(
  text: string,
  file: string,
  tag: string | undefined,
): { drafts: DraftNode[]; notes: string[] } | null {
  if (/\.(md|markdown)$/i.test(file)) return readSpecKit(text, file);
  if (!/\.json$/i.test(file)) return null;
  const source = readSource(text, file);
  return isTaskMasterShape(source.value) ? readTaskMaster(source, file, tag) : null;
}

/** Imports GitHub spec-kit's tasks.md (see spec-kit.ts for how it maps). */
export function importSpecKit(text: string, fileName: string): LoadedPlan {
  const read = readSpecKit(text, fileName);
  return finish(read.name, fileName, "spec-kit", read.drafts, [], {}, read.notes);
}

/** Imports claude-task-master's tasks.json (see task-master.ts for how it maps). */
export function importTaskMaster(text: string, fileName: string, options: { tag?: string } = {}): LoadedPlan {
  const read = readTaskMaster(readSource(text, fileName), fileName, options.tag);
  return finish(read.name, fileName, "task-master", read.drafts, [], {}, read.notes);
}

function finish(
  name: string,
  source: string,
  format: PlanFormat,
  drafts: DraftNode[],
  checks: CheckDef[],
  settings: PlanSettings,
  notes: string[],
): LoadedPlan {
  if (drafts.length === 0) throw new ReinsError("invalid_plan", `${source}: no tasks found`);
  const nodes = checkGraph(
    drafts,
    checks.map((check) => check.name),
  );
  if (checks.length === 0) notes.push(`${source}: ${NO_CHECKS[format]}`);
  return { name, source, format, nodes, checks, settings, notes };
}

/**
 * Reads a plan file and parses it (parsePlan), with its `import:` if any: the only I/O of src/run/plan. A file
 * over the size limit is refused before it is read.
 */
export function loadPlan(file: string, options: Omit<PlanOptions, "readImport"> = {}): LoadedPlan {
  return parsePlan(readPlanFile(file), file, { ...options, readImport: readPlanFile });
}

function readPlanFile(file: string): string {
  try {
    assertPlanSize(file, statSync(file).size);
    return readFileSync(file, "utf8");
  } catch (error) {
    if (ReinsError.is(error)) throw error;
    throw new ReinsError("invalid_plan", `${file}: cannot read it: ${messageOf(error)}`);
  }
}

function messageOf(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (code === "ENOENT") return "no such file";
  if (code === "EISDIR") return "it is a folder";
  return error instanceof Error ? error.message : String(error);
}
