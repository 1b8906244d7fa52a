// A Claude Agent SDK agent on a rein: a token budget and reins' guards, recorded in .reins/reins.db.
// In your project the imports are "reins", "reins/governor", "reins/sqlite" and "reins/claude-agent-sdk".
import { query } from "@anthropic-ai/claude-agent-sdk";
import { claudeAgentReins, ReinsStopped } from "../src/guard/adapters/claude-agent-sdk.js";
import { resolvePolicy } from "../src/base/core/index.js";
import { createGovernor } from "../src/guard/governor.js";
import { SqliteStore } from "../src/base/store/sqlite.js";

const governor = createGovernor({
  store: new SqliteStore(".reins/reins.db"),
  policy: resolvePolicy({ budget: { session: { tokens: 200_000 } } }),
});
const reins = claudeAgentReins({ governor });
const q = query({
  prompt: "Make the failing test pass.",
  options: reins.options({ permissionMode: "acceptEdits", allowedTools: ["Bash(npm test)"], maxTurns: 30 }),
});
try {
  for await (const message of reins.governed(q)) {
    if (message.type === "result" && message.subtype === "success") console.log(message.result);
  }
} catch (error) {
  if (!ReinsStopped.is(error)) throw error;
  // A person must act: extend the budget, or acknowledge the open circuit breaker.
  console.error(error.message);
  process.exitCode = 2;
} finally {
  await governor.close();
}
