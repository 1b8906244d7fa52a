/**
 * What reins' MCP tools remember, kept as events in the plan's guard scope (`plan:<name>`) of the store, so
 * every server process (an agent may start several) and every person with the CLI sees the same:
 * - a verify: one `verification.ran` per check it ran (`name` the check, `task` the node), then its verdict,
 *   `verification.ran` named `<level>:<id>` (`task:add`, `component:api`) with `passed` and, as its
 *   `fingerprint`, the working tree's fingerprint when the checks started;
 * - `in_progress`: `task.started` with `commit`, the commit HEAD pointed at (the first one is the task's base);
 * - `complete`: `completion.claimed` at the node's level, then `task.ended` with `done`, both written only
 *   once the verify gate let the claim through; `failed` and `canceled`: `task.ended`.
 * The state is the fold of that log, read again on every call.
 */
import { randomUUID } from "node:crypto";
import type { LogRecord } from "../../base/core/batch.js";
import type { Decision } from "../../base/core/decision.js";
import type { ReinsEvent } from "../../base/core/reins-event.js";
import type { Policy } from "../../base/core/policy.js";
import type { Store } from "../../base/core/store.js";
import type { Level } from "./plan-view.js";

/** A node's status as the tools report it; `pending` until something is recorded. */
export type NodeStatus = "pending" | "in_progress" | "complete" | "failed" | "canceled";

/** The last verify of a node. */
export interface VerifyMemo {
  passed: boolean;
  /** The working tree's fingerprint the checks ran on. */
  fingerprint: string | null;
  at: number;
}

/** What the log says of one node. */
export interface NodeMemo {
  status: NodeStatus;
  /** The commit HEAD pointed at when the node was first set in progress: its diff's base. */
  base: string | null;
  /** When it was first set in progress. */
  startedAt: number | null;
  verify: VerifyMemo | null;
}

/** The fold of a plan scope's log, by node id. */
export type Ledger = Map<string, NodeMemo>;

/** The name of a verify's verdict event: `task:add`. */
export function verdictName(level: Level, id: string): string {
  return `${level}:${id}`;
}

const VERDICT = /^(task|component|module):(.+)$/s;
const ENDED: Record<"done" | "failed" | "canceled", NodeStatus> = {
  done: "complete",
  failed: "failed",
  canceled: "canceled",
};

const PAGE = 1000;

/** Every record of `scope`'s log, oldest first. */
async function readLog(store: Store, scope: string): Promise<LogRecord[]> {
  const out: LogRecord[] = [];
  for (let from = 0; ;) {
    const page = await store.events(scope, { from, limit: PAGE });
    out.push(...page);
    if (page.length < PAGE) return out;
    from = (page[page.length - 1]?.seq ?? from) + 1;
  }
}

/** Folds a log into what each node's status, base and last verify are. */
export function foldLedger(records: readonly LogRecord[]): Ledger {
  const ledger: Ledger = new Map();
  const memo = (id: string): NodeMemo => {
    let m = ledger.get(id);
    if (m === undefined)
      ledger.set(id, (m = { status: "pending", base: null, startedAt: null, verify: null }));
    return m;
  };
  for (const { event } of records) {
    if (event.task === undefined || event.task === "") continue;
    if (event.kind === "task.started") {
      const m = memo(event.task);
      if (m.startedAt === null) {
        m.startedAt = event.at;
        m.base = event.commit ?? null;
      }
      m.status = "in_progress";
    } else if (event.kind === "task.ended") {
      memo(event.task).status = ENDED[event.status];
    } else if (event.kind === "verification.ran") {
      const verdict = VERDICT.exec(event.name);
      if (verdict === null || verdict[2] !== event.task) continue;
      memo(event.task).verify = {
        passed: event.passed,
        fingerprint: event.fingerprint ?? null,
        at: event.at,
      };
    }
  }
  return ledger;
}

/** The ledger of a plan scope, from the store. */
export async function readLedger(store: Store, scope: string): Promise<Ledger> {
  return foldLedger(await readLog(store, scope));
}

/** A node's memo, pending when the log says nothing of it. */
export function memoOf(ledger: Ledger, id: string): NodeMemo {
  return ledger.get(id) ?? { status: "pending", base: null, startedAt: null, verify: null };
}

/**
 * The base of work on `ids` (a node and what is under it): the commit recorded by the first of them to
 * start, or null when none was started with a commit.
 */
export function startOf(ledger: Ledger, ids: readonly string[]): string | null {
  let first: NodeMemo | null = null;
  for (const id of ids) {
    const m = ledger.get(id);
    if (m === undefined || m.base === null || m.startedAt === null) continue;
    if (first === null || m.startedAt < (first.startedAt ?? Infinity)) first = m;
  }
  return first?.base ?? null;
}

/** An event before its scope is stamped on. */
export type PlanEvent = ReinsEvent extends infer E
  ? E extends ReinsEvent
    ? Omit<E, "scope">
    : never
  : never;

/**
 * The policy of a plan scope. Its completion requirement is the verify gate of the MCP tools, which lets a
 * claim through only when the node's last verify passed on the tree as it is (a fingerprint the engine
 * cannot see); the engine's own list of session checks (`tests`, `lint`), which a plan need not have, does
 * not apply. A claim is recorded only after that gate, so the engine's completion gate accepts it too and
 * the log never says otherwise than the tool did.
 */
export function planPolicy(policy: Policy): Policy {
  return {
    ...policy,
    completion: {
      ...policy.completion,
      required: { session: [], task: [], component: [], module: [] },
      promise: null,
    },
  };
}

/** Appends events to the plan scope; returns the engine's decision for each (null for none). */
export async function record(
  store: Store,
  scope: string,
  policy: Policy,
  events: readonly PlanEvent[],
): Promise<(Decision | null)[]> {
  const stamped = events.map((e) => ({ ...e, scope, id: randomUUID() }));
  return (await store.append(scope, stamped, policy)).answers;
}

/** The guards' words on recorded events, each once: advice for the agent (a red check, a WIP limit). */
export function adviceOf(decisions: readonly (Decision | null)[]): string[] {
  const out = new Set<string>();
  for (const d of decisions)
    if (d !== null && d.verdict !== "allow") for (const i of d.instructions) out.add(i);
  return [...out];
}
