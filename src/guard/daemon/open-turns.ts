/** The Claude Code turns a daemon serves that are open: the daemon stays while one is (hook-daemon's idle). */
import { settleEntries } from "./handoff.js";

/**
 * How long an open turn holds the daemon, at most: a session that never sent its Stop (killed, or its
 * machine asleep) lets the daemon go after this.
 */
export const TURN_HOLD_MS = 12 * 3_600_000;

/** At most this many open turns are kept; the oldest goes first. */
const MAX_TURNS = 10_000;

/**
 * Claude Code's tool-call hooks are http hooks to the daemon (install/daemon-http.ts): with no daemon
 * listening, a call goes ahead unjudged, and only the next prompt's command hook starts one again. So the
 * daemon does not retire for idleness between a session's UserPromptSubmit and its Stop (a command that runs
 * for longer than the idle time, say): it notes each turn that opens and closes here.
 */
export class OpenTurns {
  readonly #open = new Map<string, number>();
  /** The turns opened or closed here since a predecessor's first entries were taken, until its last settle. */
  #fresh: Set<string> | null = null;

  /** Notes a Claude Code hook call of `session` in the project at `root`, if it opens or closes a turn. */
  note(root: string, session: string, input: unknown, now: number): void {
    const event = (input as { hook_event_name?: unknown } | null)?.hook_event_name;
    const key = `${root}\n${session}`;
    if (event === "UserPromptSubmit" || event === "Stop" || event === "SessionEnd") this.#fresh?.add(key);
    if (event === "UserPromptSubmit") {
      this.#open.delete(key);
      this.#open.set(key, now);
      if (this.#open.size > MAX_TURNS) this.#open.delete(this.#open.keys().next().value!);
    } else if (event === "Stop" || event === "SessionEnd") this.#open.delete(key);
  }

  /** Whether a turn opened less than TURN_HOLD_MS ago is still open; older ones are forgotten. */
  holding(now: number): boolean {
    for (const [key, since] of this.#open) {
      if (now - since < TURN_HOLD_MS) return true;
      this.#open.delete(key);
    }
    return false;
  }

  /** How many turns are open. */
  get size(): number {
    return this.#open.size;
  }

  /** The open turns, each with when it opened, as plain entries (for a successor, handoff.ts). */
  entries(): [string, number][] {
    return [...this.#open];
  }

  /** Takes a predecessor's open turns, before any call is answered here. */
  take(entries: readonly [string, number][]): void {
    for (const [key, since] of entries) this.#open.set(key, since);
    this.#fresh = new Set();
  }

  /** Takes the predecessor's last open turns once it stopped answering; turns noted here keep their state. */
  settle(entries: readonly [string, number][]): void {
    settleEntries(this.#open, this.#fresh ?? new Set(), entries);
    this.#fresh = null;
  }
}
