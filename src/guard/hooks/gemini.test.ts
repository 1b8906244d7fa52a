import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteStore } from "../../base/store/sqlite.js";
import { geminiOutcome } from "./gemini.js";
import { runHook, type HookResult } from "./hook-call.js";

/**
 * The Gemini CLI adapter against Gemini CLI's documented hook payloads (docs/hooks/reference.md and
 * packages/core/src/hooks/types.ts): every input has `session_id`, `transcript_path`, `cwd`,
 * `hook_event_name` and `timestamp`; BeforeTool/AfterTool add `tool_name`, `tool_input` and (after)
 * `tool_response` `{ llmContent, returnDisplay, error? }`; BeforeAgent `prompt`; AfterAgent `prompt`,
 * `prompt_response`, `stop_hook_active`; AfterModel `llm_request` and `llm_response` (with `usageMetadata`).
 * Each call goes through `runHook` like `reins hook gemini` does, with the project's default SQLite store.
 */

let project: string;
let session: string;
let calls = 0;
let pgid = 4000;

beforeEach(() => {
  project = realpathSync(mkdtempSync(join(tmpdir(), "reins-gemini-")));
  // An npm project: reins suggests its own test command.
  writeFileSync(join(project, "package.json"), JSON.stringify({ scripts: { test: "node test.js" } }));
  session = `a1b2c3d4-0000-4000-8000-${String(++calls).padStart(12, "0")}`;
  policy({});
});

afterEach(() => {
  rmSync(project, { recursive: true, force: true });
});

function policy(value: object): void {
  writeFileSync(join(project, "reins.config.json"), JSON.stringify(value));
}

function base(event: string) {
  return {
    session_id: session,
    transcript_path: `/home/dev/.gemini/tmp/3f2a/chats/session-${session}.json`,
    cwd: project,
    hook_event_name: event,
    timestamp: new Date().toISOString(),
  };
}

const shell = (command: string) => ({
  ...base("BeforeTool"),
  tool_name: "run_shell_command",
  tool_input: { command, description: "run it" },
});
/** run_shell_command's result: the output, `Exit Code` when not 0, and a process group id new on every run. */
const shellDone = (command: string, output: string, exitCode = 0) => {
  const text = [
    `Output: ${output}`,
    ...(exitCode !== 0 ? [`Exit Code: ${exitCode}`] : []),
    `Process Group PGID: ${++pgid}`,
  ];
  return {
    ...base("AfterTool"),
    tool_name: "run_shell_command",
    tool_input: { command, description: "run it" },
    tool_response: { llmContent: text.join("\n"), returnDisplay: output },
  };
};
const writeFile = (event: "BeforeTool" | "AfterTool", file: string) => ({
  ...base(event),
  tool_name: "write_file",
  tool_input: { file_path: join(project, file), content: "export const slug = (s) => s.toLowerCase();\n" },
  ...(event === "AfterTool"
    ? {
        tool_response: {
          llmContent: `Successfully created and wrote to new file: ${join(project, file)}.`,
          returnDisplay: "",
        },
      }
    : {}),
});
const afterAgent = (active = false, response = "Done.") => ({
  ...base("AfterAgent"),
  prompt: "Add a slug helper.",
  prompt_response: response,
  stop_hook_active: active,
});
/** An AfterModel call: the request (the history so far) and a response chunk with its usage. */
const afterModel = (
  history: string,
  usage: Record<string, number>,
  finishReason: string | null = "STOP",
) => ({
  ...base("AfterModel"),
  llm_request: {
    model: "gemini-2.5-pro",
    messages: [{ role: "user", content: history }],
    config: { temperature: 1 },
  },
  llm_response: {
    text: "ok",
    candidates: [
      {
        content: { role: "model", parts: ["ok"] },
        ...(finishReason !== null ? { finishReason } : {}),
        index: 0,
      },
    ],
    usageMetadata: usage,
  },
});

