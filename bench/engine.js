// Engine benchmarks: replay throughput over a 100,000-event session, per-decision latency, and the rate at
// which a store rebuilds a state from logged records, each against a baseline measured in the same run (JSON
// round trip of each event).
import { advance, decide, initialState, replay, resolvePolicy } from "../dist/base/core/index.js";
import { rebuild } from "../dist/base/core/snapshot.js";
import { median, medianOf, quantile } from "./stats.js";
import { workload } from "./workload.js";

// Budgets and the iteration limit lifted: the workload is one long session, and past either limit every call
// would be blocked by the first guards and the rest would never run (with the default 30 iterations, 37% of
// the events stopped at the second guard).
const policy = resolvePolicy({
  budget: { session: { tokens: null }, task: { tokens: null }, taskTypes: {} },
  iterations: { max: 1_000_000_000 },
});

const rate = (count, fn) => {
  const t0 = process.hrtime.bigint();
  fn();
  return count / (Number(process.hrtime.bigint() - t0) / 1e9);
};
const perSecond = (n) => `${Math.round(n).toLocaleString("en")}`;

export function engineBench(report) {
  const events = workload(100_000);
  // Warmed up by whole replays, not a slice: the first replays of a fresh process run while V8 still grows its
  // heap to what 100,000 kept decisions need (about 0.8x the rate after), which is the heap's start, not the
  // engine's speed. The baseline is warmed the same way.
  const WARM_UP = 3;
  let decisions = [];
  for (let i = 0; i < WARM_UP; i++) decisions = replay(policy, events);

  const roundTrips = () => {
    let n = 0;
    for (const e of events) n += JSON.parse(JSON.stringify(e)).at > 0 ? 1 : 0;
    return n;
  };
  for (let i = 0; i < WARM_UP; i++) roundTrips();
  const baselineRate = medianOf(5, () => {
    let n = 0;
    const r = rate(events.length, () => (n = roundTrips()));
    return r + n * 0;
  });
  const baseline = `JSON round trip of each event: ${perSecond(baselineRate)} events/s`;
  const ratio = (r) => `${(baselineRate / r).toFixed(2)}x the baseline's time per event`;

  const replayRate = medianOf(5, () => rate(events.length, () => (decisions = replay(policy, events))));
  report("replay throughput (100,000-event session)", `${perSecond(replayRate)} events/s`, {
    baseline,
    ratio: ratio(replayRate),
    runs: `median of 5, after ${WARM_UP} whole replays to warm up`,
    aim: ">= 1,000,000 events/s",
  });

  // What a store does on a read: the state rebuilt from logged records, without asking the guards.
  const records = events.map((event, i) => ({ event, decision: decisions[i] }));
  const rebuildRate = medianOf(5, () =>
    rate(records.length, () => rebuild("session:bench", null, records, policy)),
  );
  report("rebuild from log records (100,000 records, no guards)", `${perSecond(rebuildRate)} records/s`, {
    baseline,
    ratio: ratio(rebuildRate),
  });

  // Latency of single decisions on a state that has seen a long session: advance (the store's path, on a
  // state it owns) and decide (pure: copies on write the parts of the state the event changes).
  const state = initialState("session:bench");
  for (const e of events.slice(0, 50_000)) advance(state, e, policy);
  const probe = events.slice(50_000, 70_000);
  const advanceNs = [];
  for (const e of probe) {
    const t0 = process.hrtime.bigint();
    advance(state, e, policy);
    advanceNs.push(Number(process.hrtime.bigint() - t0));
  }
  const decideNs = [];
  let s = state;
  for (const e of events.slice(70_000, 90_000)) {
    const t0 = process.hrtime.bigint();
    s = decide(s, e, policy).state;
    decideNs.push(Number(process.hrtime.bigint() - t0));
  }
  report(
    "decision latency, advance (state owned by caller)",
    `p50 ${(median(advanceNs) / 1000).toFixed(2)} µs`,
    {
      p99: `${(quantile(advanceNs, 0.99) / 1000).toFixed(2)} µs`,
      aim: "<= 2 µs p50",
    },
  );
  report("decision latency, decide (pure, copy-on-write)", `p50 ${(median(decideNs) / 1000).toFixed(2)} µs`, {
    p99: `${(quantile(decideNs, 0.99) / 1000).toFixed(2)} µs`,
    aim: "<= 10 µs p50",
    state: `${JSON.stringify(s).length.toLocaleString("en")} bytes of JSON`,
  });
}
