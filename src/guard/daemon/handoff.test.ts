import { describe, expect, it } from "vitest";
import { Nonces } from "./nonces.js";
import { OpenTurns } from "./open-turns.js";
import { SessionVariables } from "./session-variables.js";

describe("the state a successor takes over", () => {
  it("takes the session variables handed over, then the predecessor's last ones, keeping those it learnt itself", () => {
    const old = new SessionVariables();
    old.remember("/a", "s1", { REINS_STORE: "one" });
    old.remember("/a", "s2", { REINS_STORE: "two" });
    const successor = new SessionVariables();
    successor.take(old.entries());
    expect(successor.of("/a", "s1")).toEqual({ REINS_STORE: "one" });
    // Both answer for a moment: the successor learns s1's new variables, the old daemon s2's and s3's.
    successor.remember("/a", "s1", { REINS_STORE: "one, newer" });
    old.remember("/a", "s1", { REINS_STORE: "one, older" });
    old.remember("/a", "s2", {});
    old.remember("/a", "s3", { REINS_STORE: "three" });
    successor.settle(old.entries());
    expect(successor.of("/a", "s1")).toEqual({ REINS_STORE: "one, newer" });
    expect(successor.of("/a", "s2")).toEqual({});
    expect(successor.of("/a", "s3")).toEqual({ REINS_STORE: "three" });
    // Settled: what it learns from now on is its own, with nothing more to merge.
    successor.remember("/a", "s3", { REINS_STORE: "three, later" });
    expect(successor.of("/a", "s3")).toEqual({ REINS_STORE: "three, later" });
  });

  it("takes the open turns handed over; a turn closed or opened on either side meanwhile ends as it did there", () => {
    const old = new OpenTurns();
    old.note("/a", "s1", { hook_event_name: "UserPromptSubmit" }, 0);
    old.note("/a", "s2", { hook_event_name: "UserPromptSubmit" }, 0);
    const successor = new OpenTurns();
    successor.take(old.entries());
    expect(successor.size).toBe(2);
    successor.note("/a", "s1", { hook_event_name: "Stop" }, 1);
    old.note("/a", "s2", { hook_event_name: "Stop" }, 1);
    old.note("/a", "s3", { hook_event_name: "UserPromptSubmit" }, 1);
    successor.settle(old.entries());
    expect(successor.entries()).toEqual([["/a\ns3", 1]]);
  });

  it("refuses a nonce its predecessor took, before the handoff or after its first entries", () => {
    const at = 1_790_000_000_000;
    const nonce = (n: number) => `${at / 1000}-${n.toString(16).padStart(32, "0")}`;
    const old = new Nonces();
    expect(old.take(nonce(1), at)).toBe(true);
    const successor = new Nonces();
    successor.adopt(JSON.parse(JSON.stringify(old.entries())) as ReturnType<Nonces["entries"]>);
    expect(old.take(nonce(2), at)).toBe(true);
    expect(successor.take(nonce(3), at)).toBe(true);
    successor.adopt(JSON.parse(JSON.stringify(old.entries())) as ReturnType<Nonces["entries"]>);
    expect([1, 2, 3].map((n) => successor.take(nonce(n), at))).toEqual([false, false, false]);
    expect(successor.take(nonce(4), at)).toBe(true);
  });
});
