import {
  Agent,
  OpenAIProvider,
  Runner,
  setTracingDisabled,
  tool,
  type Tool,
  type Usage,
} from "@openai/agents";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as z from "zod";
import {
  governAgents,
  ReinsStopped,
  reinsStopOf,
  type GovernedAgents,
} from "../../../src/guard/adapters/openai-agents.js";
import { resolvePolicy, scopeSummary, type PolicyInput } from "../../../src/base/core/index.js";
import { createGovernor, type Governor } from "../../../src/guard/governor.js";
import {
  lastFunctionCallOutputs,
  startFakeOpenAi,
  type FakeOpenAi,
  type Script,
  type ScriptedReply,
} from "#test/fake-openai.js";

/**
 * The OpenAI Agents SDK (`@openai/agents` 0.14.3, the real package) driven against a scripted Responses API
 * on 127.0.0.1, with reins' guardrails on its tools and reins' wrapper around its model. Every run is bounded
 * by `maxTurns` and by its script (past its end the fake answers with text, which ends a run); nothing waits
 * on a clock.
 */

// The SDK would otherwise export traces to api.openai.com.
setTracingDisabled(true);

const MODEL = "gpt-4.1";
const SESSION = "agents-test";
const MAX_TURNS = 10;

let fake: FakeOpenAi | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await fake?.close();
  fake = undefined;
});

/** A tool that counts its runs and fails the same way every time (the SDK turns the throw into its output). */
function failingTests() {
  const runs = { count: 0 };
  const runTests = tool({
    name: "run_tests",
    description: "Runs the test suite.",
    parameters: z.object({ attempt: z.number().int() }),
    execute: () => {
      runs.count += 1;
      throw new Error("1 test failed: expected 2 to equal 3");
    },
  });
  return { runs, runTests };
}

/** A tool that counts its runs and always succeeds. */
function readFile() {
  const runs = { count: 0 };
  const read = tool({
    name: "read_file",
    description: "Reads a file.",
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => {
      runs.count += 1;
      return `contents of ${path}`;
    },
  });
  return { runs, read };
}

interface Setup {
  governor: Governor;
  reins: GovernedAgents;
  /** Runs the agent with `tools` once to its end or to the error it threw; streamed, when `stream`. */
  run: (tools: Tool[], stream?: boolean) => Promise<{ output: unknown; error: unknown; usage: Usage | null }>;
}

async function setup(script: Script, policy: PolicyInput = {}): Promise<Setup> {
  fake = await startFakeOpenAi(script);
  const governor = createGovernor({ policy: resolvePolicy(policy), onWarning: () => {} });
  const reins = governAgents(governor, { session: SESSION });
  const provider = new OpenAIProvider({ apiKey: "sk-test", baseURL: fake.url, useResponses: true });
  const runner = new Runner({ modelProvider: reins.provider(provider), tracingDisabled: true });
  return {
    governor,
    reins,
    async run(tools, stream = false) {
      const agent = new Agent({
        name: "fixer",
        instructions: "Fix the bug.",
        model: MODEL,
        tools: reins.tools(tools),
      });
      const input = "Make the tests pass.";
      try {
        if (!stream) {
          const result = await runner.run(agent, input, { maxTurns: MAX_TURNS });
          return { output: result.finalOutput, error: undefined, usage: result.state.usage };
        }
        const result = await runner.run(agent, input, { maxTurns: MAX_TURNS, stream: true });
        for await (const _event of result);
        await result.completed;
        if (result.error !== null) return { output: undefined, error: result.error, usage: null };
        return { output: result.finalOutput, error: undefined, usage: result.state.usage };
      } catch (error) {
        return { output: undefined, error, usage: null };
      }
    },
  };
}

const call = (name: string, args: object, usage?: ScriptedReply["usage"]): ScriptedReply => ({
  functionCalls: [{ name, arguments: args }],
  ...(usage !== undefined ? { usage } : {}),
});

/** What the model was sent, in its request `turn`, as the outputs of its previous calls. */
function outputsSeen(turn: number): string[] {
  const request = fake!.mainRequests()[turn];
  if (request === undefined) throw new Error(`the model had no request ${turn}`);
  return lastFunctionCallOutputs(request).map((o) => o.text);
}