function hook(input: unknown): Promise<HookResult> {
  const raw = typeof input === "string" ? input : JSON.stringify(input);
  return runHook("gemini", Buffer.from(raw), {}, project);
}

async function reply(input: unknown): Promise<object | null> {
  const result = await hook(input);
  expect(result.warning).toBe("");
  return result.reply;
}

async function stateOf() {
  const store = new SqliteStore(join(project, ".reins", "reins.db"));
  try {
    return { state: await store.state(`session:${session}`), log: await store.events(`session:${session}`) };
  } finally {
    await store.close();
  }
}

const context = (hookEventName: string, additionalContext: string) => ({
  hookSpecificOutput: { hookEventName, additionalContext },
});

describe("the Gemini CLI adapter", () => {
  it("denies the 5th identical failing shell call with the corrective reason", async () => {
    const repeated = (times: string) => ({
      systemMessage: `reins: \`node migrate.js\` gave the same result ${times} with nothing changed in between; running it again will not help. Change something first.`,
    });
    // Warnings before a tool runs go to the person (BeforeTool has no context for the model); after it ran,
    // to the model.
    const failedAgain = (n: number) =>
      context(
        "AfterTool",
        `reins: The same error came back ${n} times in a row (last from run_shell_command). Retrying will not change it: read the error, find its cause, and fix that.`,
      );
    const replies: [object | null, object | null][] = [
      [null, null],
      [null, null],
      [repeated("twice"), failedAgain(3)],
      [repeated("3 times"), failedAgain(4)],
    ];
    for (const [before, after] of replies) {
      expect(await reply(shell("node migrate.js"))).toEqual(before);
      expect(
        await reply(shellDone("node migrate.js", "Error: connect ECONNREFUSED 127.0.0.1:5432", 1)),
      ).toEqual(after);
    }
    expect(await reply(shell("node migrate.js"))).toEqual({
      decision: "deny",
      reason:
        "reins: The same run_shell_command call `node migrate.js` was made 5 times in a row, failing the same way each time. The circuit breaker is now open: stop, explain what you were trying and why it is not working. A person must acknowledge before work goes on.",
    });
    const { state, log } = await stateOf();
    expect(state?.breaker).toMatchObject({ status: "open", reason: "duplicate_calls" });
    expect(log.find((r) => r.event.kind === "tool.completed")?.event).toMatchObject({
      outcome: "failure",
      exitCode: 1,
      command: "node migrate.js",
    });
  });

  it("refuses to stop after an edit without tests (keep going), and lets it stop once they pass", async () => {
    expect(await reply(writeFile("BeforeTool", "slug.js"))).toBeNull();
    expect(await reply(writeFile("AfterTool", "slug.js"))).toBeNull();
    expect(await reply(afterAgent())).toEqual({
      decision: "deny",
      reason:
        "reins: Not done yet: tests has not run (run `npm test`). Claim completion again once it passes.",
    });

    expect(await reply(shell("npm test"))).toBeNull();
    expect(await reply(shellDone("npm test", "1 failed", 1))).toBeNull();
    expect(await reply(afterAgent(true))).toEqual({
      decision: "deny",
      reason:
        "reins: Not done yet: tests is failing (run `npm test` and fix it). Claim completion again once it passes.",
    });

    expect(await reply(shell("npm test"))).toBeNull();
    expect(await reply(shellDone("npm test", "1 passed"))).toBeNull();
    expect(await reply(afterAgent(true, "Added slug.js; the tests pass."))).toBeNull();

    const { log } = await stateOf();
    expect(log.filter((r) => r.event.kind === "completion.claimed").map((r) => r.decision.verdict)).toEqual([
      "block",
      "block",
      "allow",
    ]);
    expect(log.find((r) => r.event.kind === "tool.completed")?.event).toMatchObject({
      tool: "write_file",
      writes: [join(project, "slug.js")],
      linesChanged: 2,
    });
  });

  it("counts every model call, even when its request looks the same as the last (tool calls between text turns)", async () => {
    // Gemini CLI's AfterModel input keeps only the text parts of the history, so the calls between two text
    // turns all carry the same llm_request; only the time (and the usage) tell them apart.
    const usage = { promptTokenCount: 1_000, candidatesTokenCount: 40, totalTokenCount: 1_040 };
    const calls = [0, 1, 2, 3].map((i) => ({
      ...afterModel("Fix the build.", usage),
      timestamp: new Date(Date.UTC(2026, 0, 5, 9, 0, i)).toISOString(),
    }));
    for (const call of calls) await reply(call);
    await reply(calls[2]); // the same call delivered again counts once
    const { state } = await stateOf();
    expect(state?.budget.session.spent.tokens).toBe(4 * 1_040);
  });

  it("records AfterModel usage once, even when the same event comes twice, and pauses at the limit", async () => {
    policy({ budget: { session: { tokens: 1_000 } } });
    const first = afterModel("Add a slug helper.", {
      promptTokenCount: 900,
      candidatesTokenCount: 50,
      totalTokenCount: 950,
    });
    // A streamed chunk before the last one carries partial usage: it is not counted.
    expect(
      await reply(afterModel("Add a slug helper.", { promptTokenCount: 900, candidatesTokenCount: 3 }, null)),
    ).toBeNull();
    expect(await reply(first)).toEqual({
      systemMessage:
        "reins: The session has used 95% of its token budget (950 tokens of 1,000 tokens). A person must confirm before work goes on.",
    });
    expect(await reply(first)).toBeNull();

    const recorded = await stateOf();
    expect(recorded.state?.budget.session.spent.tokens).toBe(950);
    expect(recorded.log.filter((r) => r.event.kind === "usage.recorded").map((r) => r.event)).toEqual([
      expect.objectContaining({
        inputTokens: 900,
        outputTokens: 50,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        costUsd: (900 * 1.25 + 50 * 10) / 1e6,
        model: "gemini-2.5-pro",
        id: expect.stringMatching(/^usage:[0-9a-f]{16}$/),
      }),
    ]);

    // The next model call (a longer history) crosses the limit; thinking tokens count through the total.
    expect(
      await reply(
        afterModel("Add a slug helper.\nok", {
          promptTokenCount: 40,
          candidatesTokenCount: 5,
          totalTokenCount: 60,
        }),
      ),
    ).toEqual({
      systemMessage: `reins: The session has used 101% of its token budget (1,010 tokens of 1,000 tokens). Work is paused until a person extends it with \`reins budget extend session:${session} <amount> --reason "..."\`.`,
    });
    expect((await stateOf()).state?.budget.session.spent.tokens).toBe(1_010);
    // A paused budget needs a person; BeforeTool has no "ask", so the call is denied with the reason.
    expect(await reply(shell("ls"))).toEqual({
      decision: "deny",
      reason: `reins: The session budget is paused: 1,010 tokens used of 1,000 tokens. Stop and wait until a person extends it with \`reins budget extend session:${session} <amount> --reason "..."\`.`,
    });
  });

  it("denies a call a person must confirm, since BeforeTool has no ask", async () => {
    policy({ budget: { session: { toolCalls: 10 } } });
    const commands = ["ls", "pwd", "git status", "node --version", "cat README.md", "whoami", "uname", "env"];
    for (const command of commands) await reply(shell(command));
    expect(await reply(shell("git log"))).toEqual({
      decision: "deny",
      reason:
        "reins: The session has used 90% of its tool call budget (9 tool calls of 10 tool calls). A person must confirm before work goes on.",
    });
  });

  it("gives a healthy session status context and never a blocking reply", async () => {
    // After the status, what reins says of its own guarding: reins sets no sandbox for this agent.
    const line = [
      "reins: session budget 0 of 500,000 tokens used (0%); circuit breaker closed.",
      "reins: not contained: reins cannot keep this agent from switching it off (Gemini CLI's sandbox needs a container engine reins does not set up); to contain it, drive it with `reins run`, which boxes each iteration.",
    ].join("\n");
    expect(await reply({ ...base("SessionStart"), source: "startup" })).toEqual(
      context("SessionStart", line),
    );
    expect(await reply({ ...base("BeforeAgent"), prompt: "Add a slug helper." })).toEqual(
      context("BeforeAgent", line),
    );
    expect(
      await reply(
        afterModel("Add a slug helper.", {
          promptTokenCount: 120,
          candidatesTokenCount: 8,
          totalTokenCount: 128,
        }),
      ),
    ).toBeNull();
    expect(
      await reply({
        ...base("BeforeTool"),
        tool_name: "read_file",
        tool_input: { file_path: join(project, "package.json") },
      }),
    ).toBeNull();
    expect(
      await reply({
        ...base("AfterTool"),
        tool_name: "read_file",
        tool_input: { file_path: join(project, "package.json") },
        tool_response: { llmContent: "{}", returnDisplay: "" },
      }),
    ).toBeNull();
    expect(await reply(writeFile("BeforeTool", "slug.js"))).toBeNull();
    expect(await reply(writeFile("AfterTool", "slug.js"))).toBeNull();
    expect(await reply(shell("npm test"))).toBeNull();
    expect(await reply(shellDone("npm test", "1 passed"))).toBeNull();
    expect(await reply(afterAgent(false, "Added slug.js; the tests pass."))).toBeNull();
    expect(await reply({ ...base("SessionEnd"), reason: "exit" })).toBeNull();

    const { log } = await stateOf();
    expect(log.filter((r) => r.decision.verdict !== "allow")).toEqual([]);
    expect(log.map((r) => r.event.kind)).toEqual([
      "session.started",
      "usage.recorded",
      "tool.requested",
      "tool.completed",
      "tool.requested",
      "tool.completed",
      "tool.requested",
      "tool.completed",
      "verification.ran",
      "completion.claimed",
      "session.ended",
    ]);
    expect(log[0]?.event).toMatchObject({ agent: "gemini" });
  });

  it("allows bad input with one line on stderr", async () => {
    const cases: [unknown, RegExp][] = [
      ["not json", /^reins hook gemini: input is not JSON; allowed without guarding$/],
      [{ ...shell("ls"), session_id: "" }, /^reins hook gemini: input is missing or has a bad session_id /],
      [
        { ...base("Notification"), notification_type: "ToolPermission" },
        /^reins hook gemini: input is missing or has a bad hook_event_name /,
      ],
    ];
    for (const [input, warning] of cases) {
      const result = await hook(input);
      expect(result.reply).toBeNull();
      expect(result.warning).toMatch(warning);
      expect(result.warning).not.toContain("\n");
    }
  });
});

