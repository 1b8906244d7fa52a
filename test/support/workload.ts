/**
 * A long, varied session for store tests: reads, edits, commands that fail and pass, usage, checks and
 * iterations over a dozen files, with a person extending the budget now and then, so every part of the
 * state changes and the guards speak.
 */
import { timeline, type ReinsEvent } from "../../src/base/core/index.js";

/** The first `count` events of such a session in `scope`, deterministic, each with an id. */
export function workload(count: number, scope: string): ReinsEvent[] {
  const t = timeline({ scope, start: Date.UTC(2026, 10, 1), step: 2_000 });
  t.started("tester");
  for (let i = 0; t.events.length < count; i++) {
    const file = `src/part-${i % 12}.ts`;
    t.read(file, `v${i % 5}`).edit(file, `edit ${i}`, 1 + (i % 9));
    t.usage({ inputTokens: 900 + (i % 4) * 50, outputTokens: 200, cacheReadTokens: 4_000 });
    t.bash(i % 4 === 0 ? "npm run lint" : `npm test -- part-${i % 12}`, {
      ok: i % 4 !== 0,
      output: `r${i % 6}`,
    });
    t.verify("tests", i % 5 !== 0, { command: "npm test", score: i % 5 === 0 ? 0.7 : 1 });
    if (i % 8 === 7) t.iteration(i % 16 === 7 ? "success" : "failure");
    if (i % 40 === 39) t.extend("tokens", 5_000);
  }
  return t.events.slice(0, count).map((event, i) => ({ ...event, id: `${scope}#${i}` }));
}
