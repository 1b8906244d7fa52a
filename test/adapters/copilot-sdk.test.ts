import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { approveAll, CopilotClient } from "@github/copilot-sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { copilotReins, ReinsStopped } from "../../src/guard/adapters/copilot-sdk.js";
import { resolvePolicy, type Policy } from "../../src/base/core/index.js";
import { createGovernor, type Governor } from "../../src/guard/governor.js";
import {
  lastToolResults,
  startFakeChatTools,
  textOf,
  toolCall,
  type ChatToolsRequest,
  type FakeChatTools,
} from "#test/fake-chat-tools.js";
import type { ScriptedReply, ScriptedUsage } from "#test/fake-openai.js";
import type { ModelScript } from "#test/fake-model.js";
import { cleanEnv } from "#test/processes.js";

/**
 * The real GitHub Copilot SDK (pinned: 1.0.14, which starts the Copilot CLI it bundles) driven offline
 * against a scripted Chat Completions API on 127.0.0.1, governed by reins. The CLI gets its own HOME and
 * COPILOT_HOME. Assertions are on what reached the model (the fake's requests), what the tools did (a file
 * each run appends to), what the caller saw, and what the governor's store holds.
 */

let root: string;
let fake: FakeChatTools | undefined;
let client: CopilotClient | undefined;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "reins-copilot-sdk-"));
  mkdirSync(join(root, "home"));
  writeFileSync(
    join(root, "fail.cjs"),
    "require('fs').appendFileSync('calls.txt', 'x\\n'); console.error('boom: the fixture always fails'); process.exit(1);\n",
  );
  writeFileSync(join(root, "count.cjs"), "require('fs').appendFileSync('calls.txt', 'x\\n');\n");
});

afterEach(async () => {
  await client?.stop().catch(() => undefined);
  client = undefined;
  await fake?.close();
  fake = undefined;
  rmSync(root, { recursive: true, force: true });
});

const runs = () =>
  (existsSync(join(root, "calls.txt")) ? readFileSync(join(root, "calls.txt"), "utf8") : "")
    .split("\n")
    .filter((l) => l !== "").length;

const bash = (command: string, usage?: ScriptedUsage) =>
  toolCall("bash", { command, description: "run it" }, usage);

interface Driven {
  governor: Governor;
  error: unknown;
  main: ChatToolsRequest[];
  scope: string;
}

/** One governed turn against the scripted model, bounded by a 40 s timeout of the SDK's own. */
async function drive(script: ModelScript<ChatToolsRequest, ScriptedReply>, policy: Policy): Promise<Driven> {
  fake = await startFakeChatTools(script, { alwaysUsage: true });
  const governor = createGovernor({ policy, onWarning: () => {} });
  const reins = copilotReins({ governor });
  const home = join(root, "home");
  client = new CopilotClient({
    useLoggedInUser: false,
    cwd: root,
    env: cleanEnv(home, { COPILOT_OFFLINE: "true", COPILOT_HOME: join(home, ".copilot") }),
  } as ConstructorParameters<typeof CopilotClient>[0]);
  const session = await client.createSession(
    reins.config({
      model: "gpt-4.1",
      provider: { type: "openai", baseUrl: fake.url, apiKey: "test" },
      onPermissionRequest: approveAll,
      workingDirectory: root,
    }),
  );
  let error: unknown;
  try {
    await reins.sendAndWait(session, "Do the task.", 40_000);
  } catch (e) {
    error = e;
  }
  await session.disconnect().catch(() => undefined);
  expect(fake.errors).toEqual([]);
  return { governor, error, main: fake.mainRequests(), scope: `session:${session.sessionId}` };
}

const stopped = (error: unknown): ReinsStopped => {
  expect(ReinsStopped.is(error), String(error)).toBe(true);
  return error as ReinsStopped;
};

