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

/** The line for a store that lost events. */
const lostLine = (where: string, why: string) =>
  `reins: the store ${where} lost events of this session (${why}). A person should look at \`reins doctor\`.`;

/** The checks a project's hooks run when a turn opens and closes. */
export interface TamperWatch {
  /**
   * At a turn's start, after its events were recorded (`added` of them, leaving the scope at `state`):
   * what was tampered with, each kept as a finding for `reins doctor`. The marks move on to now.
   */
  open(store: Store, scope: string, state: State, added: number, now: number): Promise<Tampering[]>;
  /** At a turn's end: the scope's mark moves on, unless events are missing (the next turn then says so). */
  close(store: Store, scope: string, state: State, added: number, now: number): Promise<void>;
}

/** The tamper checks of the project at `root`, keeping their marks in `env`'s state folder. */
export function tamperWatch(root: string, env: NodeJS.ProcessEnv, policy: Policy): TamperWatch {
  return {
    async open(store, scope, state, added, now) {
      const found = [
        ...hookTampering(root, env),
        ...(await storeTampering(store, scope, state.seq - added, now)),
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

  async function storeTampering(store: Store, scope: string, seq: number, now: number): Promise<Tampering[]> {
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
    const mark = readMark(root, env, scope);
    const why = mark === null ? null : await lostEvents(store, mark, seq, policy, now);
    return why === null ? [] : [{ what: "store", detail: lostLine(where, why) }];
  }
}
