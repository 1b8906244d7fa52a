/**
 * An OpenAI Agents SDK agent on reins' rein (README, "Use reins as a library"): `OPENAI_API_KEY=sk-...`, then
 * run it with a TypeScript runner. Inside the package, import from `reins/openai-agents`, `reins/governor`, `reins`.
 */
import { readFile } from "node:fs/promises";
import { Agent, OpenAIProvider, Runner, tool } from "@openai/agents";
import * as z from "zod";
import { governAgents, reinsStopOf } from "../src/guard/adapters/openai-agents.js";
import { resolvePolicy } from "../src/base/core/index.js";
import { createGovernor } from "../src/guard/governor.js";

const governor = createGovernor({ policy: resolvePolicy({ budget: { session: { tokens: 200_000 } } }) });
const reins = governAgents(governor, { session: "login-bug" });
const read = tool({
  name: "read_file",
  description: "Reads a file of the project.",
  parameters: z.object({ path: z.string() }),
  execute: ({ path }) => readFile(path, "utf8"),
});
const agent = new Agent({ name: "fixer", model: "gpt-4.1", tools: reins.tools([read]) });
const runner = new Runner({ modelProvider: reins.provider(new OpenAIProvider()) });
try {
  const result = await runner.run(agent, "The login test fails. Find out why.", { maxTurns: 30 });
  console.log(result.finalOutput);
} catch (error) {
  const stop = reinsStopOf(error); // a spent budget or an open breaker: a person must act
  if (stop === null) throw error;
  console.error(`reins stopped the run: ${stop.reason}`);
} finally {
  await governor.close();
}
