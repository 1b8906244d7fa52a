// reins around a Vercel AI SDK agent loop. In your project, import from "reins/ai-sdk", "reins/governor" and "reins".
// Needs OPENAI_API_KEY (and OPENAI_BASE_URL for another endpoint).
import { spawnSync } from "node:child_process";
import { openai } from "@ai-sdk/openai";
import { generateText, stepCountIs, tool } from "ai";
import * as z from "zod";
import { governSession } from "../src/guard/adapters/ai-sdk.js";
import { resolvePolicy } from "../src/base/core/index.js";
import { createGovernor } from "../src/guard/governor.js";

const governor = createGovernor({ policy: resolvePolicy({ budget: { session: { tokens: 200_000 } } }) });
const reins = governSession(governor, { session: "example", like: { shell: "Bash" } });

const shell = tool({
  description: "Runs a shell command in the project.",
  inputSchema: z.object({ command: z.string() }),
  execute: ({ command }) => {
    const run = spawnSync("sh", ["-c", command], { encoding: "utf8" });
    return { exitCode: run.status ?? 1, output: run.stdout + run.stderr };
  },
});

const result = await generateText({
  model: openai("gpt-4.1"),
  prompt: "Make `npm test` pass.",
  tools: reins.tools({ shell }),
  stopWhen: [stepCountIs(30), reins.stopWhen],
  onStepFinish: reins.onStepFinish,
});
console.log(result.text);
if (reins.stop !== null) console.log(`Stopped by reins: ${reins.stop.reason}`);
