import { appendFileSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteStore } from "../../base/store/sqlite.js";
import { qwenOutcome, qwenInput } from "./qwen.js";
import { runHook, type HookResult } from "./hook-call.js";

/**
 * The Qwen Code adapter against the hook inputs Qwen Code 0.15.10 sent headless (`qwen -p --yolo`, seen on
 * this machine): `session_id`, `transcript_path`, `cwd`, `hook_event_name`, `timestamp`; PreToolUse and
 * PostToolUse add `permission_mode`, `tool_name`, `tool_input`, `tool_use_id` (and `tool_response` `{
 * llmContent, returnDisplay }`); UserPromptSubmit `prompt`; Stop `stop_hook_active` (always true) and
 * `last_assistant_message`. Each call goes through `runHook` as `reins hook qwen` does.
 */

let project: string;
let transcript: string;
let session: string;
let calls = 0;

beforeEach(() => {
  project = realpathSync(mkdtempSync(join(tmpdir(), "reins-qwen-")));
  writeFileSync(join(project, "package.json"), JSON.stringify({ scripts: { test: "node test.js" } }));
  writeFileSync(join(project, "reins.config.json"), "{}");
  session = `5e55a1d0-0000-4000-8000-${String(++calls).padStart(12, "0")}`;
  transcript = join(project, `${session}.jsonl`);
  writeFileSync(transcript, "");
});

afterEach(() => {
  rmSync(project, { recursive: true, force: true });
});

const base = (event: string) => ({
  session_id: session,
  transcript_path: transcript,
  cwd: project,
  hook_event_name: event,
  timestamp: new Date().toISOString(),
});
const prompt = (text: string) => ({ ...base("UserPromptSubmit"), prompt: text });
const pre = (command: string) => ({
  ...base("PreToolUse"),
  permission_mode: "yolo",
  tool_name: "run_shell_command",
  tool_input: { command, description: "run it", is_background: false },
  tool_use_id: `toolu_${++calls}`,
});
const post = (command: string, output: string, exitCode: number) => ({
  ...pre(command),
  hook_event_name: "PostToolUse",
  tool_response: {
    llmContent: `Command: ${command}\nDirectory: (root)\nOutput: ${output}\nError: (none)\nExit Code: ${exitCode}\nSignal: 0\nProcess Group PGID: ${1000 + calls}`,
    returnDisplay: output,
  },
});
const stop = (message = "Done.") => ({
  ...base("Stop"),
  stop_hook_active: true,
  last_assistant_message: message,
});
/** One model reply line of Qwen Code's transcript. */
function modelLine(uuid: string, prompt: number, output: number, cached = 0): void {
  const line = {
    uuid,
    sessionId: session,
    type: "assistant",
    model: "gpt-4.1",
    message: { role: "model", parts: [{ text: "ok" }] },
    usageMetadata: {
      promptTokenCount: prompt,
      candidatesTokenCount: output,
      thoughtsTokenCount: 0,
      totalTokenCount: prompt + output,
      cachedContentTokenCount: cached,
    },
  };
  appendFileSync(transcript, `${JSON.stringify(line)}\n`);
}

async function hook(input: unknown): Promise<HookResult> {
  return runHook("qwen", Buffer.from(JSON.stringify(input)), {}, project);
}

async function reply(input: unknown): Promise<object | null> {
  const result = await hook(input);
  expect(result.warning).toBe("");
  return result.reply;
}

async function recorded() {
  const store = new SqliteStore(join(project, ".reins", "reins.db"));
  try {
    return { state: await store.state(`session:${session}`), log: await store.events(`session:${session}`) };
  } finally {
    await store.close();
  }
}

