/**
 * The shapes the run control core works on: a plan's work graph, the run's state, the events that advance
 * it and the actions it asks the shell to carry out. Plain JSON throughout, so a state round-trips through
 * any store and a trace replays bit for bit.
 */

/** The level of a node in a plan's hierarchy (seed 003). */
export type NodeKind = "module" | "component" | "task" | "subtask";

/** The speed class of a check, from the verification gradient. */
export type CheckTier = "fast" | "medium" | "slow";

/** A named verification: a command the shell runs, with its tier. */
export interface CheckDef {
  /** The name tasks refer to in `checks` (`lint`, `unit`, `e2e`...). */
  name: string;
  /** The shell command; run with `sh -c` in the task's working tree. */
  command: string;
  tier: CheckTier;
  /** How results are read: the exit code alone, a JUnit XML file, or vitest's JSON report. @default "exit" */
  format: "exit" | "junit" | "vitest-json";
  /** The report file `format` reads, relative to the working tree. */
  report?: string;
  /** @default 600000 */
  timeoutMs: number;
}

/** One node of a plan, flattened: parents and children by id. */
export interface PlanNode {
  id: string;
  kind: NodeKind;
  title: string;
  /** Ids of nodes (of any level) that must be done first; a parent's deps hold for all its descendants. */
  deps: string[];
  /** Higher runs first. @default 0 */
  priority: number;
  /** Acceptance criteria, as text. */
  acceptance: string[];
  /** Names of the checks this node requires (its tier decides when each runs). */
  checks: string[];
  /** The specification this node implements: a markdown file and the sections (headings) it names. */
  spec?: { file: string; sections: string[] };
  /** The task type, for the per-type budgets (planning, implement, review, test, deploy, design). */
  type?: string;
  parent: string | null;
  children: string[];
  /** Where the node was declared, for messages: `plan.yaml:12`. */
  at?: string;
}

/** Settings of the loop, resolved with defaults by the shell before the run starts. */
export interface RunSettings {
  /** Tasks in flight at once. @default 1 */
  wip: number;
  /** Changed lines not yet verified green, across tasks in flight, before no new task starts. @default 2000 */
  maxUnverifiedLines: number;
  /** Agent iterations of one task before it fails for good. @default 5 */
  maxAttempts: number;
  /**
   * Retries per failure class before the task fails for good.
   * @default { checks: 4, agent: 2, transient: 3, conflict: 2 }
   */
  retries: Record<FailureClass, number>;
  /**
   * Backoff before a retry: base × 2^(n-1), capped. Logical time, in ms of event time.
   * @default { baseMs: 2000, maxMs: 60000 }
   */
  backoff: { baseMs: number; maxMs: number };
  /** Slow checks allowed over the whole run; past it they are skipped and the skip is evidence. @default 10 */
  slowCheckRuns: number;
  /** Globs of paths whose change triggers the medium checks after an iteration. @default [] */
  boundaries: string[];
  /** Iterations of the whole run before it ends without proof. @default 100 */
  maxIterations: number;
  /**
   * Globs of the files that are tests (the common ecosystems' conventions): a task's change to them is
   * kept when its change is set aside to see whether its checks witness it; the rest is the behaviour
   * they must witness.
   * @default DEFAULT_TEST_FILES
   */
  testFiles: string[];
  /**
   * Globs of more files that judge the work, beyond those reins recognises (see run/drive/judge-files.ts):
   * the proof runs against them as they were when the task started, and a change to them waits for a
   * person's approval. @default []
   */
  judges: string[];
  /**
   * How strong a witness proves a task: `change`, its whole change seen by a check (the hunks no check
   * sees alone are reported); `hunks`, every hunk of it seen on its own too. @default "change"
   */
  witness: "change" | "hunks";
  /** Hunks of one task set aside one at a time, at most (0: never); each is a run of its checks. @default 8 */
  hunkCap: number;
  /**
   * Runs of the hunk tier allowed over the whole run (the slowest tier of the gradient has a budget of its
   * own, so it never takes a slow check's). @default 40
   */
  hunkRuns: number;
}

/** Why an attempt failed, which selects the retry budget. */
export type FailureClass = "checks" | "agent" | "transient" | "conflict";

