/** The native plan format, reins.plan.yaml, as a strict zod schema (and so its published JSON Schema). */
import * as z from "zod";
import { duration } from "../../base/config/duration.js";

/**
 * The native plan format, `reins.plan.yaml` (or .yml, .json): a zod schema, the single source of the
 * validation and of the published JSON Schema (schema/reins.plan.schema.json). Every object is strict, so
 * a misspelt or hostile key (`__proto__`) is rejected by name instead of being dropped or merged.
 */

/**
 * A node id: letters, digits, `_`, `.` and `-`, at most 64, starting with a letter or a digit (so no id
 * can be `__proto__` or look like an option).
 */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** A check name: the same alphabet as ids. */
export const CHECK_NAME_PATTERN = ID_PATTERN;

const ID_RULE = "must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit";

const id = z.string().regex(ID_PATTERN, ID_RULE);
const text = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((value) => value.trim().length > 0, "must not be empty")
    .transform((value) => value.trim());

const checkSchema = z
  .strictObject({
    command: text(10_000).meta({
      description: "The shell command, run with `sh -c` in the task's working tree.",
    }),
    tier: z.enum(["fast", "medium", "slow"]).meta({
      description:
        "fast: after every agent iteration; medium: when an iteration touches a boundary glob, and at task completion; slow: at component and module completion, within the run's slow-check budget.",
    }),
    format: z.enum(["exit", "junit", "vitest-json"]).optional().meta({
      description:
        "How the result is read: the exit code alone (default), JUnit XML, or vitest's JSON report.",
    }),
    report: text(1_000)
      .optional()
      .meta({ description: "The report file `format` reads, relative to the working tree." }),
    timeout: duration.optional().meta({ description: 'Milliseconds, or "30s", "10m", "1h". Default 10m.' }),
  })
  .meta({ id: "check", description: "A named verification: a command and its tier." });

const count = (min: number) => z.int().min(min);

const settingsSchema = z
  .strictObject({
    wip: count(1).max(64).optional().meta({ description: "Tasks in flight at once. Default 1." }),
    maxUnverifiedLines: count(1)
      .optional()
      .meta({ description: "Changed lines not yet verified green before no new task starts. Default 2000." }),
    maxAttempts: count(1)
      .optional()
      .meta({ description: "Agent iterations of one task before it fails for good. Default 5." }),
    retries: z
      .strictObject({
        checks: count(0).optional(),
        agent: count(0).optional(),
        transient: count(0).optional(),
        conflict: count(0).optional(),
      })
      .optional()
      .meta({ description: "Retries per failure class before a task fails for good." }),
    backoff: z
      .strictObject({ baseMs: duration.optional(), maxMs: duration.optional() })
      .optional()
      .meta({ description: "Backoff before a retry: baseMs × 2^(n-1), capped at maxMs." }),
    slowCheckRuns: count(0)
      .optional()
      .meta({ description: "Slow checks allowed over the whole run. Default 10." }),
    boundaries: z
      .array(text(1_000))
      .optional()
      .meta({ description: "Globs of paths whose change triggers the medium checks after an iteration." }),
    maxIterations: count(1)
      .optional()
      .meta({ description: "Agent iterations of the whole run before it ends without proof. Default 100." }),
    testFiles: z.array(text(1_000)).optional().meta({
      description:
        "Globs of the files that are tests: a task's new ones are kept when its change is set aside. Default: the common ecosystems' conventions.",
    }),
    judges: z.array(text(1_000)).optional().meta({
      description:
        "Globs of more files that judge the work (beyond tests, fixtures, runner configuration and what the checks name): the proof runs against them as they were, and a change to them waits for a person.",
    }),
    witness: z.enum(["change", "hunks"]).optional().meta({
      description:
        "change: a task is proven when its checks see its whole change (hunks no check sees alone are reported); hunks: every hunk must be seen on its own too. Default change.",
    }),
    hunkCap: count(0).optional().meta({
      description: "Hunks of one task set aside one at a time, at most (0: the tier is off). Default 8.",
    }),
    hunkRuns: count(0)
      .optional()
      .meta({ description: "Check runs of the hunk tier allowed over the whole run. Default 40." }),
  })
  .meta({ id: "settings", description: "Settings of the loop; command-line flags override them." });

