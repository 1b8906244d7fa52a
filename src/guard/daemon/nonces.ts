/**
 * The nonces of the calls the hook daemon answered: a call whose nonce is stale, from the future or already
 * seen is refused, so a call another program took cannot be played again. Bounded: past `cap` nonces the
 * oldest is forgotten and its time becomes a floor no nonce may be stamped at or before.
 */
import { NONCE, NONCE_WINDOW_S } from "./protocol.js";

/**
 * How many nonces are kept at most: about 2 MB. At 300 hook calls a second the floor lies about 55 s back,
 * and a client on the same machine stamps its nonce the moment it sends.
 */
export const NONCE_CAP = 16_384;

/** What a daemon hands its successor of its nonces. */
export interface HandedNonces {
  seen: [string, number][];
  /** The floor, or null when none was set. */
  floor: number | null;
}

export class Nonces {
  /** Each nonce remembered, by the time it was seen (ms). Insertion order is the order of arrival. */
  private readonly seen = new Map<string, number>();
  /** The stamp (unix seconds) of the newest nonce forgotten to keep under the cap. */
  private floor = -Infinity;

  constructor(private readonly cap = NONCE_CAP) {}

  /** Whether `nonce` is well formed, within the window, above the floor and new; it is then remembered. */
  take(nonce: unknown, now: number): boolean {
    if (typeof nonce !== "string") return false;
    const stamp = NONCE.exec(nonce)?.[1];
    if (stamp === undefined) return false;
    const time = Number(stamp);
    if (Math.abs(time - now / 1000) > NONCE_WINDOW_S || time <= this.floor) return false;
    if (this.seen.has(nonce)) return false;
    this.seen.set(nonce, now);
    this.trim();
    return true;
  }

  private trim(): void {
    while (this.seen.size > this.cap) {
      const oldest = this.seen.keys().next().value as string;
      this.seen.delete(oldest);
      this.floor = Math.max(this.floor, Number(NONCE.exec(oldest)?.[1] ?? 0));
    }
  }

  /**
   * Forgets the nonces no call can carry again: one seen at `at` was stamped at most NONCE_WINDOW_S after it
   * (the window's far side), and is refused as stale NONCE_WINDOW_S after its stamp.
   */
  sweep(now: number): void {
    for (const [nonce, at] of this.seen) {
      if (now - at <= 2 * NONCE_WINDOW_S * 1000) break;
      this.seen.delete(nonce);
    }
  }

  /** The nonces remembered and the floor, as plain data (for a successor daemon, handoff.ts). */
  entries(): HandedNonces {
    return { seen: [...this.seen], floor: Number.isFinite(this.floor) ? this.floor : null };
  }

  /**
   * Takes the nonces a predecessor daemon saw, so a call it answered is refused here too: added to those
   * seen here (taken twice: as handed over, and as the predecessor ended).
   */
  adopt(handed: HandedNonces): void {
    for (const [nonce, at] of handed.seen) if (!this.seen.has(nonce)) this.seen.set(nonce, at);
    if (handed.floor !== null) this.floor = Math.max(this.floor, handed.floor);
    this.trim();
  }

  /** How many nonces are remembered. */
  get size(): number {
    return this.seen.size;
  }
}
