/** Tests of the daemon's nonces: a call played again is refused, and their memory is bounded. */
import { describe, expect, it } from "vitest";
import { Nonces } from "./nonces.js";

const T = 1_790_000_000; // unix seconds
const nonce = (seconds: number, n: number) => `${seconds}-${n.toString(16).padStart(32, "0")}`;

describe("the hook daemon's nonces", () => {
  it("takes a fresh nonce once, and refuses one stale, from the future or malformed", () => {
    const nonces = new Nonces();
    expect(nonces.take(nonce(T, 1), T * 1000)).toBe(true);
    expect(nonces.take(nonce(T, 1), T * 1000 + 5)).toBe(false);
    expect(nonces.take(nonce(T - 301, 2), T * 1000)).toBe(false);
    expect(nonces.take(nonce(T + 301, 3), T * 1000)).toBe(false);
    for (const bad of [null, 42, "", "x-1", `${T}-abc`, "__proto__", `${T}-${"0".repeat(31)}g`])
      expect(nonces.take(bad, T * 1000)).toBe(false);
  });

  it("keeps at most its cap, and refuses any nonce stamped at or before the newest one it forgot", () => {
    const nonces = new Nonces(100);
    // 1,000 calls over 100 seconds: 10 a second.
    for (let i = 0; i < 1_000; i++) {
      const at = T + Math.floor(i / 10);
      expect(nonces.take(nonce(at, i), at * 1000)).toBe(true);
      expect(nonces.size).toBeLessThanOrEqual(100);
    }
    const now = (T + 100) * 1000;
    // Every nonce forgotten is refused if played again (stamped at or below the floor) ...
    for (let i = 0; i < 900; i++) expect(nonces.take(nonce(T + Math.floor(i / 10), i), now)).toBe(false);
    // ... as is every one still remembered; a fresh one is taken.
    for (let i = 900; i < 1_000; i++) expect(nonces.take(nonce(T + Math.floor(i / 10), i), now)).toBe(false);
    expect(nonces.take(nonce(T + 100, 5_000), now)).toBe(true);
  });

  it("forgets nonces twice the window after they were seen, never those still playable", () => {
    const nonces = new Nonces();
    nonces.take(nonce(T, 1), T * 1000);
    nonces.take(nonce(T + 300, 2), (T + 300) * 1000);
    nonces.sweep((T + 600) * 1000);
    expect(nonces.size).toBe(2);
    nonces.sweep((T + 601) * 1000);
    expect(nonces.size).toBe(1);
    // The one left is still within its window at T + 600 s, so it is still refused if played again.
    expect(nonces.take(nonce(T + 300, 2), (T + 600) * 1000)).toBe(false);
  });
});