/**
 * What a done task's evidence amounts to:
 * - `witnessed`: its checks passed with its change, and with its change to non-test files set aside at
 *   least one of them failed: they saw the change work;
 * - `already_done`: closed without the agent, the checks that name it already passing;
 * - `no_behaviour`: the plan says it changes no behaviour (`type: docs` or `config`);
 * - `unwitnessed`: its checks passed with its change set aside too (or it changed nothing to set aside);
 * - `changed_judges`: its checks pass only with its agent's changes to what judges it (its tests, their
 *   fixtures, the runner's configuration): with the judges as they were they fail;
 * - `unverified`: no check ran for it.
 * Only the first three make a task proven, and a task whose agent changed a judge is proven only once a
 * person approved the change; `changed_judges` is proven then too (the person accepted it).
 */
export type Evidence =
  "witnessed" | "already_done" | "no_behaviour" | "unwitnessed" | "changed_judges" | "unverified";

/** The task types that change no behaviour: their tasks are committed without a witness. */
export const NO_BEHAVIOUR_TYPES: readonly string[] = ["docs", "config"];

/**
 * What judged a task's counterfactual, as the shell found it: the judges used as they were when the task
 * started (the first of them, and how many), and those its agent changed, with the diff of the changes.
 */
export interface JudgesSeen {
  /** Judges used as they were (the first 50). */
  kept: string[];
  keptTotal: number;
  /** Judges its agent changed (`package.json scripts.test`, `conftest.py (new)`), put back for the proof. */
  changed: string[];
  /** The diff of those changes (assertions, scripts, configuration lines), bounded. */
  diff: string;
  /** Whether the checks passed with the judges as they were (and the task's other changes). */
  passedAsTheyWere: boolean;
}

/** Judges a task's agent changed (see TaskRun.judgeChanges): they wait for a person. */
export interface JudgeChanges {
  files: string[];
  diff: string;
  /** Whether the checks passed with the judges as they were: if not, they pass only through the change. */
  passedAsTheyWere: boolean;
  /** Who approved them and why; null while they await a person. */
  approved: { by: string; reason: string } | null;
}

/** A hunk of a task's change, named for a person: its file, lines, and the enclosing function git names. */
export interface HunkRef {
  file: string;
  /** `12-18` in the changed file (or the base's, for a removal). */
  lines: string;
  /** The enclosing function or section from the hunk's header; "" when git names none. */
  context: string;
}

/** The hunk tier of a task's witness: each hunk set aside alone, its checks run again. */
export interface HunkWitness {
  /** Hunks in its change (outside tests and judges). */
  total: number;
  /** Hunks no check went red without. */
  unwitnessed: HunkRef[];
  /** Hunks not tried: past the cap per task or the run's slow-check budget. */
  untried: number;
  /** Check runs spent (results cached by content cost none). */
  ran: number;
  /** Check runs the witness action allowed (its `hunks`): what the run reserved; the rest is given back. */
  allowed: number;
}

/** A task's status; only leaves (the units of work) move through it, parents aggregate. */
export type TaskStatus = "pending" | "in_progress" | "verifying" | "done" | "failed" | "canceled";

/** The result of one check as evidence. */
export interface CheckResult {
  name: string;
  tier: CheckTier;
  passed: boolean;
  /** Exit code, or null when it was killed (timeout). */
  exitCode: number | null;
  /** Names of failing tests, when the report or output says. */
  failedTests: string[];
  /** Counts, when the report says. */
  tests?: { passed: number; failed: number };
  /** The tail of the output, for the fix-only prompt and the report (bounded by the shell). */
  output: string;
  durationMs: number;
  /** A slow check skipped because the run's slow-check budget is spent. */
  skipped?: boolean;
}

