/**
 * The tamper check at a turn's start (docs/tamper-detection.md): the hooks `reins init` installed are still
 * in the settings files it recorded, and the store holds every event the hooks saw it record (the marks
 * and the store's identity kept in the user's state folder). A few small file reads and two store reads,
 * only when a turn opens or closes, never on a tool call.
 */
import { relative, sep } from "node:path";
import type { Policy } from "../../base/core/policy.js";
import type { State } from "../../base/core/state.js";
import type { Store } from "../../base/core/store.js";
import type { Spool } from "../../base/store/spool.js";
import { counted } from "../../base/text/plural.js";
import type { FinishedCall } from "./finished-calls.js";
import { hookChanges, readInstallRecord, type HookChanges } from "../../base/config/install-record.js";
import {
  addFinding,
  readFindings,
  readMark,
  readSeenStore,
  writeMark,
  writeSeenStore,
  type Finding,
  type Mark,
} from "../../base/config/store-marks.js";

const DAY_MS = 86_400_000;

/** What a check found: what was tampered with, and the one line the model is told. */
export type Tampering = Pick<Finding, "what" | "detail">;

/** `file` as the project sees it: relative inside the project, absolute outside. */
export function shown(root: string, file: string): string {
  const rel = relative(root, file);
  return rel !== "" && !rel.startsWith("..") && !rel.startsWith(sep) ? rel : file;
}

/** The line for an agent whose installed hooks changed. */
export function hooksLine(root: string, found: HookChanges): string {
  return `reins: the hooks reins installed in ${shown(root, found.file)} were changed: ${found.changes.join(", ")}. Guarding of tool calls is off until a person runs \`reins init ${found.agent}\` again.`;
}

/** The installed hooks that are no longer as reins installed them, one line each. */
export function hookTampering(root: string, env: NodeJS.ProcessEnv): Tampering[] {
  const record = readInstallRecord(root, env);
  if (record === null) return [];
  return hookChanges(record)
    .filter((c) => c.changes.length > 0)
    .map((c) => ({ what: "hooks" as const, detail: hooksLine(root, c) }));
}

/**
 * Why the store holds fewer of a scope's events than the hooks saw (`mark`), or null when it holds them
 * all. `seq` is the scope's version before this turn's events. Trimming lowers neither the version nor the
 * last records: SQLite's `reins gc` keeps a live scope's last `retention.records` records (and forgets the
 * marks of the scopes it removes whole), Redis keeps every record after the snapshot before the last; a
 * scope a store let expire (Redis' TTL) is no loss.
 */
export async function lostEvents(
  store: Store,
  mark: Mark,
  seq: number,
  policy: Policy,
  now: number,
): Promise<string | null> {
  if (mark.seq <= 0) return null;
  const expiry = store.exactlyOnceMs;
  if (seq === 0 && expiry !== undefined && now - mark.at > expiry) return null;
  if (seq < mark.seq) return `it holds ${seq} of the ${mark.seq} events reins saw recorded`;
  const [first] = await store.events(mark.scope, { from: mark.seq - 1, limit: 1 });
  if (first === undefined) return `the events reins saw recorded up to #${mark.seq} are gone`;
  const kept =
    store.kind === "sqlite" &&
    seq - mark.seq < policy.retention.records &&
    now - mark.at < policy.retention.days * DAY_MS;
  if (kept && first.seq !== mark.seq - 1) return `event #${mark.seq} that reins saw recorded is gone`;
  return null;
}

/** How far before a scope's mark the check looks for a call's event: a call may be asked before a mark moves. */
const CALLS_LOOKBACK = 1_000;
/** How many records one read of the check takes. */
const CALLS_PAGE = 5_000;

/**
 * The calls of `finished` that ran without reins answering their hooks: finished since the scope's mark
 * (earlier ones were the earlier turns' to check) with no event of their id in the store from shortly
 * before the mark on, nor in `spool`'s batches of the scope (a call answered while the store was down, or
 * a batch the store refused once and keeps for the next drain). The transcript is read before the store: a
 * call whose result is written was asked for first, so its event is in the store by then when its hook
 * was answered.
 */
export async function unjudgedCalls(
  store: Store,
  mark: Mark,
  finished: readonly FinishedCall[],
  spool?: Pick<Spool, "waiting">,
): Promise<FinishedCall[]> {
  const since = finished.filter((c) => c.at >= mark.at);
  if (since.length === 0) return [];
  const seen = new Set<string>();
  for (let from = Math.max(0, mark.seq - CALLS_LOOKBACK); ;) {
    const page = await store.events(mark.scope, { from, limit: CALLS_PAGE });
    for (const { event } of page) if ("callId" in event && event.callId !== undefined) seen.add(event.callId);
    const last = page.at(-1);
    if (page.length < CALLS_PAGE || last === undefined) break;
    from = last.seq + 1;
  }
  const unseen = since.filter((c) => !seen.has(c.id));
  if (unseen.length === 0 || spool === undefined) return unseen;
  for (const event of spool.waiting(mark.scope))
    if ("callId" in event && event.callId !== undefined) seen.add(event.callId);
  return unseen.filter((c) => !seen.has(c.id));
}

