/** The governor (reins/governor): records events through a store and answers with the guards' decisions. */
import { randomUUID } from "node:crypto";
import type { Answer, LogRecord } from "../base/core/batch.js";
import type { Decision } from "../base/core/decision.js";
import { pipeline } from "../base/core/pipeline.js";
import { ReinsError } from "../base/core/errors.js";
import type { ReinsEvent } from "../base/core/reins-event.js";
import type { Guard } from "../base/core/guard.js";
import { defaultPolicy, type Policy } from "../base/core/policy.js";
import type { State } from "../base/core/state.js";
import type { Store } from "../base/core/store.js";
import { MemoryStore } from "../base/store/memory.js";
import type { Spool } from "../base/store/spool.js";
import { spoolMayHold } from "../base/store/spool-watch.js";

export interface GovernorOptions {
  /** Where state lives. @default a new MemoryStore */
  store?: Store;
  /** @default defaultPolicy */
  policy?: Policy;
  /** Where events wait while the store is down; without one they are only reported. */
  spool?: Spool;
  /** Receives one line whenever reins answers without its store. @default writes to stderr */
  onWarning?: (line: string) => void;
  /**
   * How long one call may spend delivering the spool before its own events, ms: after a long outage the
   * backlog is delivered over several calls rather than make one wait past its hook's timeout. @default 1000
   */
  drainBudgetMs?: number;
  /**
   * The guards that decide, your own among them (see README "Use reins as a library"): every store but a
   * remote server's applies them. Pools are still charged by the budget guard alone.
   * @default defaultGuards
   */
  guards?: readonly Guard[];
}

/**
 * reins' front door for a program of its own: records what an agent did as events, through a store, and
 * answers with the guards' decisions. Made by `createGovernor`.
 */
export interface Governor {
  /** Where state lives. */
  readonly store: Store;
  /** The policy every decision applies. */
  readonly policy: Policy;
  /**
   * Records `events` of one scope in order and answers each with a decision (null for an event id already
   * applied). Without the store it fails open (or closed, with `failClosed`) and spools the events.
   */
  record(scope: string, events: readonly ReinsEvent[]): Promise<Governed>;
  /** Records one event in its own scope and answers with its decision (null for an id already applied). */
  recordEvent(event: ReinsEvent): Promise<Answer>;
  /** Closes the store. */
  close(): Promise<void>;
}

/** How long one call may spend delivering the spool, by default: well within any hook's timeout. */
const DRAIN_BUDGET_MS = 1_000;

/** The answers for a batch, and why they were made without the store, if they were. */
export interface Governed {
  answers: Answer[];
  degraded: string | null;
  /** Whether the events are safe: applied by the store, or spooled for it. */
  kept: boolean;
  /** The scope's state after the batch, when the store applied it (null when degraded or nothing applied). */
  state: State | null;
  /** What the store wrote to the scope's and its pools' logs (empty when degraded). */
  records: LogRecord[];
}

/** A decision made without the store: allow with a warning, or block when the policy fails closed. */
function degradedDecision(message: string, failClosed: boolean): Decision {
  const verdict = failClosed ? "block" : "allow";
  return {
    seq: -1,
    verdict,
    needsHuman: false,
    results: [{ guard: "store", verdict: failClosed ? "block" : "warn", message }],
    instructions: failClosed ? [message] : [],
    alerts: [],
  };
}

/**
 * The shell's front door: records events through a store and answers with decisions. When the store is
 * unreachable it fails open (allow, one warning line, events spooled for exactly-once delivery later)
 * unless the policy says `failClosed`.
 */
export function createGovernor(options: GovernorOptions = {}): Governor {
  const store = options.store ?? new MemoryStore();
  const policy = options.policy ?? defaultPolicy;
  const guards = options.guards !== undefined ? pipeline(options.guards) : undefined;
  const warn = options.onWarning ?? ((line: string) => void process.stderr.write(`${line}\n`));

  async function record(scope: string, events: readonly ReinsEvent[]): Promise<Governed> {
    const stamped = events.map((e) => (e.id === undefined ? { ...e, id: randomUUID() } : e));
    try {
      const deadline = Date.now() + (options.drainBudgetMs ?? DRAIN_BUDGET_MS);
      // A stat tells an empty spool from one to deliver: listing it on every call cost more than the rest.
      if (options.spool !== undefined && spoolMayHold(options.spool))
        await options.spool.drain(store, policy, { deadline, scope, ...(guards ? { guards } : {}) });
      const result = await store.append(scope, stamped, policy, guards);
      return {
        answers: result.answers,
        degraded: null,
        kept: true,
        state: result.states.get(scope) ?? null,
        records: result.records,
      };
    } catch (error) {
      if (!ReinsError.is(error) || error.code !== "store_unavailable") throw error;
      let where = "";
      let kept = false;
      if (options.spool !== undefined) {
        try {
          options.spool.add(scope, stamped);
          where = `; ${stamped.length} event(s) kept in ${options.spool.dir}`;
          kept = true;
        } catch (spoolError) {
          // The disk the spool is on may be as full as the store's: say so, and answer all the same.
          const why = (spoolError as NodeJS.ErrnoException).code ?? String(spoolError);
          where = `; ${stamped.length} event(s) could not be kept either (${why})`;
        }
      }
      const message = policy.failClosed
        ? `reins: store unavailable (${error.message}); failClosed is set, so work is blocked until it is back${where}`
        : `reins: store unavailable (${error.message}); allowing without guards${where}`;
      warn(message);
      return {
        answers: stamped.map(() => degradedDecision(message, policy.failClosed)),
        degraded: message,
        kept,
        state: null,
        records: [],
      };
    }
  }

  return {
    store,
    policy,
    record,
    async recordEvent(event: ReinsEvent): Promise<Answer> {
      return (await record(event.scope, [event])).answers[0] ?? null;
    },
    close: () => store.close(),
  };
}