/** What the run knows of one unit of work. */
export interface TaskRun {
  status: TaskStatus;
  /** For `failed`: whether a retry is scheduled (retryable) or it is over (permanent). */
  permanent: boolean;
  /** Agent iterations started. */
  attempts: number;
  /** Failures so far, per class. */
  failures: Record<FailureClass, number>;
  /** Event time at which a retry may start. */
  retryAt: number | null;
  /** The last check results: red ones make the next iteration fix-only. */
  lastChecks: CheckResult[];
  /** Fix-only: the next iteration may only fix the failing checks. */
  fixOnly: boolean;
  /** The commit that closed the task. */
  commit: string | null;
  /** Lines changed since the last green point, not yet verified. */
  unverifiedLines: number;
  tokens: number;
  costUsd: number;
  /** Closed because its checks already passed, without calling the agent. */
  noop: boolean;
  /** What its evidence amounts to, once known (see Evidence). */
  evidence?: Evidence;
  /**
   * The counterfactual: the files of its change set aside (its non-test files), and the checks that went
   * red without them.
   */
  witness?: { setAside: string[]; red: string[] };
  /** What its agent did to what judges the work (undone): a person must look before it counts as proven. */
  tampering?: string[];
  /** Whether a check of it has been red since its work began (absent: never): its own tests were failing. */
  redSeen?: boolean;
  /**
   * Judges (tests that existed before its work began, fixtures, runner configuration) its agent changed:
   * the checks may pass because they changed, so a person must approve them (`approved`) before the task
   * counts as proven. `diff` is the change, bounded.
   */
  judgeChanges?: JudgeChanges;
  /** The judges its counterfactual used as they were (absent before it ran). */
  judgesKept?: { files: string[]; total: number };
  /** Its hunk tier, once run (absent when its change was not witnessed whole, or the tier is off). */
  hunks?: HunkWitness;
  /** Which gate the running checks are: after an iteration, or the completion gate before the commit. */
  gate: "iteration" | "completion" | null;
  /** Whether the last iteration touched a boundary (medium checks run after it). */
  boundaryTouched: boolean;
  /** Why it failed or was canceled (or was reopened), for the report. */
  reason: string | null;
  /**
   * Spec sections (`spec.md#Accounts > Sign up`) that changed since the task's work began: its next
   * iteration is told, and it is not committed before one. Set by spec drift; cleared when an iteration
   * starts. Absent when there is nothing to tell.
   */
  specChanged?: string[];
}

/**
 * An event of a run: every outside result comes in as one, with the time it happened. An event that answers
 * an action carries the action's `ref`, so a stale or repeated answer is told apart from the awaited one.
 */
export type RunEvent =
  | {
      kind: "run.started";
      at: number;
      run: string;
      nodes: PlanNode[];
      checks: CheckDef[];
      settings: RunSettings;
      /** Started with `--unverified`: tasks no check verifies may run; the run then ends unverified. */
      unverified?: boolean;
    }
  /** The checks of a task ran before its first iteration: all green closes it as a no-op. */
  | { kind: "noop.checked"; at: number; ref: number; task: string; results: CheckResult[] }
  | {
      kind: "agent.finished";
      at: number;
      ref: number;
      task: string;
      attempt: number;
      outcome: "ok" | "failed" | "transient" | "budget_paused";
      turns: number;
      tokens: number;
      costUsd: number;
      /** The agent's final message or error, bounded. */
      summary: string;
      /** Lines the working tree changed by, from git. */
      linesChanged: number;
      filesChanged: string[];
      /** Whether a changed file matches the settings' boundary globs (the shell matches them). */
      boundaryTouched: boolean;
      /**
       * What the agent did to what judges its work (commits, checkouts, resets, branches, git hooks), each
       * undone by the shell, one line each. Absent when it did nothing of the kind.
       */
      tampering?: string[];
    }
  | { kind: "checks.ran"; at: number; ref: number; task: string; results: CheckResult[] }
  /**
   * The counterfactual of a green task: its checks run again with `setAside` (its change to non-test files)
   * undone, its tests kept. Empty `setAside`: there was nothing to set aside, and no check ran.
   */
  | {
      kind: "witness.ran";
      at: number;
      ref: number;
      task: string;
      setAside: string[];
      results: CheckResult[];
      /** The judges the proof used as they were, and those its agent changed. Absent from older runs. */
      judges?: JudgesSeen;
      /** The hunk tier, when it ran. */
      hunks?: HunkWitness;
    }
  | { kind: "task.committed"; at: number; ref: number; task: string; commit: string }
  | { kind: "commit.failed"; at: number; ref: number; task: string; reason: string; conflict: boolean }
  | { kind: "task.rolled_back"; at: number; ref: number; task: string; to: string }
  | { kind: "clock.ticked"; at: number; ref: number }
  | { kind: "task.canceled"; at: number; task: string; by: string; reason: string }
  | { kind: "report.written"; at: number; ref: number; path: string }
  /**
   * The run goes on after a crash: actions that were in flight got no answer. Tasks whose commit exists in
   * git are done (never redone); every other interrupted task is verified again from the tree as it is.
   */
  | {
      kind: "run.resumed";
      at: number;
      commits: Record<string, string>;
      /** The edited tests people approved since the run stopped (`reins approve --task`), per task. */
      approvals?: { task: string; by: string; reason: string }[];
    }
  /** A guard of the store paused the run (budget, breaker): the loop ends without proof until a person acts. */
  | { kind: "run.paused"; at: number; reason: string }
  /**
   * Sections of the spec changed since the run last looked (spec drift): the shell compares the hashes it
   * recorded with the files, on resume and before each iteration. `sections` are their keys
   * (`spec.md#Accounts > Sign up`); `tasks` the units of work that implement them (a node naming the
   * section, or whose ancestor names it; a parent stands for its leaves). A done one is reopened; one at
   * work is told in its next iteration.
   */
  | { kind: "spec.changed"; at: number; sections: string[]; tasks: string[] };