/** The fields every level of the hierarchy shares. */
const nodeFields = {
  id: id.meta({ description: "Unique across the plan. " + ID_RULE + "." }),
  title: text(500),
  deps: z.array(id).optional().meta({
    description:
      "Ids of nodes (of any level) that must be done first; a parent's deps hold for its children.",
  }),
  priority: z.int().optional().meta({ description: "Higher runs first. Default 0." }),
  acceptance: z
    .union([text(20_000), z.array(text(20_000))], { error: "expected a text or a list of texts" })
    .optional()
    .meta({ description: "Acceptance criteria, shown to the agent." }),
  checks: z
    .array(z.string().regex(CHECK_NAME_PATTERN, ID_RULE))
    .optional()
    .meta({ description: "Names of checks (from the top-level `checks`) this node requires." }),
  spec: z
    .strictObject({
      file: text(1_000).meta({ description: "A markdown file, relative to the working tree." }),
      sections: z
        .array(text(500))
        .optional()
        .meta({ description: "Headings of the sections it implements." }),
    })
    .optional()
    .meta({ description: "The specification this node implements." }),
  type: z
    .enum(["planning", "implement", "review", "test", "deploy", "design", "docs", "config"])
    .optional()
    .meta({
      description:
        "The task type, for the per-type budgets. `docs` and `config` change no behaviour: their tasks are committed without a witness and reported as such.",
    }),
};

const subtaskSchema = z
  .strictObject(nodeFields)
  .meta({ id: "subtask", description: "A subtask: a unit of work." });
const taskSchema = z
  .strictObject({ ...nodeFields, subtasks: z.array(subtaskSchema).min(1).optional() })
  .meta({ id: "task", description: "A task: a unit of work unless it has subtasks." });
const componentSchema = z
  .strictObject({ ...nodeFields, tasks: z.array(taskSchema).min(1) })
  .meta({ id: "component", description: "A component: groups tasks; done when they all are." });
const moduleSchema = z
  .strictObject({ ...nodeFields, components: z.array(componentSchema).min(1) })
  .meta({ id: "module", description: "A module: groups components; done when they all are." });

const importSchema = z
  .union(
    [
      text(1_000),
      z.strictObject({
        file: text(1_000),
        checks: z.array(z.string().regex(CHECK_NAME_PATTERN, ID_RULE)).optional(),
      }),
    ],
    { error: "expected a file name, or { file, checks }" },
  )
  .meta({
    description:
      "A spec-kit tasks.md or task-master tasks.json to take the tasks from, relative to this file; `checks` are required by every imported top-level node.",
  });

/** The schema of a native plan file. */
export const planSchema = z
  .strictObject({
    $schema: z.string().optional().meta({ description: "The JSON Schema of this file, for editors." }),
    version: z.literal(1, { error: "expected version: 1" }),
    name: text(200).meta({ description: "The plan's name, shown in the report." }),
    checks: z
      .record(z.string().regex(CHECK_NAME_PATTERN, ID_RULE), checkSchema)
      .optional()
      .meta({ description: "Named checks; every fast one runs for every task." }),
    settings: settingsSchema.optional(),
    modules: z
      .array(moduleSchema)
      .min(1)
      .optional()
      .meta({ description: "modules → components → tasks → subtasks." }),
    tasks: z
      .array(taskSchema)
      .min(1)
      .optional()
      .meta({ description: "Tasks without modules, for a small plan." }),
    import: importSchema.optional(),
  })
  .meta({ title: "reins plan", description: 'A plan for `reins run` (README, "The plan format").' });

/** A native plan as read, with defaults not yet applied. */
export type PlanFile = z.output<typeof planSchema>;
/** One node of a native plan file, any level. */
export type PlanFileNode = z.output<typeof subtaskSchema> & {
  subtasks?: PlanFileNode[] | undefined;
  tasks?: PlanFileNode[] | undefined;
  components?: PlanFileNode[] | undefined;
};

/** Every field name of the format, for "did you mean" hints on a misspelt key. */
export const FIELD_NAMES: readonly string[] = [
  ...new Set([
    ...Object.keys(planSchema.shape),
    ...Object.keys(moduleSchema.shape),
    "tasks",
    "subtasks",
    ...Object.keys(checkSchema.shape),
    ...Object.keys(settingsSchema.shape),
    "file",
    "sections",
    "baseMs",
    "maxMs",
  ]),
];