describe("the Qwen Code hook adapter", () => {
  it("opens the session at the first prompt (headless Qwen fires no SessionStart) and tells the status there", async () => {
    const first = (await reply(prompt("Fix the slug helper."))) as {
      hookSpecificOutput: { additionalContext: string };
    };
    expect(first.hookSpecificOutput.additionalContext).toMatch(/^reins: /);
    expect(first.hookSpecificOutput.additionalContext).toContain("not contained");
    // The empty prompt before each model call after a tool round says nothing.
    expect(await reply(prompt(""))).toBeNull();
    const { log } = await recorded();
    expect(log.map((r) => r.event.kind)).toEqual(["session.started"]);
    expect(log[0]?.event).toMatchObject({ agent: "qwen" });
  });

  it("reads a command's exit code from its result, `Signal: 0` being no signal", () => {
    const failed = qwenOutcome(qwenInput.parse(post("ls /nope", "ls: cannot access '/nope'", 2)));
    expect(failed).toMatchObject({ failed: true, exitCode: 2 });
    const passed = qwenOutcome(qwenInput.parse(post("npm test", "Tests: 1 passed", 0)));
    expect(passed).toMatchObject({ failed: false, exitCode: 0 });
    expect(passed.text).not.toContain("Signal");
  });

  it("denies a repeated failing command in Claude Code's form, with the corrective reason", async () => {
    await reply(prompt("Go."));
    const denied = (a: object | null) => JSON.stringify(a).includes('"permissionDecision":"deny"');
    let answer: object | null = null;
    let call = 0;
    while (call < 8 && !denied(answer)) {
      call += 1;
      answer = await reply(pre("ls /nope"));
      if (!denied(answer)) await reply(post("ls /nope", "ls: cannot access '/nope': No such file", 2));
    }
    expect(call).toBe(5); // the 5th identical failing call, as for Claude Code and Gemini CLI
    expect(answer).toMatchObject({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" },
    });
    const reason = (answer as { hookSpecificOutput: { permissionDecisionReason: string } }).hookSpecificOutput
      .permissionDecisionReason;
    expect(reason).toMatch(/^reins: .*ls \/nope/);
  });

  it("blocks a Stop until the checks ran, then lets it stop", async () => {
    await reply(prompt("Add a slug helper."));
    const write = {
      ...base("PreToolUse"),
      tool_name: "write_file",
      tool_input: { file_path: join(project, "slug.js"), content: "export const slug = (s) => s;\n" },
      tool_use_id: "toolu_w",
    };
    await reply(write);
    await reply({
      ...write,
      hook_event_name: "PostToolUse",
      tool_response: { llmContent: "ok", returnDisplay: "" },
    });
    modelLine("u-done", 900, 10);
    const refused = await reply(stop());
    expect(refused).toMatchObject({ decision: "block" });
    expect((refused as { reason: string }).reason).toMatch(/npm test/);
    await reply(pre("npm test"));
    await reply(post("npm test", "Tests: 1 passed", 0));
    modelLine("u-pass", 950, 12);
    expect(await reply(stop("Done, the tests pass."))).toBeNull();
  });

  it("counts the transcript's usage once, whichever hook reads it first", async () => {
    modelLine("u-1", 1_000, 40, 200);
    await reply(prompt("Go."));
    modelLine("u-2", 1_100, 30);
    await reply(pre("ls"));
    await reply(post("ls", "a b", 0));
    await reply(prompt(""));
    modelLine("u-3", 1_200, 20);
    await reply(stop());
    const { log, state } = await recorded();
    const usage = log.flatMap((r) => (r.event.kind === "usage.recorded" ? [r.event] : []));
    expect(usage.map((e) => [e.inputTokens, e.outputTokens, e.cacheReadTokens])).toEqual([
      [800, 40, 200],
      [1_100, 30, 0],
      [1_200, 20, 0],
    ]);
    // The budget counts what was not read from the cache; the cached 200 are recorded beside it.
    expect(state?.budget.session.spent.tokens).toBe(840 + 1_130 + 1_220);
  });

  it("waits at Stop for the reply's line Qwen Code is still writing (its transcript writes are queued)", async () => {
    modelLine("u-1", 1_000, 40);
    await reply(prompt("Go."));
    // Qwen Code 0.15.10 queues the reply's line and fires Stop at once: under load the hook comes first.
    const late = setTimeout(() => modelLine("u-2", 1_300, 25), 150);
    try {
      await reply(stop("The tests pass."));
    } finally {
      clearTimeout(late);
    }
    const { log, state } = await recorded();
    const usage = log.flatMap((r) => (r.event.kind === "usage.recorded" ? [r.event] : []));
    expect(usage.map((e) => [e.inputTokens, e.outputTokens])).toEqual([
      [1_000, 40],
      [1_300, 25],
    ]);
    expect(state?.budget.session.spent.tokens).toBe(1_040 + 1_325);
  });

  it("does not wait at a Stop with no reply text, nor past its bound when the line never comes", async () => {
    await reply(prompt("Go."));
    // No reply text: no line is owed (Qwen Code records a reply only with content or usage).
    expect(await reply(stop(""))).toMatchObject({ decision: "block" });
    // A reply text but no line ever: the Stop is still answered (after the bound), the claim recorded.
    expect(await reply(stop("Done."))).toMatchObject({ decision: "block" });
    const { log } = await recorded();
    expect(log.filter((r) => r.event.kind === "completion.claimed")).toHaveLength(2);
    expect(log.some((r) => r.event.kind === "usage.recorded")).toBe(false);
  });
});