/**
 * What the core asks the shell to do next; the shell feeds each result back as an event carrying the
 * action's `ref` (every action but `finish`, which has no answer).
 */
export type RunAction =
  | { kind: "check_noop"; ref: number; task: string; checks: string[] }
  | {
      kind: "run_agent";
      ref: number;
      task: string;
      attempt: number;
      mode: "implement" | "fix";
      /** In fix mode: the red checks the agent must make green. */
      failing: CheckResult[];
      /** Spec sections that changed since the task's work began: the prompt says so. Absent when none did. */
      specChanged?: string[];
    }
  | { kind: "run_checks"; ref: number; task: string; checks: string[] }
  /**
   * Runs `checks` with the judges as they were when the task started, then with the task's other change
   * set aside too, then (up to `hunks` of them) with each hunk of it set aside alone; puts it all back.
   */
  | { kind: "witness"; ref: number; task: string; checks: string[]; hunks: number }
  | { kind: "commit"; ref: number; task: string }
  | { kind: "rollback"; ref: number; task: string }
  | { kind: "wait"; ref: number; until: number }
  | { kind: "write_report"; ref: number }
  | { kind: "finish"; proven: boolean };

/** One clause of the done proof with its evidence. */
export interface ProofClause {
  name:
    | "no_runnable_task"
    | "nothing_in_flight"
    | "no_retry_pending"
    | "graph_stable"
    | "every_task_terminal"
    | "every_change_witnessed"
    | "judges_untouched"
    | "changed_judges_approved"
    | "every_hunk_witnessed"
    | "report_written";
  holds: boolean;
  /** What it rests on: the task ids that break it, or what was checked. */
  evidence: string;
}

/** The done proof (seed 004): the run may end as done only when every clause holds. */
export interface DoneProof {
  holds: boolean;
  clauses: ProofClause[];
}

/** A decision of the core, recorded in the trace beside the event that caused it. */
export type RunDecision =
  | { kind: "transition"; task: string; from: TaskStatus; to: TaskStatus; why: string }
  | { kind: "scheduled"; task: string; attempt: number; mode: "implement" | "fix" }
  | { kind: "retry_queued"; task: string; class: FailureClass; at: number }
  | { kind: "held"; task: string; why: string }
  /** A person approved the judges the task's agent changed. */
  | { kind: "approved"; task: string; by: string; reason: string }
  /** A task implementing a changed section, not reopened (that is a `transition`): what it means for it. */
  | { kind: "drift"; task: string; sections: string[]; why: string }
  | { kind: "ignored"; event: RunEvent["kind"]; why: string }
  | { kind: "proof"; proof: DoneProof };

/** The state of a run: a fold of its events. */
export interface RunState {
  run: string;
  /** Event time of the last event: the core's only clock. */
  now: number;
  /** Events applied. */
  seq: number;
  nodes: Record<string, PlanNode>;
  /** Node ids in plan order (depth first). */
  order: string[];
  checks: Record<string, CheckDef>;
  settings: RunSettings;
  /** Leaves only. */
  tasks: Record<string, TaskRun>;
  /** Actions handed out and not yet answered, by task ("" for run-wide ones). */
  inFlight: Record<string, RunAction["kind"]>;
  /** The `ref` of each action in `inFlight`, by the same key: only an event carrying it answers the action. */
  refs: Record<string, number>;
  iterations: number;
  slowCheckRuns: number;
  /** Runs of the hunk tier so far, reserved as each witness starts (absent in older runs: 0). */
  hunkRuns?: number;
  reportWritten: boolean;
  paused: string | null;
  /** Started with `--unverified` (absent in runs of older versions: false). */
  unverified?: boolean;
  /** Set once the core has asked to finish. */
  finished: { proven: boolean } | null;
}
