import { describe, expect, it } from "vitest";
import { applyBatch, chargeKey, chargeSources } from "./batch.js";
import type { Decision } from "./decision.js";
import type { ReinsEvent } from "./reins-event.js";
import { resolvePolicy } from "./policy.js";
import type { State } from "./state.js";

const policy = resolvePolicy({ pools: { team: { tokens: 1_000 } } });
const usage = (id: string, inputTokens: number, at = 1_000): ReinsEvent => ({
  kind: "usage.recorded",
  id,
  at,
  scope: "session:s",
  inputTokens,
});

/** Runs a batch on fresh states kept in `states`, as a store would. */
function run(states: Map<string, State>, events: ReinsEvent[], charged?: Map<ReinsEvent, Decision>) {
  const result = applyBatch(
    "session:s",
    events,
    policy,
    (s) => states.get(s) ?? null,
    () => false,
    undefined,
    charged === undefined ? undefined : (_pool, event) => charged.get(event),
  );
  for (const [s, state] of result.states) states.set(s, state);
  return result;
}

describe("pool charges applied in steps of their own", () => {
  it("names the session event each pool record charges", () => {
    const events = [usage("u1", 100), usage("u2", 200)];
    const { records } = run(new Map(), events);
    const sources = chargeSources("session:s", records);
    const pools = records.filter((r) => r.scope === "pool:team");
    expect(pools.map((r) => sources.get(r))).toEqual(events);
    expect(chargeKey("session:s", "u1")).toBe("session:s\nu1");
  });

  it("does not charge a pool again for a charge already recorded, and combines its recorded decision", () => {
    const whole = run(new Map(), [usage("u1", 600), usage("u2", 500)]);
    const poolDecisions = new Map<ReinsEvent, Decision>();
    const events = [usage("u1", 600), usage("u2", 500)];
    const sources = chargeSources("session:s", whole.records);
    for (const [record, source] of sources) {
      const event = events.find((e) => e.id === source.id);
      if (event !== undefined) poolDecisions.set(event, record.decision);
    }
    // The pool was charged for both already (a step of its own): the session alone is written now.
    const again = run(new Map(), events, poolDecisions);
    expect(again.records.map((r) => r.scope)).toEqual(["session:s", "session:s"]);
    expect([...again.states.keys()]).toEqual(["session:s"]);
    expect(again.answers).toEqual(whole.answers);
    expect(again.answers[1]?.verdict).toBe("block");
  });

  it("charges no pool for spend that reaches it another way (pools: false), and the session all the same", () => {
    const states = new Map<string, State>();
    const elsewhere: ReinsEvent = {
      kind: "usage.recorded",
      id: "u1",
      at: 1_000,
      scope: "session:s",
      inputTokens: 600,
      pools: false,
    };
    const tool: ReinsEvent = {
      kind: "tool.requested",
      id: "t1",
      at: 1_000,
      scope: "session:s",
      tool: "x",
      inputHash: "h",
      pools: false,
    };
    const { records } = run(states, [elsewhere, tool, usage("u2", 300)]);
    expect(records.map((r) => r.scope)).toEqual(["session:s", "session:s", "session:s", "pool:team"]);
    expect(states.get("pool:team")?.budget.session.spent.tokens).toBe(300);
    expect(states.get("session:s")?.budget.session.spent.tokens).toBe(900);
  });
});
