import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  query,
  type CanUseTool,
  type SDKMessage,
  type SDKResultMessage,
} from "@anthropic-ai/claude-agent-sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { claudeAgentReins, ReinsStopped } from "../../src/guard/adapters/claude-agent-sdk.js";
import { resolvePolicy, type Policy, type PolicyInput } from "../../src/base/core/index.js";
import { createGovernor, type Governor } from "../../src/guard/governor.js";
import {
  lastToolResults,
  lastUserTexts,
  startFakeAnthropic,
  type FakeAnthropic,
  type RecordedRequest,
  type Script,
  type ScriptedReply,
  type ScriptedUsage,
} from "#test/fake-anthropic.js";
import { cleanEnv } from "#test/processes.js";

/**
 * The real Claude Agent SDK (pinned: 0.3.330, with the Claude Code 2.1.330 binary it bundles) driven offline
 * against a scripted Messages API on 127.0.0.1, governed by reins. Assertions are on what reached the model
 * (the fake's requests), what the tools did (a file each run appends to), what the caller saw, and what the
 * governor's store holds.
 */

let root: string;
let fake: FakeAnthropic | undefined;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "reins-claude-sdk-"));
  // `node fail.cjs` and `node count.cjs` each leave a line in calls.txt, so the test can count real runs.
  writeFileSync(
    join(root, "fail.cjs"),
    "require('fs').appendFileSync('calls.txt', 'x\\n'); console.error('boom: the fixture always fails'); process.exit(1);\n",
  );
  writeFileSync(join(root, "count.cjs"), "require('fs').appendFileSync('calls.txt', 'x\\n');\n");
  writeFileSync(join(root, "test.sh"), "echo '1 passed'\n");
});

afterEach(async () => {
  await fake?.close();
  fake = undefined;
  rmSync(root, { recursive: true, force: true });
});

const runs = () =>
  (existsSync(join(root, "calls.txt")) ? readFileSync(join(root, "calls.txt"), "utf8") : "")
    .split("\n")
    .filter((l) => l !== "").length;

const bash = (command: string, usage?: ScriptedUsage): ScriptedReply => ({
  toolUses: [{ name: "Bash", input: { command } }],
  ...(usage !== undefined ? { usage } : {}),
});

interface Driven {
  governor: Governor;
  messages: SDKMessage[];
  error: unknown;
  main: RecordedRequest[];
}

/** Runs one governed query against the scripted model, bounded by `maxTurns` and an abort after 25 s. */
async function drive(script: Script, policy: Policy, delegate?: CanUseTool): Promise<Driven> {
  fake = await startFakeAnthropic(script);
  const governor = createGovernor({ policy, onWarning: () => {} });
  const reins = claudeAgentReins({ governor, ...(delegate !== undefined ? { canUseTool: delegate } : {}) });
  const abortController = new AbortController();
  const bound = setTimeout(() => abortController.abort(), 25_000);
  const home = join(root, "home");
  const project = root;
  const q = query({
    prompt: "Do the task.",
    options: reins.options({
      cwd: project,
      // A throwaway HOME, no settings files, nothing of this process's environment but PATH and the like.
      env: cleanEnv(home, {
        ANTHROPIC_BASE_URL: fake.url,
        ANTHROPIC_API_KEY: "test",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      }),
      settingSources: [],
      permissionMode: "default",
      // The fixtures' commands run without asking (named: a bare "Bash" makes the SDK warn that canUseTool
      // is shadowed, though reins' asks still reach it).
      allowedTools: ["Bash(node fail.cjs)", "Bash(node count.cjs)", "Bash(sh test.sh)"],
      maxTurns: 8,
      abortController,
    }),
  });
  const messages: SDKMessage[] = [];
  let error: unknown;
  try {
    for await (const message of reins.governed(q)) messages.push(message);
  } catch (e) {
    error = e;
  } finally {
    clearTimeout(bound);
  }
  expect(abortController.signal.aborted).toBe(false);
  expect(fake.errors).toEqual([]);
  return { governor, messages, error, main: fake.mainRequests() };
}

const stopped = (error: unknown): ReinsStopped<SDKResultMessage> => {
  expect(ReinsStopped.is(error), String(error)).toBe(true);
  return error as ReinsStopped<SDKResultMessage>;
};

