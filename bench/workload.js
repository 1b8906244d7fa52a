// A realistic, varied session for the benchmarks: reads, edits, commands, usage and checks over 50 files,
// so guards run their full logic instead of short-circuiting on an open breaker or a paused budget.
import { timeline } from "../dist/base/core/index.js";

/** Events of one session, `count` long, deterministic. */
export function workload(count, scope = "session:bench") {
  const t = timeline({ scope, start: Date.UTC(2026, 0, 1), step: 1_500 });
  t.started("bench");
  let i = 0;
  while (t.events.length < count) {
    const file = `src/module-${i % 50}.ts`;
    t.read(file, `v${i}`);
    t.edit(file, `change ${i}`, 3);
    t.usage({ inputTokens: 1_200 + (i % 7) * 100, outputTokens: 300, cacheReadTokens: 8_000 });
    t.bash(`npm test -- module-${i % 50}`, { ok: i % 3 !== 0, output: `run ${i}` });
    t.verify("tests", i % 3 !== 0, { command: "npm test", score: i % 3 !== 0 ? 1 : 0.8 });
    if (i % 10 === 9) t.iteration("success");
    i += 1;
  }
  return t.events.slice(0, count);
}