describe("reins/openai-agents", () => {
  it("denies a call repeated with only its details changed: the tool does not run, the model reads reins' reason", async () => {
    const { runs, runTests } = failingTests();
    const { governor, run } = await setup(
      [
        call("run_tests", { attempt: 1 }),
        call("run_tests", { attempt: 2 }),
        call("run_tests", { attempt: 3 }),
        { text: "I will look for the cause instead." },
      ],
      { loops: { nearIdenticalThreshold: 3 } },
    );

    const { output, error } = await run([runTests]);

    expect(error).toBeUndefined();
    expect(output).toBe("I will look for the cause instead.");
    expect(runs.count).toBe(2);
    expect(fake!.mainRequests()).toHaveLength(4);
    // The first two calls ran and failed; the model got the SDK's error text for them.
    expect(outputsSeen(1)[0]).toMatch(/^An error occurred while running the tool/);
    // The third was denied: what the model read is reins' decision for it, word for word.
    const denied = (await governor.store.events(`session:${SESSION}`)).filter(
      (r) => r.event.kind === "tool.requested" && r.decision.verdict === "block",
    );
    expect(denied).toHaveLength(1);
    expect(denied[0]!.decision.needsHuman).toBe(false);
    const reason = `reins: ${denied[0]!.decision.instructions.join(" ")}`;
    expect(reason).toContain("It was not run");
    expect(outputsSeen(3)).toEqual([reason]);
  });

  it("stops the run when the same failing call trips the breaker: run() rejects with reins' reason", async () => {
    const { runs, runTests } = failingTests();
    const script = Array.from({ length: 8 }, () => call("run_tests", { attempt: 1 }));
    const { reins, run } = await setup(script);

    const { error } = await run([runTests]);

    // The fifth identical failing call opened the breaker: it did not run, and no sixth model call was made.
    expect(runs.count).toBe(4);
    expect(fake!.mainRequests()).toHaveLength(5);
    const stop = reinsStopOf(error);
    expect(stop).not.toBeNull();
    expect(stop!.scope).toBe(`session:${SESSION}`);
    expect(stop!.decision).toMatchObject({ verdict: "block", needsHuman: true });
    expect(stop!.reason).toMatch(/^reins: .*circuit breaker is now open/);
    expect(reins.stopped).toEqual(stop);
    // On the way there, reins' advice followed the third failure's output.
    expect(outputsSeen(3)[0]).toContain("The same error came back 3 times in a row");
  });

  for (const stream of [false, true]) {
    it(`ends the SDK's loop when the token budget is spent, before maxTurns, with a ReinsStopped (${stream ? "streamed" : "not streamed"})`, async () => {
      const { runs, read } = readFile();
      const script = [
        call("read_file", { path: "a.ts" }, { input_tokens: 700, output_tokens: 150 }),
        call("read_file", { path: "b.ts" }, { input_tokens: 300, output_tokens: 50 }),
        ...Array.from({ length: 6 }, (_, i) => call("read_file", { path: `c${i}.ts` })),
      ];
      const { governor, reins, run } = await setup(script, { budget: { session: { tokens: 1_000 } } });

      const { error } = await run([read], stream);

      // The second response spent the budget: its call never ran, and the model was not called again.
      expect(fake!.mainRequests()).toHaveLength(2);
      expect(runs.count).toBe(1);
      expect(error).toBeInstanceOf(ReinsStopped);
      const stop = reinsStopOf(error);
      expect(stop).toBe((error as ReinsStopped).stop);
      expect(stop!.reason).toMatch(/^reins: The session has used 120% of its token budget .*Work is paused/);
      expect(reins.stopped).toBe(stop);
      // At 85% the model was warned, after the first call's output.
      expect(outputsSeen(1)[0]).toMatch(
        /^contents of a\.ts\n\nreins: The session has used 85% of its token budget/,
      );
      const state = await governor.store.state(`session:${SESSION}`);
      expect(scopeSummary(state!, governor.policy).status).toBe("paused");
    });
  }

  for (const stream of [false, true]) {
    it(`records each model response's usage once, exactly as the API reported it (${stream ? "streamed" : "not streamed"})`, async () => {
      const { read } = readFile();
      const usages = [
        { input_tokens: 1_200, output_tokens: 80, cached_tokens: 1_000 },
        { input_tokens: 1_500, output_tokens: 60, cached_tokens: 1_100 },
        { input_tokens: 1_700, output_tokens: 40 },
      ];
      const { governor, run } = await setup([
        call("read_file", { path: "a.ts" }, usages[0]),
        call("read_file", { path: "b.ts" }, usages[1]),
        { text: "Done.", usage: usages[2]! },
      ]);

      const { output, error, usage } = await run([read], stream);

      expect(error).toBeUndefined();
      expect(output).toBe("Done.");
      expect(fake!.mainRequests().map((r) => r.body?.stream === true)).toEqual(usages.map(() => stream));
      const sum = (f: (u: (typeof usages)[number]) => number) => usages.reduce((n, u) => n + f(u), 0);
      const cached = sum((u) => u.cached_tokens ?? 0);
      const state = await governor.store.state(`session:${SESSION}`);
      // OpenAI counts cached tokens in the input; reins counts them apart, as cache reads.
      expect(state!.tally!.tokens).toEqual({
        input: sum((u) => u.input_tokens) - cached,
        output: sum((u) => u.output_tokens),
        cacheRead: cached,
        cacheWrite: 0,
      });
      // The budget counts input and output (cache reads are not counted by default).
      expect(state!.budget.session.spent.tokens).toBe(
        sum((u) => u.input_tokens - (u.cached_tokens ?? 0) + u.output_tokens),
      );
      // One event per model call, priced by the table for the model the API named; the SDK's own count agrees.
      const recorded = (await governor.store.events(`session:${SESSION}`)).filter(
        (r) => r.event.kind === "usage.recorded",
      );
      expect(recorded.map((r) => r.event)).toMatchObject(
        usages.map(() => ({ model: MODEL, pricing: "table" })),
      );
      expect(usage).toMatchObject({
        requests: usages.length,
        inputTokens: sum((u) => u.input_tokens),
        outputTokens: sum((u) => u.output_tokens),
      });
    });
  }

  it("runs the example as it is written: its budget stop reaches the example's catch", async () => {
    fake = await startFakeOpenAi([
      call("read_file", { path: "package.json" }, { input_tokens: 150_000, output_tokens: 10_000 }),
      call("read_file", { path: "tsconfig.json" }, { input_tokens: 60_000, output_tokens: 1_000 }),
      { text: "The login test expects the old error message." },
    ]);
    // The example's provider is the SDK's default one, which the OpenAI client points here from the environment.
    vi.stubEnv("OPENAI_BASE_URL", fake.url);
    vi.stubEnv("OPENAI_API_KEY", "sk-test");
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});

    await import("../../../examples/openai-agents.js");

    expect(fake.mainRequests()).toHaveLength(2);
    expect(fake.mainRequests()[1]!.body?.tools?.map((t) => t.name)).toEqual(["read_file"]);
    expect(errors).toHaveBeenCalledWith(
      expect.stringMatching(/^reins stopped the run: reins: The session has used 110% of its token budget/),
    );
  });
});
