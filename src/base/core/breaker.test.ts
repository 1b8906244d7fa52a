import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  closedBreaker,
  halfOpenBreaker,
  passProbe,
  resetBreaker,
  sendProbe,
  settleBreaker,
  tripBreaker,
  type Breaker,
} from "./breaker.js";
import { MAX_TEXT } from "./capped.js";
import type { Decision } from "./decision.js";
import { advance } from "./engine.js";
import type { ReinsEvent } from "./reins-event.js";
import { resolvePolicy, type PolicyInput } from "./policy.js";
import { initialState, type State } from "./state.js";

const timing = { autoHalfOpenMs: null, cooldownMs: 60_000 };
const open = tripBreaker(closedBreaker(), "duplicate_calls", "The same call 5 times", 1_000);
const halfOpen = halfOpenBreaker(open);

describe("breaker", () => {
  it("trips from any status to open at that time, one trip more, its detail clipped", () => {
    expect(open).toEqual({
      status: "open",
      reason: "duplicate_calls",
      detail: "The same call 5 times",
      openedAt: 1_000,
      probe: "none",
      probeAt: null,
      trips: 1,
    });
    const again = tripBreaker(sendProbe(halfOpen, 2_000), "probe_failed", "x".repeat(10_000), 3_000);
    expect(again).toMatchObject({
      status: "open",
      reason: "probe_failed",
      openedAt: 3_000,
      probe: "none",
      trips: 2,
    });
    expect(again.detail.length).toBeLessThanOrEqual(MAX_TEXT);
  });

  it("half-opens only an open breaker, keeping why and when it opened", () => {
    expect(halfOpen).toEqual({ ...open, status: "half_open" });
    expect(halfOpenBreaker(closedBreaker())).toEqual(closedBreaker());
    const probing = sendProbe(halfOpen, 2_000);
    expect(halfOpenBreaker(probing)).toBe(probing);
  });

  it("resets any status to closed, keeping when it last opened and how often it tripped", () => {
    const closed = { ...closedBreaker(), openedAt: 1_000, trips: 1 };
    expect(resetBreaker(open)).toEqual(closed);
    expect(resetBreaker(passProbe(sendProbe(halfOpen, 2_000), 3_000))).toEqual(closed);
    expect(resetBreaker(closedBreaker())).toEqual(closedBreaker());
  });

  it("sends one probe only when half-open, and passes it only while it is out", () => {
    expect(sendProbe(open, 2_000)).toBe(open);
    const probing = sendProbe(halfOpen, 2_000);
    expect(probing).toMatchObject({ status: "half_open", probe: "in_flight", probeAt: 2_000 });
    expect(passProbe(halfOpen, 3_000)).toBe(halfOpen);
    expect(passProbe(probing, 3_000)).toMatchObject({ status: "half_open", probe: "passed", probeAt: 3_000 });
  });

  it("half-opens by itself once autoHalfOpenMs has passed since it opened, never when it is null", () => {
    expect(settleBreaker(open, 1e12, timing)).toBe(open);
    const auto = { ...timing, autoHalfOpenMs: 30_000 };
    expect(settleBreaker(open, 30_999, auto)).toBe(open);
    expect(settleBreaker(open, 31_000, auto)).toEqual(halfOpen);
  });

  it("closes once cooldownMs has passed after a good probe, not before, and not with the probe out", () => {
    const probing = sendProbe(halfOpen, 2_000);
    expect(settleBreaker(probing, 1e12, timing)).toBe(probing);
    const passed = passProbe(probing, 3_000);
    expect(settleBreaker(passed, 62_999, timing)).toBe(passed);
    expect(settleBreaker(passed, 63_000, timing)).toEqual(resetBreaker(passed));
  });

  it("stores the same flat record of seven fields, in one order, whatever its status", () => {
    const statuses: Breaker[] = [closedBreaker(), open, halfOpen, sendProbe(halfOpen, 2), resetBreaker(open)];
    for (const breaker of statuses)
      expect(Object.keys(breaker)).toEqual([
        "status",
        "reason",
        "detail",
        "openedAt",
        "probe",
        "probeAt",
        "trips",
      ]);
  });
});

/** States written by reins before the breaker was a union, with the decisions that version made after them. */
interface Fixture {
  trace: string;
  open: { after: number; state: State };
  halfOpen: {
    events: ReinsEvent[];
    state: State;
    next: ReinsEvent[];
    decisions: Decision[];
    breaker: Breaker;
  };
}

describe("a snapshot stored before the breaker was a union", () => {
  const fixtures = join(import.meta.dirname, "../../../test/fixtures/states");
  const fixture = JSON.parse(readFileSync(join(fixtures, "breaker-before-union.json"), "utf8")) as Fixture;
  const rows = readFileSync(join(import.meta.dirname, "../../../test/traces", fixture.trace), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { policy: PolicyInput; event: ReinsEvent; decision: Decision });
  const policy = resolvePolicy(rows[0]!.policy);
  const lines = rows.slice(1);
  /** What a golden trace compares of a decision. */
  const said = (d: Decision) => ({
    verdict: d.verdict,
    needsHuman: d.needsHuman,
    instructions: d.instructions,
    alerts: d.alerts,
  });

  it("is what today's engine stores at the same point, byte for byte", () => {
    const state = initialState(fixture.open.state.scope);
    for (const { event } of lines.slice(0, fixture.open.after)) advance(state, event, policy);
    expect(state.breaker.status).toBe("open");
    expect(JSON.stringify(state)).toBe(JSON.stringify(fixture.open.state));
  });

  it("loads open and decides the rest of its golden trace as recorded", () => {
    const state = structuredClone(fixture.open.state);
    const rest = lines.slice(fixture.open.after);
    expect(rest.map(({ event }) => said(advance(state, event, policy)))).toEqual(
      rest.map(({ decision }) => said(decision)),
    );
  });

  it("loads half-open with its probe out and decides as that version did, until the breaker closes", () => {
    const state = structuredClone(fixture.open.state);
    for (const event of fixture.halfOpen.events) advance(state, event, policy);
    expect(state).toEqual(fixture.halfOpen.state);

    const loaded = structuredClone(fixture.halfOpen.state);
    expect(fixture.halfOpen.next.map((event) => advance(loaded, event, policy))).toEqual(
      fixture.halfOpen.decisions,
    );
    expect(loaded.breaker).toEqual(fixture.halfOpen.breaker);
    expect(loaded.breaker.status).toBe("closed");
  });
});
