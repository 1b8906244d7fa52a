// Re-records a golden trace's decisions with today's engine (`npm run build` first): the same events under
// the policy in its header, each decision as the engine now gives it. For a trace recorded from a real agent
// CLI (test/judgement-e2e.test.ts) whose judgement changed on purpose; say why in the commit.
//   node scripts/rerecord-trace.js test/traces/<name>.jsonl...
import { readFileSync, writeFileSync } from "node:fs";
import { advance } from "../dist/base/core/engine.js";
import { poolPipeline } from "../dist/base/core/batch.js";
import { initialState } from "../dist/base/core/state.js";
import { parseTrace } from "../dist/base/trace/trace.js";

for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, "utf8");
  const trace = parseTrace(text, file);
  if (trace.policy === null) throw new Error(`${file}: no policy header`);
  const rows = text.split("\n");
  const states = new Map();
  for (const { line, event, decision } of trace.lines) {
    const state = states.get(event.scope) ?? initialState(event.scope);
    states.set(event.scope, state);
    const now = advance(state, event, trace.policy, trace.pipeline === "pool" ? poolPipeline : undefined);
    if (decision === null) continue;
    const row = JSON.parse(rows[line - 1]);
    rows[line - 1] = JSON.stringify({ ...row, decision: now });
  }
  writeFileSync(file, rows.join("\n"));
  console.log(`${file}: ${trace.lines.length} events re-decided`);
}
