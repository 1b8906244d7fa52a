/**
 * The facts reins reasons about. Every event carries the time it happened (`at`, epoch ms, supplied by
 * the shell) and the scope it belongs to (`session:<id>`), so the core never reads a clock.
 */

/** Fields shared by every event. */
export interface EventBase {
  /** Epoch milliseconds, supplied by whoever observed the fact. */
  at: number;
  /** The scope the event belongs to, e.g. `session:abc`. */
  scope: string;
  /** The task the agent was working on, when known. */
  task?: string;
  /** Idempotency key: the same id is never applied twice by a store. */
  id?: string;
}

/** How a tool call ended. */
export type Outcome = "success" | "failure" | "timeout";

/** A budget resource that can be limited and extended. */
export type BudgetResource = "tokens" | "usd" | "premiumRequests" | "wallTimeMs" | "toolCalls";

/** The granularity at which "done" is claimed; each has its own required verifications. */
export type CompletionLevel = "session" | "task" | "component" | "module";

/** Speed class of a verification, from the verification gradient. */
export type VerificationTier = "fast" | "medium" | "slow";

export interface SessionStarted extends EventBase {
  kind: "session.started";
  agent?: string;
  model?: string;
}

export interface SessionEnded extends EventBase {
  kind: "session.ended";
  reason?: string;
}

export interface TaskStarted extends EventBase {
  kind: "task.started";
  task: string;
  /** Selects the per-type token budget (planning, implement, review, test, deploy, design). */
  taskType?: string;
  /** The git commit HEAD pointed at when the task started: what its diff is taken against. */
  commit?: string;
}

export interface TaskEnded extends EventBase {
  kind: "task.ended";
  task: string;
  status: "done" | "failed" | "canceled";
}

/** What a tool call touches, as far as the shell could tell from its input. */
export interface ToolTouch {
  /** The tool's name as the agent knows it (`Bash`, `Edit`, `Read`...). */
  tool: string;
  /** Stable hash of the normalised input: equal hashes mean identical calls. */
  inputHash: string;
  /** Hash of the input with noise (ids, timestamps, temp paths, numbers) removed: near-identical calls share it. */
  shapeHash?: string;
  /** Paths the call reads. */
  reads?: string[];
  /** Paths the call writes or edits. */
  writes?: string[];
  /** Paths the call removes or moves away (a shell `rm`, `mv`): not edits, but watched by self-protection. */
  removes?: string[];
  /** The shell command, for tools that run one. */
  command?: string;
  /** Lines added plus removed by an edit, when the shell can tell. */
  linesChanged?: number;
  /** The agent's own id for the call, pairing a request with its completion. */
  callId?: string;
}

export interface ToolRequested extends EventBase, ToolTouch {
  kind: "tool.requested";
  /** `false`: it charges no pool (see UsageRecorded.pools). */
  pools?: false;
}

export interface ToolCompleted extends EventBase, ToolTouch {
  kind: "tool.completed";
  outcome: Outcome;
  exitCode?: number;
  /** Hash of what the call produced: equal hashes mean nothing changed. */
  outputHash?: string;
  /** Hash of the normalised error text, for failures. */
  errorHash?: string;
  durationMs?: number;
}

export interface UsageRecorded extends EventBase {
  kind: "usage.recorded";
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  costUsd?: number;
  premiumRequests?: number;
  model?: string;
  /**
   * Where `costUsd` came from: `agent` (the agent's own figure), `table` (the policy's prices),
   * `family:<model>` (the price of a listed model of the same family), `unknown` (the highest listed price).
   */
  pricing?: string;
  /**
   * `false`: it charges none of the project's pools, because the same spend reaches them another way (a run
   * records a driven iteration's spend in its own scope, while the iteration's own session, guarded by
   * reins' hooks, charges the pools as it goes). Absent: it charges them.
   */
  pools?: false;
}

