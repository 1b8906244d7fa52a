// Records the efficacy benchmark's scripted sessions as golden traces under test/traces/, replayed with the
// default policy (`npm run build` first). `reins check` replays them on every test run; re-record only on
// purpose, when a change of judgement is meant, and say why in the commit.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultPolicy } from "../dist/base/core/policy.js";
import { replayRun, traceOf } from "../dist/guard/evaluate/replay.js";
import { scenarios } from "../dist/guard/evaluate/scenarios.js";

const dir = join(import.meta.dirname, "..", "test", "traces");
mkdirSync(dir, { recursive: true });
for (const scenario of scenarios()) {
  const file = join(dir, `scenario-${scenario.name}.jsonl`);
  writeFileSync(file, traceOf(replayRun(scenario.run, defaultPolicy)));
  console.log(`${file}: ${scenario.stuck ? "stuck" : "productive"}, ${scenario.what}`);
}
