/**
 * The state of one scope: plain JSON that round-trips, folded from its events. Every collection is
 * bounded (see CAPS), so a session of any length keeps a state under STATE_BOUND_BYTES.
 */
import { closedBreaker, type Breaker } from "./breaker.js";
import type { BudgetResource } from "./reins-event.js";
import { emptyTally, type Tally } from "./tally.js";

/** Upper bound, in bytes of JSON, of any state, whatever events it has seen. */
export const STATE_BOUND_BYTES = 256 * 1024;

/** How many entries each bounded collection keeps. */
export const CAPS = {
  tasks: 16,
  churn: 16,
  inFlight: 32,
  resources: 64,
  reads: 64,
  failureClasses: 48,
  checks: 16,
  files: 64,
  recentCalls: 8,
  rateBuckets: 31,
  priced: 8,
  deniedCalls: 8,
} as const;

/** What a meter has spent so far. Wall time is derived from `startedAt` and the event time. */
export interface Spend {
  tokens: number;
  usd: number;
  premiumRequests: number;
  toolCalls: number;
}

/** Threshold levels, fired at most once each per meter and resource. */
export const LEVEL = { none: 0, warn: 1, ask: 2, pause: 3 } as const;

/** A budget attached to the session or to one task. */
export interface Meter {
  spent: Spend;
  /** Allowance added by humans, per resource. */
  extra: Partial<Record<BudgetResource, number>>;
  /** Highest threshold level already fired, per resource. */
  fired: Partial<Record<BudgetResource, number>>;
  /** The resource that paused this meter, or null while it may spend. */
  paused: BudgetResource | null;
  startedAt: number;
  taskType: string | null;
}

/** One of the latest tool calls, for pattern detection. */
export interface RecentCall {
  sig: string;
  shape: string;
  tool: string;
  /** What the call acted on, for messages: its command, or the first path it wrote or read. */
  label: string;
  /** Output hash once the call completed. */
  out: string | null;
  failed: boolean;
}

export interface Calls {
  /** Signature (tool + input hash) of the last call and how many times in a row it came. */
  sig: string;
  streak: number;
  /** Output of the streak's first completed call; a different output restarts the streak (progress). */
  sigOut: string | null;
  /** The task the call counter belongs to, and its calls so far. */
  task: string;
  taskCalls: number;
  /** Times of the latest calls, for the rapid-fire window. */
  times: number[];
  recent: RecentCall[];
  /** The last failure's error hash and how many failures in a row had it. */
  errorHash: string;
  errorStreak: number;
  /**
   * The calls reins denied since the last write it let through (the latest `CAPS.deniedCalls`), each with
   * how many times it was denied. Absent: none.
   */
  denied?: { sig: string; count: number }[];
}

export interface Check {
  passed: boolean;
  score: number;
  /** `seq` of the last run and of the last passing run. */
  ranSeq: number;
  passSeq: number;
  declines: number;
  command: string | null;
}

export interface Edits {
  total: number;
  lastSeq: number;
  sinceVerification: number;
  sinceTests: number;
  unverifiedLines: number;
}

/** Circular-behaviour memory per action on a resource. */
export interface ResourceMemo {
  /** Consecutive occurrences with unchanged content. */
  same: number;
  /** Consecutive occurrences with unchanged content and no edit anywhere in between. */
  quiet: number;
  content: string;
  /** `edits.total` when last seen: a command re-run with no edit in between changed nothing. */
  edits: number;
}

export interface ChurnMemo {
  failures: number;
  /** Escalation level a human has already confirmed going on at. */
  confirmed: number;
}

export interface FileMemo {
  /** Iterations in which the file was edited or flagged since checks last got greener. */
  iterations: number;
  lastIteration: number;
}

/** What a failed verification looked like. */
export interface LastFailure {
  check: string;
  fingerprint: string | null;
  failing: number | null;
  /** `edits.total` when it failed: an edit since then is a change. */
  edits: number;
}

export interface State {
  v: 1;
  scope: string;
  /** Events applied so far; the next event's sequence number. */
  seq: number;
  startedAt: number | null;
  lastAt: number | null;
  ended: boolean;
  /** The current task, or "" when none is known. */
  task: string;
  iterations: number;
  /** Edit rounds: bumped by the first edit after a check, and by every iteration end. */
  cycle: number;
  budget: { session: Meter; tasks: Record<string, Meter> };
  /** Token and USD spend per rate window: [window index, tokens, usd]. */
  rate: { buckets: [number, number, number][]; firedWindow: number };
  breaker: Breaker;
  calls: Calls;
  /** Failed verifications in a row with nothing improving: the same failure, no fewer failing, no edit. */
  failedVerifications: number;
  /** The last failed verification, to tell the same failure again from progress (absent in older snapshots). */
  lastFailure?: LastFailure | null;
  churn: Record<string, ChurnMemo>;
  inFlight: string[];
  resources: Record<string, ResourceMemo>;
  reads: Record<string, number>;
  edits: Edits;
  checks: Record<string, Check>;
  files: Record<string, FileMemo>;
  /** Consecutive failures per failure class (a command, or a tool that runs none). */
  failureClasses: Record<string, number>;
  /** "Done" claims refused in a row; past the policy's limit the agent may stop anyway. */
  refusedClaims: number;
  /** Calls on reins' own files or acting as a person that a person has allowed (`reins confirm`), one each. */
  protectionGrants: number;
  /** Running totals for metrics (absent in snapshots written before they existed). */
  tally?: Tally;
  /** Models whose estimated USD the agent was told about (absent in older snapshots). */
  priced?: string[];
}

/** A meter that has spent nothing, started at `at`. */
export function emptyMeter(at: number, taskType: string | null = null): Meter {
  return {
    spent: { tokens: 0, usd: 0, premiumRequests: 0, toolCalls: 0 },
    extra: {},
    fired: {},
    paused: null,
    startedAt: at,
    taskType,
  };
}

/** The state of a scope before any event. */
export function initialState(scope: string): State {
  return {
    v: 1,
    scope,
    seq: 0,
    startedAt: null,
    lastAt: null,
    ended: false,
    task: "",
    iterations: 0,
    cycle: 0,
    budget: { session: emptyMeter(0), tasks: {} },
    rate: { buckets: [], firedWindow: -1 },
    breaker: closedBreaker(),
    calls: {
      sig: "",
      streak: 0,
      sigOut: null,
      task: "",
      taskCalls: 0,
      times: [],
      recent: [],
      errorHash: "",
      errorStreak: 0,
    },
    failedVerifications: 0,
    lastFailure: null,
    churn: {},
    inFlight: [],
    resources: {},
    reads: {},
    edits: { total: 0, lastSeq: -1, sinceVerification: 0, sinceTests: 0, unverifiedLines: 0 },
    checks: {},
    files: {},
    failureClasses: {},
    refusedClaims: 0,
    protectionGrants: 0,
    tally: emptyTally(),
  };
}

/** A deep copy of a state (states are plain JSON). */
export function cloneState(state: State): State {
  return structuredClone(state);
}