describe("reins/copilot-sdk with the real Copilot SDK", () => {
  it("denies a repeated failing bash call: it does not run again, the model reads why, and the turn ends", async () => {
    const policy = resolvePolicy({ circuit: { duplicateThreshold: 3 } });
    const script = (_r: ChatToolsRequest, turn: number) =>
      turn < 6 ? bash("node fail.cjs") : { text: "I am stuck; stopping." };
    const { governor, error, main } = await drive(script, policy);

    expect(runs()).toBe(2);
    expect(lastToolResults(main[1]!)[0]?.text).toContain("boom: the fixture always fails");
    const denial = lastToolResults(main[3]!)[0];
    expect(denial?.text).toMatch(/reins: The same bash call `node fail\.cjs` was made 3 times in a row/);
    const stop = stopped(error);
    expect(stop.decision).toMatchObject({ verdict: "block", needsHuman: true });
    const state = await governor.store.state(stop.scope);
    expect(state?.breaker).toMatchObject({ status: "open", reason: "duplicate_calls" });
    expect(main.length).toBeLessThanOrEqual(5);
  }, 60_000);

  it("ends the turn when the scripted usage spends the token budget, and says it was reins", async () => {
    const policy = resolvePolicy({ budget: { session: { tokens: 1_200 } } });
    const script = (_r: ChatToolsRequest, turn: number) =>
      turn < 10 ? bash("node count.cjs", { input_tokens: 400, output_tokens: 100 }) : { text: "Done." };
    const { governor, error, main } = await drive(script, policy);

    const stop = stopped(error);
    expect(stop.decision).toMatchObject({ verdict: "block", needsHuman: true });
    expect(main.length).toBeGreaterThanOrEqual(3);
    expect(main.length).toBeLessThanOrEqual(4);
    expect(runs()).toBeLessThanOrEqual(3);
    const state = await governor.store.state(stop.scope);
    expect(state?.budget.session.paused).toBe("tokens");
  }, 60_000);

  it("counts every model call's usage exactly once, and keeps the agent going when it claims done too early", async () => {
    writeFileSync(join(root, "package.json"), JSON.stringify({ scripts: { test: "node count.cjs" } }));
    const policy = resolvePolicy({});
    const script: ScriptedReply[] = [
      toolCall(
        "create",
        { path: join(root, "slug.js"), file_text: "export const slug = (s) => s.toLowerCase();\n" },
        { input_tokens: 1_000, output_tokens: 40 },
      ),
      { text: "Done.", usage: { input_tokens: 1_100, output_tokens: 12 } },
      bash("npm test", { input_tokens: 1_200, output_tokens: 30, cached_tokens: 300 }),
      { text: "The tests pass.", usage: { input_tokens: 1_300, output_tokens: 25 } },
    ];
    const { governor, error, main, scope } = await drive(script, policy);
    expect(error).toBeUndefined();

    // The first "done" was refused: its reason came to the model as the next user message.
    const refusal = main[2]!.body!.messages.filter((m) => m.role === "user").at(-1);
    expect(textOf(refusal?.content)).toMatch(/reins: Not done yet: tests has not run/);
    const log = await governor.store.events(scope);
    const usage = log.flatMap((r) => (r.event.kind === "usage.recorded" ? [r.event] : []));
    // The API's prompt tokens include the cached ones: reins counts them apart.
    expect(usage.map((e) => [e.inputTokens, e.outputTokens, e.cacheReadTokens])).toEqual(
      fake!.usageSent.map((u) => {
        const cached = u.prompt_tokens_details.cached_tokens;
        return [u.prompt_tokens - cached, u.completion_tokens, cached];
      }),
    );
    expect(usage).toHaveLength(4);
    const total = fake!.usageSent.reduce(
      (n, u) => n + u.total_tokens - u.prompt_tokens_details.cached_tokens,
      0,
    );
    expect((await governor.store.state(scope))?.budget.session.spent.tokens).toBe(total);
    const claims = log.filter((r) => r.event.kind === "completion.claimed").map((r) => r.decision.verdict);
    expect(claims).toEqual(["block", "allow"]);
  }, 60_000);
});
