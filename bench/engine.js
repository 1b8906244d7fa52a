// Engine benchmarks: replay throughput over a 100,000-event session and per-decision latency,
// each against a baseline measured in the same run (JSON round trip of each event).
import { advance, decide, initialState, replay, resolvePolicy } from "../dist/core/index.js";
import { median, medianOf, quantile } from "./stats.js";
import { workload } from "./workload.js";

const policy = resolvePolicy({
  budget: { session: { tokens: null }, task: { tokens: null }, taskTypes: {} },
});

export function engineBench(report) {
  const events = workload(100_000);
  replay(policy, events.slice(0, 20_000)); // warm up

  const baselineRate = medianOf(5, () => {
    const t0 = process.hrtime.bigint();
    let n = 0;
    for (const e of events) n += JSON.parse(JSON.stringify(e)).at > 0 ? 1 : 0;
    return events.length / (Number(process.hrtime.bigint() - t0) / 1e9) + n * 0;
  });
  const replayRate = medianOf(5, () => {
    const t0 = process.hrtime.bigint();
    replay(policy, events);
    return events.length / (Number(process.hrtime.bigint() - t0) / 1e9);
  });
  report(
    "replay throughput (100,000-event session)",
    `${Math.round(replayRate).toLocaleString("en")} events/s`,
    {
      baseline: `JSON round trip of each event: ${Math.round(baselineRate).toLocaleString("en")} events/s`,
      ratio: `${(baselineRate / replayRate).toFixed(2)}x the baseline's time per event`,
      aim: ">= 300,000 events/s",
    },
  );

  // Latency of single decisions on a state that has seen a long session: advance (the store's path, on a
  // state it owns) and decide (pure, clones the state first).
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
  for (const e of events.slice(70_000, 75_000)) {
    const t0 = process.hrtime.bigint();
    s = decide(s, e, policy).state;
    decideNs.push(Number(process.hrtime.bigint() - t0));
  }
  report(
    "decision latency, advance (state owned by caller)",
    `p50 ${(median(advanceNs) / 1000).toFixed(2)} µs`,
    {
      p99: `${(quantile(advanceNs, 0.99) / 1000).toFixed(2)} µs`,
      aim: "<= 20 µs p50",
    },
  );
  report("decision latency, decide (pure, clones state)", `p50 ${(median(decideNs) / 1000).toFixed(2)} µs`, {
    p99: `${(quantile(decideNs, 0.99) / 1000).toFixed(2)} µs`,
    state: `${JSON.stringify(s).length.toLocaleString("en")} bytes of JSON`,
  });
}
