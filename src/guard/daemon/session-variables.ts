/** The `REINS_*` variables each session's command hooks brought to the hook daemon, for its http hooks. */
import { settleEntries } from "./handoff.js";

/**
 * The project variables each session's command hooks came with, so its http hooks (which carry none) are
 * answered with the same ones. Only sessions with variables are kept, at most MAX_SESSIONS, the oldest
 * forgotten first. A successor daemon takes them over from its predecessor (handoff.ts).
 */
export class SessionVariables {
  private static readonly MAX_SESSIONS = 20_000;
  private readonly byKey = new Map<string, Record<string, string>>();
  private static readonly NONE: Record<string, string> = Object.freeze(
    Object.create(null) as Record<string, string>,
  );
  /** The sessions remembered here since a predecessor's first entries were taken, until its last settle. */
  #fresh: Set<string> | null = null;

  remember(root: string, session: string, env: Record<string, string>): void {
    const key = `${root}\n${session}`;
    this.#fresh?.add(key);
    if (Object.keys(env).length === 0) {
      this.byKey.delete(key);
      return;
    }
    const known = this.byKey.get(key);
    if (known !== undefined && JSON.stringify(known) === JSON.stringify(env)) return;
    this.byKey.delete(key);
    this.byKey.set(key, env);
    if (this.byKey.size > SessionVariables.MAX_SESSIONS) {
      const oldest = this.byKey.keys().next().value;
      if (oldest !== undefined) this.byKey.delete(oldest);
    }
  }

  of(root: string, session: string): Record<string, string> {
    return this.byKey.get(`${root}\n${session}`) ?? SessionVariables.NONE;
  }

  /** Every session's variables, oldest first, as plain entries (for a successor). */
  entries(): [string, Record<string, string>][] {
    return [...this.byKey];
  }

  /** Takes a predecessor's entries, before any call is answered here. */
  take(entries: readonly [string, Record<string, string>][]): void {
    for (const [key, env] of entries) this.byKey.set(key, env);
    this.#fresh = new Set();
  }

  /** Takes the predecessor's last entries once it stopped answering; sessions remembered here keep theirs. */
  settle(entries: readonly [string, Record<string, string>][]): void {
    settleEntries(this.byKey, this.#fresh ?? new Set(), entries);
    this.#fresh = null;
  }
}
