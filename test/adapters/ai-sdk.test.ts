import { spawn } from "node:child_process";
import { join } from "node:path";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { build } from "esbuild";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { governSession, ReinsDenied } from "../../src/guard/adapters/ai-sdk.js";
import { resolvePolicy, scopeSummary, type PolicyInput } from "../../src/base/core/index.js";
import { createGovernor } from "../../src/guard/governor.js";
import { MemoryStore } from "../../src/base/store/memory.js";
import { finished } from "#test/processes.js";
import {
  lastFunctionCallOutputs,
  startFakeOpenAi,
  type FakeOpenAi,
  type Script,
  type ScriptedUsage,
} from "#test/fake-openai.js";

/**
 * The Vercel AI SDK (`ai` 6.0.326, `@ai-sdk/openai` 3.0.141) governed by reins' adapter, against the scripted
 * Responses API on 127.0.0.1 (`openai(model)` speaks the Responses API; `generateText` asks for JSON,
 * `streamText` for events). In the loop and budget tests the model calls a tool on every turn, so a loop
 * that ends early ended because of reins; `stepCountIs` bounds every run should reins fail to end it.
 */

const fakes: FakeOpenAi[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

async function setUp(script: Script, policy: PolicyInput = {}) {
  const fake = await startFakeOpenAi(script);
  fakes.push(fake);
  const model = createOpenAI({ baseURL: fake.url, apiKey: "test" })("gpt-4.1");
  const governor = createGovernor({ store: new MemoryStore(), policy: resolvePolicy(policy) });
  return { fake, model, governor };
}

/** The text of every tool result the model received in request `i`, for the calls of the response before. */
const resultsIn = (fake: FakeOpenAi, i: number) =>
  lastFunctionCallOutputs(fake.mainRequests()[i]!).map((o) => o.text);

describe("reins/ai-sdk", () => {
  it("denies the same failing call repeated: it does not run again, the model reads why, and reins ends the loop", async () => {
    const { fake, model, governor } = await setUp(() => ({
      functionCalls: [{ name: "run_tests", arguments: {} }],
    }));
    let runs = 0;
    const reins = governSession(governor, { session: "loop" });
    const result = await generateText({
      model,
      prompt: "Make the tests pass.",
      maxRetries: 0,
      tools: reins.tools({
        run_tests: tool({
          description: "Runs the tests.",
          inputSchema: z.object({}),
          execute: () => {
            runs += 1;
            return Promise.resolve({ exitCode: 1, output: "FAIL sum.test.ts: expected 3, received 4" });
          },
        }),
      }),
      stopWhen: [stepCountIs(10), reins.stopWhen],
      onStepFinish: reins.onStepFinish,
    });

    // Four calls ran; the fifth was denied (the breaker tripped), and the model read reins' reason.
    expect(runs).toBe(4);
    expect(resultsIn(fake, 3)[0]).toContain("FAIL sum.test.ts");
    expect(resultsIn(fake, 3)[0]).toContain("reins: The same error came back 3 times in a row");
    expect(resultsIn(fake, 5)).toEqual([
      expect.stringMatching(
        /^reins: The same run_tests call was made 5 times in a row.*circuit breaker is now open/,
      ),
    ]);
    // Its last word (a sixth call) was denied too, without running, and the loop ended: reins stopped it.
    expect(fake.mainRequests()).toHaveLength(6);
    expect(result.steps).toHaveLength(6);
    const last = result.steps[5]!.content.find((part) => part.type === "tool-error");
    expect(ReinsDenied.is(last?.error)).toBe(true);
    expect(reins.stop).toMatchObject({
      event: "tool.requested",
      reason: expect.stringContaining("The same run_tests call was made 5 times in a row"),
      decision: { verdict: "block", needsHuman: true },
    });
    const state = await governor.store.state(reins.scope);
    expect(scopeSummary(state!, governor.policy).breaker.status).toBe("open");
  });

  it("ends the loop when the session's token budget is spent, and says so to the caller", async () => {
    const { fake, model, governor } = await setUp(
      (_request, turn) => ({
        functionCalls: [{ name: "read_file", arguments: { path: `src/part-${turn}.ts` } }],
        usage: { input_tokens: 500, output_tokens: 100 },
      }),
      { budget: { session: { tokens: 1_000 } } },
    );
    const reads: string[] = [];
    const reins = governSession(governor, { session: "budget" });
    const tools = reins.tools({
      read_file: tool({
        description: "Reads a file.",
        inputSchema: z.object({ path: z.string() }),
        execute: ({ path }) => {
          reads.push(path);
          return Promise.resolve(`// ${path}`);
        },
      }),
    });
    const result = await generateText({
      model,
      prompt: "Read the project.",
      maxRetries: 0,
      tools,
      stopWhen: [stepCountIs(10), reins.stopWhen],
      onStepFinish: reins.onStepFinish,
    });

    // 600 tokens a call against 1,000: the second call's usage paused the budget and the loop ended there.
    expect(fake.mainRequests()).toHaveLength(2);
    expect(result.steps).toHaveLength(2);
    expect(reins.stop).toMatchObject({
      event: "usage.recorded",
      reason: expect.stringMatching(
        /^reins: .*1,200 tokens of 1,000.*Work is paused until a person extends it/,
      ),
      decision: { verdict: "block", needsHuman: true },
    });
    // The second step's call had already run when its usage came in; nothing runs after the stop.
    expect(reads).toEqual(["src/part-0.ts", "src/part-1.ts"]);
    const late = tools.read_file.execute?.({ path: "src/late.ts" }, { toolCallId: "late", messages: [] });
    await expect(late).rejects.toSatisfy((error) => ReinsDenied.is(error));
    expect(reads).toHaveLength(2);
  });

  it("records each model call's usage once, with the tokens the endpoint reported (streamText)", async () => {
    const usages: [ScriptedUsage, ScriptedUsage, ScriptedUsage] = [
      { input_tokens: 1_200, cached_tokens: 200, output_tokens: 80 },
      { input_tokens: 1_500, cached_tokens: 1_000, output_tokens: 40 },
      { input_tokens: 1_600, cached_tokens: 1_500, output_tokens: 30 },
    ];
    const { fake, model, governor } = await setUp([
      { functionCalls: [{ name: "read_file", arguments: { path: "a.ts" } }], usage: usages[0] },
      { functionCalls: [{ name: "read_file", arguments: { path: "b.ts" } }], usage: usages[1] },
      { text: "Both files read.", usage: usages[2] },
    ]);
    const reins = governSession(governor, { session: "usage" });
    const result = streamText({
      model,
      prompt: "Read a.ts and b.ts.",
      maxRetries: 0,
      tools: reins.tools({
        read_file: tool({
          description: "Reads a file.",
          inputSchema: z.object({ path: z.string() }),
          execute: ({ path }) => Promise.resolve(`// ${path}`),
        }),
      }),
      stopWhen: [stepCountIs(5), reins.stopWhen],
      onStepFinish: reins.onStepFinish,
    });
    expect(await result.text).toBe("Both files read.");
    const steps = await result.steps;
    expect(steps).toHaveLength(3);
    expect(fake.mainRequests()).toHaveLength(3);

    const recorded = async () =>
      (await governor.store.events(reins.scope)).flatMap((r) =>
        r.event.kind === "usage.recorded" ? [r.event] : [],
      );
    // OpenAI counts cached tokens inside input_tokens; reins keeps them apart.
    expect((await recorded()).map((e) => [e.inputTokens, e.cacheReadTokens, e.outputTokens])).toEqual([
      [1_000, 200, 80],
      [500, 1_000, 40],
      [100, 1_500, 30],
    ]);
    const spent = async () => (await governor.store.state(reins.scope))!.budget.session.spent;
    // Cache reads are not charged to the budget by default (budget.countCacheReads).
    expect((await spent()).tokens).toBe(1_000 + 80 + 500 + 40 + 100 + 30);
    // At gpt-4.1's prices per million: input $2, output $8, cache read $0.50.
    expect((await spent()).usd).toBeCloseTo((1_600 * 2 + 150 * 8 + 2_700 * 0.5) / 1e6, 9);

    // The same steps again (a second listener, a retry) add nothing: one model call counts once.
    for (const step of steps) await reins.onStepFinish(step);
    expect(await recorded()).toHaveLength(3);
    expect((await spent()).tokens).toBe(1_750);
  });

  it("records a shell-like tool's command, and its check's result from the exit code", async () => {
    const { model, governor } = await setUp([
      { functionCalls: [{ name: "sh", arguments: { command: "npm test" } }] },
      { text: "The tests fail." },
    ]);
    const reins = governSession(governor, { session: "check", like: { sh: "Bash" } });
    await generateText({
      model,
      prompt: "Run the tests.",
      maxRetries: 0,
      tools: reins.tools({
        sh: tool({
          description: "Runs a shell command.",
          inputSchema: z.object({ command: z.string() }),
          execute: () => Promise.resolve({ exitCode: 1, stdout: "Tests: 1 failed, 3 passed" }),
        }),
      }),
      stopWhen: [stepCountIs(5), reins.stopWhen],
      onStepFinish: reins.onStepFinish,
    });
    const events = (await governor.store.events(reins.scope)).map((r) => r.event);
    expect(events.map((e) => e.kind)).toEqual([
      "session.started",
      "tool.requested",
      "tool.completed",
      "verification.ran",
      "usage.recorded",
      "usage.recorded",
    ]);
    expect(events[1]).toMatchObject({ tool: "sh", command: "npm test" });
    expect(events[2]).toMatchObject({ outcome: "failure", exitCode: 1 });
    expect(events[3]).toMatchObject({ command: "npm test", passed: false });
  });

  it("passes a streaming tool's preliminary results on, and records its last one as the call's result", async () => {
    const { fake, model, governor } = await setUp([
      { functionCalls: [{ name: "build", arguments: {} }] },
      { text: "The build failed." },
    ]);
    const reins = governSession(governor, { session: "streaming" });
    const seen: unknown[] = [];
    const result = streamText({
      model,
      prompt: "Build it.",
      maxRetries: 0,
      tools: reins.tools({
        build: tool({
          description: "Builds the project, reporting progress.",
          inputSchema: z.object({}),
          async *execute() {
            yield await Promise.resolve({ status: "compiling" });
            yield { status: "done", exitCode: 2, output: "error TS2322 in src/a.ts" };
          },
        }),
      }),
      stopWhen: [stepCountIs(5), reins.stopWhen],
      onStepFinish: reins.onStepFinish,
    });
    for await (const part of result.fullStream)
      if (part.type === "tool-result") seen.push([part.preliminary === true, part.output]);
    const done = { status: "done", exitCode: 2, output: "error TS2322 in src/a.ts" };
    // The SDK passes each on as preliminary, then the last again as the result.
    expect(seen).toEqual([
      [true, { status: "compiling" }],
      [true, done],
      [false, done],
    ]);
    expect(resultsIn(fake, 1)).toEqual([expect.stringContaining("error TS2322 in src/a.ts")]);
    const ended = (await governor.store.events(reins.scope)).find((r) => r.event.kind === "tool.completed");
    expect(ended?.event).toMatchObject({ tool: "build", outcome: "failure", exitCode: 2 });
  });

  it("runs examples/ai-sdk.ts against the scripted endpoint", async () => {
    const fake = await startFakeOpenAi([
      { functionCalls: [{ name: "shell", arguments: { command: "echo 3 tests passed" } }] },
      { text: "All tests pass." },
    ]);
    fakes.push(fake);
    const root = join(import.meta.dirname, "..", "..");
    // Node 20 runs no TypeScript: esbuild strips the types (packages stay imports, resolved from the root).
    const bundle = await build({
      entryPoints: [join(root, "examples", "ai-sdk.ts")],
      bundle: true,
      packages: "external",
      platform: "node",
      format: "esm",
      write: false,
      logLevel: "silent",
    });
    const child = spawn(process.execPath, ["--input-type=module"], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "test" },
      timeout: 20_000,
    });
    child.stdin.end(bundle.outputFiles[0]!.text);
    const { code, stdout, stderr } = await finished(child);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toBe("All tests pass.\n");
    expect(resultsIn(fake, 1)).toEqual([expect.stringContaining("3 tests passed")]);
  });
});