/** The line for calls no hook answer judged: how many, of which tools, the last when. */
export function unjudgedLine(calls: readonly FinishedCall[]): string {
  const tools = new Map<string, number>();
  for (const { tool = "unnamed" } of calls) tools.set(tool, (tools.get(tool) ?? 0) + 1);
  const named = [...tools].sort((a, b) => b[1] - a[1]);
  const list = named
    .slice(0, 4)
    .map(([tool, n]) => `${n} ${tool}`)
    .join(", ");
  const more = named.length > 4 ? ", ..." : "";
  const last = new Date(Math.max(...calls.map((c) => c.at))).toISOString();
  return `reins: ${counted(calls.length, "tool call")} of this session ran with no answer from reins to their hooks (${list}${more}; the last at ${last}): nothing judged them, so no loop, budget or rule applied to them. A person should look at \`reins doctor\`.`;
}

/** The line for a store that lost events. */
const lostLine = (where: string, why: string) =>
  `reins: the store ${where} lost events of this session (${why}). A person should look at \`reins doctor\`.`;

/** The checks a project's hooks run when a turn opens and closes. */
export interface TamperWatch {
  /**
   * At a turn's start, after its events were recorded (`added` of them, leaving the scope at `state`):
   * what was tampered with, each kept as a finding for `reins doctor`, including the calls of `finished`
   * (what the turn's reading of the transcript says finished) that no hook answer judged. The marks move
   * on to now.
   */
  open(
    store: Store,
    scope: string,
    state: State,
    added: number,
    now: number,
    finished?: readonly FinishedCall[],
  ): Promise<Tampering[]>;
  /** At a turn's end: the scope's mark moves on, unless events are missing (the next turn then says so). */
  close(store: Store, scope: string, state: State, added: number, now: number): Promise<void>;
}

/** The tamper checks of the project at `root`, keeping their marks in `env`'s state folder. */
export function tamperWatch(
  root: string,
  env: NodeJS.ProcessEnv,
  policy: Policy,
  spool?: Pick<Spool, "waiting">,
): TamperWatch {
  return {
    async open(store, scope, state, added, now, finished = []) {
      const mark = readMark(root, env, scope);
      const lost = await storeTampering(store, mark, state.seq - added, now);
      // Calls whose events a store lost look unjudged too: the store's line says it.
      const unjudged =
        lost.length === 0 && mark !== null ? await unjudgedCalls(store, mark, finished, spool) : [];
      const found = [
        ...hookTampering(root, env),
        ...lost,
        ...(unjudged.length > 0 ? [{ what: "calls" as const, detail: unjudgedLine(unjudged) }] : []),
      ];
      writeMark(root, env, { scope, seq: state.seq, at: now });
      // A change to the hooks is told at every turn while it lasts, but kept for doctor once.
      const known = found.length > 0 ? new Set(readFindings(root, env).map((f) => f.detail)) : new Set();
      for (const f of found) if (!known.has(f.detail)) addFinding(root, env, { at: now, scope, ...f });
      return found;
    },
    async close(store, scope, state, added, now) {
      const mark = readMark(root, env, scope);
      if (mark !== null && (await lostEvents(store, mark, state.seq - added, policy, now)) !== null) return;
      writeMark(root, env, { scope, seq: state.seq, at: now });
    },
  };

  async function storeTampering(
    store: Store,
    mark: Mark | null,
    seq: number,
    now: number,
  ): Promise<Tampering[]> {
    const where = shown(root, store.location);
    const id = (await store.identity?.()) ?? null;
    const seen = readSeenStore(root, env);
    if (id !== null && (seen === null || seen.id !== id || seen.location !== store.location))
      writeSeenStore(root, env, { id, location: store.location });
    if (id !== null && seen !== null && seen.location === store.location && seen.id !== id)
      return [
        {
          what: "store",
          detail: `reins: the store ${where} is not the one reins recorded to: it was replaced, and the events reins recorded before are gone. A person should look at \`reins doctor\`.`,
        },
      ];
    const why = mark === null ? null : await lostEvents(store, mark, seq, policy, now);
    return why === null ? [] : [{ what: "store", detail: lostLine(where, why) }];
  }
}