describe("geminiOutcome", () => {
  it("reads run_shell_command's exit code, signal and errors, ignoring the process ids", () => {
    expect(geminiOutcome({ llmContent: "Output: ok\nProcess Group PGID: 1", returnDisplay: "ok" })).toEqual({
      failed: false,
      exitCode: 0,
      text: "Output: ok\n",
      output: { content: "Output: ok\n", error: "" },
    });
    expect(geminiOutcome({ llmContent: "Output: ok\nProcess Group PGID: 2" }).output).toEqual(
      geminiOutcome({ llmContent: "Output: ok\nProcess Group PGID: 1" }).output,
    );
    // Older versions print every field.
    expect(
      geminiOutcome({ llmContent: "Command: ls\nStdout: a\nError: (none)\nExit Code: 0\nSignal: (none)" }),
    ).toMatchObject({
      failed: false,
      exitCode: 0,
    });
    expect(geminiOutcome({ llmContent: "Output: (empty)\nSignal: 9" })).toMatchObject({ failed: true });
    expect(
      geminiOutcome({ llmContent: "Command was cancelled by user before it could complete." }),
    ).toMatchObject({
      failed: true,
    });
    expect(
      geminiOutcome({ llmContent: "", error: { message: "File not found", type: "FILE_NOT_FOUND" } }),
    ).toMatchObject({
      failed: true,
      text: "File not found\n",
    });
  });
});