export interface VerificationRan extends EventBase {
  kind: "verification.ran";
  /** What kind of check: `tests`, `lint`, `build`, `typecheck`, `task`... */
  name: string;
  tier?: VerificationTier;
  passed: boolean;
  /** 0..1; defaults to 1 when passed and 0 when not. */
  score?: number;
  /** Files the check flagged. */
  flagged?: string[];
  /** The command that ran the check, so instructions can name it. */
  command?: string;
  /**
   * For a failure: what identifies it (a hash of the failing tests' names, or of the output's tail), so the
   * same failure can be told from a new one.
   */
  fingerprint?: string;
  /** For a failure: how many tests failed, when the output says. Fewer than last time is progress. */
  failing?: number;
}

export interface IterationEnded extends EventBase {
  kind: "iteration.ended";
  outcome?: "success" | "failure";
}

export interface CompletionClaimed extends EventBase {
  kind: "completion.claimed";
  level: CompletionLevel;
  /** Whether the agent's last message holds the policy's completion promise, when the shell could tell. */
  promiseMet?: boolean;
}

/** Fields shared by every human action: who did it and why. */
export interface HumanAction extends EventBase {
  by: string;
  reason?: string;
}

export interface BudgetExtended extends HumanAction {
  kind: "human.budget_extended";
  resource: BudgetResource;
  amount: number;
  /** Which meter: the session's (default) or a task's. */
  meter?: "session" | "task";
}

export interface BudgetReset extends HumanAction {
  kind: "human.budget_reset";
}

export interface CircuitAcknowledged extends HumanAction {
  kind: "human.circuit_acknowledged";
}

export interface CircuitReset extends HumanAction {
  kind: "human.circuit_reset";
}

export interface AlertAcknowledged extends HumanAction {
  kind: "human.alert_acknowledged";
  alertId: string;
}

export interface Confirmed extends HumanAction {
  kind: "human.confirmed";
}

/** A person approved a specification as it is: `hash` is its content hash, so an edit voids the approval. */
export interface SpecApproved extends HumanAction {
  kind: "human.spec_approved";
  /** The spec's path, relative to the project. */
  spec: string;
  /** The sha256 of the spec's normalised text when it was approved. */
  hash: string;
}

/**
 * A person approved the tests a run's agent changed while they were red, for one task as committed: the
 * run counts the task as proven again when it is resumed. `commit` is the task's commit the person saw.
 */
export interface TaskApproved extends HumanAction {
  kind: "human.task_approved";
  run: string;
  task: string;
  commit: string;
}

/**
 * Reins found its own guarding tampered with at a turn's start (docs/tamper-detection.md): the hooks it
 * installed gone or changed, the store short of the events it recorded, or tool calls that ran with no
 * hook answered. A fact for the record; it changes no state and no guard reads it.
 */
export interface GuardTampered extends EventBase {
  kind: "guard.tampered";
  /** `hooks`: an agent's hook settings; `store`: the store's events; `calls`: calls no hook answer judged. */
  what: "hooks" | "store" | "calls";
  /** The one line the model was told. */
  detail: string;
}

/** Every fact reins knows about, as a tagged union on `kind`. */
export type ReinsEvent =
  | SessionStarted
  | SessionEnded
  | TaskStarted
  | TaskEnded
  | ToolRequested
  | ToolCompleted
  | UsageRecorded
  | VerificationRan
  | IterationEnded
  | CompletionClaimed
  | BudgetExtended
  | BudgetReset
  | CircuitAcknowledged
  | CircuitReset
  | AlertAcknowledged
  | Confirmed
  | SpecApproved
  | TaskApproved
  | GuardTampered;

/** Omit over each member of a union. */
export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An event before its time and scope are stamped on: what scripts and human actions build. */
export type EventInput = DistributiveOmit<ReinsEvent, "at" | "scope">;

/** The `kind` of every event. */
export type EventKind = ReinsEvent["kind"];

/** True for events a person caused; guards never block those. */
export function isHumanEvent(event: ReinsEvent): event is Extract<ReinsEvent, HumanAction> {
  return event.kind.startsWith("human.");
}
