/** What the SQLite and Redis stores share: when a snapshot is due, and the state rebuilt from one. */
import { describe, expect, it } from "vitest";
import { applyBatch, type LogRecord } from "../core/batch.js";
import { defaultPolicy, initialState, resolvePolicy } from "../core/index.js";
import { SNAPSHOT_EVERY } from "../core/snapshot.js";
import type { State } from "../core/state.js";
import { nextSnapshot, rebuilt, type Cached } from "./logged-store.js";
import { storedPolicy } from "./snapshots.js";

const scope = "session:l";
const at = (seq: number): State => ({ ...initialState(scope), seq });
const counting = resolvePolicy({ budget: { countCacheReads: true } });
const usage = (n: number) => ({
  kind: "usage.recorded" as const,
  scope,
  at: 1_790_000_000_000 + n,
  inputTokens: 10,
  cacheReadTokens: 100,
});

/** The records of `n` usage events from a scope's start, decided under `policy`, and the state they end at. */
function decided(n: number, policy = counting): { records: LogRecord[]; state: State } {
  const events = Array.from({ length: n }, (_x, i) => usage(i));
  const result = applyBatch(
    scope,
    events,
    policy,
    () => null,
    () => false,
  );
  return { records: result.records, state: result.states.get(scope)! };
}

describe("nextSnapshot", () => {
  it("writes a new scope's snapshot with the policy it is decided under", () => {
    const state = at(3);
    const { snapshot, cached } = nextSnapshot(scope, state, null, defaultPolicy);
    const stored = storedPolicy(scope, defaultPolicy);
    expect(snapshot).toEqual({
      json: JSON.stringify(state),
      policyId: stored.id,
      policyJson: stored.json,
      bytes: JSON.stringify(state).length + stored.json.length,
    });
    expect(cached).toEqual({ state, snapshotSeq: 3, policyId: stored.id });
  });

  it(`writes none until ${SNAPSHOT_EVERY} records follow the snapshot, then one without the policy kept`, () => {
    const before: Cached = {
      state: at(10),
      snapshotSeq: 10,
      policyId: storedPolicy(scope, defaultPolicy).id,
    };
    const short = at(10 + SNAPSHOT_EVERY - 1);
    expect(nextSnapshot(scope, short, before, defaultPolicy)).toEqual({
      snapshot: null,
      cached: { state: short, snapshotSeq: 10, policyId: before.policyId },
    });
    const due = at(10 + SNAPSHOT_EVERY);
    const { snapshot, cached } = nextSnapshot(scope, due, before, defaultPolicy);
    expect(snapshot?.policyJson).toBeNull();
    expect(snapshot?.bytes).toBe(JSON.stringify(due).length);
    expect(cached.snapshotSeq).toBe(10 + SNAPSHOT_EVERY);
  });

  it("writes one at once, with the new policy, when the scope is decided under another policy", () => {
    const before: Cached = {
      state: at(10),
      snapshotSeq: 10,
      policyId: storedPolicy(scope, defaultPolicy).id,
    };
    const { snapshot } = nextSnapshot(scope, at(11), before, counting);
    expect(snapshot?.policyJson).toBe(storedPolicy(scope, counting).json);
    expect(snapshot?.policyId).toBe(storedPolicy(scope, counting).id);
  });

  it("keeps what the backend's cached state carries beside it when no snapshot is due", () => {
    const before = {
      state: at(10),
      snapshotSeq: 10,
      policyId: storedPolicy(scope, defaultPolicy).id,
      born: "7",
    };
    expect(nextSnapshot(scope, at(11), before, defaultPolicy).cached).toMatchObject({ born: "7" });
  });
});

describe("rebuilt", () => {
  const kept = { id: storedPolicy(scope, counting).id, json: storedPolicy(scope, counting).json };

  it("replays the tail under the policy kept with the snapshot, whatever the caller's", () => {
    const { records, state } = decided(3);
    expect(state.budget.session.spent.tokens).toBe(330);
    for (const policy of [counting, defaultPolicy, null]) {
      const again = rebuilt(scope, initialState(scope), records, policy, kept);
      expect(again).toEqual(state);
    }
  });

  it("returns the snapshot itself when no records follow it, without reading the kept policy", () => {
    const snapshot = at(5);
    expect(rebuilt(scope, snapshot, [], null, { id: "x", json: "not JSON" })).toBe(snapshot);
  });
});