describe("reins/claude-agent-sdk with the real Claude Agent SDK", () => {
  it("denies a repeated failing Bash call: the tool does not run again, the model reads why, and the loop ends", async () => {
    const policy = resolvePolicy({ circuit: { duplicateThreshold: 3 } });
    const script: Script = (_request, turn) =>
      turn < 6 ? bash("node fail.cjs") : { text: "I am stuck; stopping." };
    const { governor, error, main } = await drive(script, policy);

    // Calls 1 and 2 ran and failed for real; the 3rd was denied before it ran, and the model read why.
    expect(runs()).toBe(2);
    expect(lastToolResults(main[1]!)[0]?.text).toContain("boom: the fixture always fails");
    expect(lastToolResults(main[2]!)[0]?.text).toContain("boom: the fixture always fails");
    const denial = lastToolResults(main[3]!)[0];
    expect(denial?.isError).toBe(true);
    expect(denial?.text).toMatch(
      /^PreToolUse:Bash hook error: reins: The same Bash call `node fail\.cjs` was made 3 times in a row/,
    );
    // The breaker needs a person: the model's next call is denied too and ends the loop, long before the
    // script runs out.
    expect(main).toHaveLength(4);
    const stop = stopped(error);
    expect(stop.message).toContain("The circuit breaker is");
    expect(stop.decision).toMatchObject({ verdict: "block", needsHuman: true });
    const state = await governor.store.state(stop.scope);
    expect(state?.breaker).toMatchObject({ status: "open", reason: "duplicate_calls" });
    const ended = (await governor.store.events(stop.scope)).filter((r) => r.event.kind === "tool.completed");
    expect(ended.map((r) => (r.event as { outcome?: string }).outcome)).toEqual(["failure", "failure"]);
  }, 30_000);

  it("ends the SDK's loop when the scripted usage spends the token budget, and says it was reins", async () => {
    const policy = resolvePolicy({ budget: { session: { tokens: 1_200 } } });
    // 500 tokens a call: the 3rd call spends 125% of the budget; the script would go on for 10.
    const script: Script = (_request, turn) =>
      turn < 10 ? bash("node count.cjs", { input_tokens: 400, output_tokens: 100 }) : { text: "Done." };
    const { governor, error, main } = await drive(script, policy);

    const stop = stopped(error);
    expect(stop.decision).toMatchObject({ verdict: "block", needsHuman: true });
    expect(stop.message).toMatch(/token budget|budget is paused/);
    expect(stop.result?.type).toBe("result");
    // Stopped at the 3rd call's usage: its tool may have started before the usage arrived, and one more
    // request may be on its way when the interrupt lands, but no more.
    expect(main.length).toBeGreaterThanOrEqual(3);
    expect(main.length).toBeLessThanOrEqual(4);
    expect(runs()).toBeLessThanOrEqual(3);
    const state = await governor.store.state(stop.scope);
    expect(state?.budget.session.paused).toBe("tokens");
  }, 30_000);

  it("records each model call's usage exactly once, as the model reported it", async () => {
    const usages: [ScriptedUsage, ScriptedUsage, ScriptedUsage] = [
      {
        input_tokens: 1_200,
        output_tokens: 80,
        cache_read_input_tokens: 300,
        cache_creation_input_tokens: 40,
      },
      {
        input_tokens: 1_500,
        output_tokens: 60,
        cache_read_input_tokens: 900,
        cache_creation_input_tokens: 0,
      },
      {
        input_tokens: 1_700,
        output_tokens: 25,
        cache_read_input_tokens: 1_100,
        cache_creation_input_tokens: 7,
      },
    ];
    const script: Script = [
      // Text and a tool call: two assistant messages of one model call, which must count once.
      {
        text: "Counting.",
        toolUses: [{ name: "Bash", input: { command: "node count.cjs" } }],
        usage: usages[0],
      },
      bash("node count.cjs", usages[1]),
      { text: "Done.", usage: usages[2] },
    ];
    // No checks required for "done": this test is about usage alone.
    const policy = resolvePolicy({ completion: { required: { session: [] } } });
    const { governor, error, messages, main } = await drive(script, policy);

    expect(error).toBeUndefined();
    expect(main).toHaveLength(3);
    const result = messages.find((m) => m.type === "result");
    expect(result).toMatchObject({ subtype: "success", result: "Done." });
    const scope = `session:${result!.session_id}`;
    // The SDK calls no SessionStart hook: the adapter records the session's start with its first prompt.
    const log = await governor.store.events(scope);
    expect(log.filter((r) => r.event.kind === "session.started").map((r) => r.event)).toEqual([
      expect.objectContaining({ kind: "session.started", agent: "claude-agent-sdk" }),
    ]);
    expect(log[0]?.event.kind).toBe("session.started");
    const recorded = (await governor.store.events(scope))
      .map((r) => r.event)
      .filter((e) => e.kind === "usage.recorded");
    expect(
      recorded.map((e) => [e.inputTokens, e.outputTokens, e.cacheReadTokens, e.cacheWriteTokens]),
    ).toEqual(
      usages.map((u) => [
        u.input_tokens,
        u.output_tokens,
        u.cache_read_input_tokens,
        u.cache_creation_input_tokens,
      ]),
    );
    const sum = (f: (u: ScriptedUsage) => number) => usages.reduce((n, u) => n + f(u), 0);
    const state = await governor.store.state(scope);
    expect(state?.budget.session.spent.tokens).toBe(
      sum(
        (u) =>
          u.input_tokens +
          u.output_tokens +
          (u.cache_creation_input_tokens ?? 0) +
          (policy.budget.countCacheReads ? (u.cache_read_input_tokens ?? 0) : 0),
      ),
    );
    // The SDK's own count of the main loop agrees.
    expect(result).toMatchObject({
      usage: { input_tokens: sum((u) => u.input_tokens), output_tokens: sum((u) => u.output_tokens) },
    });
  }, 30_000);

  it("keeps the agent going when it claims done before the tests ran, as the Claude Code hook does", async () => {
    const script: Script = [
      bash("node count.cjs"),
      { text: "Done." },
      bash("sh test.sh"),
      { text: "Done: the tests pass." },
    ];
    const { governor, error, messages, main } = await drive(script, resolvePolicy({}));

    expect(error).toBeUndefined();
    expect(main).toHaveLength(4);
    expect(lastUserTexts(main[2]!).join("\n")).toContain(
      "Stop hook feedback:\nreins: Not done yet: tests has not run",
    );
    const result = messages.find((m) => m.type === "result");
    expect(result).toMatchObject({ subtype: "success", result: "Done: the tests pass." });
    const claims = (await governor.store.events(`session:${result!.session_id}`))
      .filter((r) => r.event.kind === "completion.claimed")
      .map((r) => r.decision.verdict);
    expect(claims).toEqual(["block", "allow"]);
  }, 30_000);

  /**
   * A tool-call budget that warns at the 1st call (25%) and asks a person at the 2nd (50%); the script makes
   * two calls, then stops (no checks required for "done").
   */
  const askPolicy = (): Policy =>
    resolvePolicy({
      budget: { warnAt: 0.25, askAt: 0.5, session: { toolCalls: 4 } },
      completion: { required: { session: [] } },
    } satisfies PolicyInput);
  const twoCalls: Script = [bash("node count.cjs"), bash("node count.cjs"), { text: "Done." }];

  it("denies a call a person must confirm when the caller has no canUseTool to ask one", async () => {
    const { error, main } = await drive(twoCalls, askPolicy());

    expect(error).toBeUndefined();
    expect(main).toHaveLength(3);
    // The warning reached the model with the 1st call's result; the 2nd call never ran.
    expect(main[1]!.rawBody).toContain(
      "PreToolUse:Bash hook additional context: reins: The session has used 25% of its tool call budget",
    );
    expect(runs()).toBe(1);
    const denial = lastToolResults(main[2]!)[0];
    expect(denial?.isError).toBe(true);
    expect(denial?.text).toContain("reins: The session has used 50% of its tool call budget");
    expect(denial?.text).toContain("A person must confirm this call, and none was asked.");
  }, 30_000);

  it("asks the caller's canUseTool when a person must confirm, and does what it answers", async () => {
    const asked: string[] = [];
    const delegate: CanUseTool = (toolName, input, { toolUseID, decisionReason }) => {
      asked.push(`${toolName} ${toolUseID}: ${decisionReason ?? ""}`);
      return Promise.resolve({ behavior: "allow", updatedInput: input });
    };
    const { error, main } = await drive(twoCalls, askPolicy(), delegate);

    expect(error).toBeUndefined();
    // Asked once, for the 2nd call, with reins' reason.
    expect(asked).toEqual([
      "Bash toolu_fake_1_0: reins: The session has used 50% of its tool call budget (2 tool calls of 4 tool calls). A person must confirm before work goes on.",
    ]);
    expect(main).toHaveLength(3);
    expect(runs()).toBe(2);
    expect(lastToolResults(main[2]!)[0]?.isError).toBe(false);
  }, 30_000);
});
