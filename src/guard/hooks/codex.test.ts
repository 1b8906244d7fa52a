import { appendFileSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteStore } from "../../base/store/sqlite.js";
import { codexOutcome } from "./codex.js";
import { runHook, type HookResult } from "./hook-call.js";

/**
 * The Codex CLI adapter against Codex's documented hook payloads (the published input schemas in
 * `codex-rs/hooks/schema/generated/`: `session_id`, `turn_id`, `transcript_path` (nullable), `cwd`,
 * `hook_event_name`, `model`, `permission_mode`, and per event `tool_name` / `tool_input` / `tool_use_id` /
 * `tool_response`, `prompt`, `stop_hook_active` / `last_assistant_message`, `source`, `reason`). Each call
 * goes through `runHook` like `reins hook codex` does, with the project's default SQLite store.
 */

let project: string;
let session: string;
let rollout: string;
let calls = 0;

beforeEach(() => {
  project = realpathSync(mkdtempSync(join(tmpdir(), "reins-codex-")));
  writeFileSync(join(project, "reins.config.json"), "{}");
  // An npm project: reins suggests its own test command.
  writeFileSync(join(project, "package.json"), JSON.stringify({ scripts: { test: "node test.js" } }));
  session = `019d036d-c7fa-72d2-b6fd-${String(++calls).padStart(12, "0")}`;
  rollout = join(project, "rollout.jsonl");
  writeFileSync(
    rollout,
    `${JSON.stringify({ timestamp: "2026-01-05T09:00:00.000Z", type: "session_meta", payload: { id: session } })}\n`,
  );
});

afterEach(() => {
  rmSync(project, { recursive: true, force: true });
});

const TURN = "019d036d-c7fa-72d2-b6fd-78878bfe34e4";

/** The fields every turn-scoped Codex hook input carries. */
function base(event: string) {
  return {
    session_id: session,
    turn_id: TURN,
    transcript_path: rollout,
    cwd: project,
    hook_event_name: event,
    model: "gpt-5-codex",
    permission_mode: "default",
  };
}

/** What Codex writes to its rollout when a command ends: the exit code its hook input leaves out. */
function commandEnded(callId: string, exitCode: number): void {
  const item = {
    type: "CommandExecution",
    id: callId,
    status: exitCode === 0 ? "completed" : "failed",
    exit_code: exitCode,
  };
  appendFileSync(
    rollout,
    `${JSON.stringify({ timestamp: "2026-01-05T09:00:01.000Z", type: "event_msg", payload: { type: "item_completed", item } })}\n`,
  );
}

let toolUse = 0;
const pre = (tool: string, command: string) => ({
  ...base("PreToolUse"),
  tool_name: tool,
  tool_input: { command },
  tool_use_id: `call_${++toolUse}`,
});
// Codex's Bash `tool_response` is the command's output text (openai/codex unified_exec tests assert
// `tool_response: json!("three")`); apply_patch's is its result text.
const post = (tool: string, command: string, response: unknown, exitCode?: number) => {
  if (exitCode !== undefined) commandEnded(`call_${toolUse}`, exitCode);
  return postInput(tool, command, response);
};
const postInput = (tool: string, command: string, response: unknown) => ({
  ...base("PostToolUse"),
  tool_name: tool,
  tool_input: { command },
  tool_response: response,
  tool_use_id: `call_${toolUse}`,
});
const stop = (active = false, message: string | null = "Done.") => ({
  ...base("Stop"),
  stop_hook_active: active,
  last_assistant_message: message,
});

function hook(input: unknown): Promise<HookResult> {
  const raw = typeof input === "string" ? input : JSON.stringify(input);
  return runHook("codex", Buffer.from(raw), {}, project);
}

/** Runs a hook that must answer without a warning, and gives its reply. */
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

/** Codex's additional-context reply. */
const context = (hookEventName: string, additionalContext: string) => ({
  hookSpecificOutput: { hookEventName, additionalContext },
});

const patch = (file: string) =>
  `*** Begin Patch\n*** Add File: ${file}\n+export const slug = (s) => s.toLowerCase();\n*** End Patch\n`;

describe("the Codex CLI adapter", () => {
  it("denies the 5th identical failing Bash call with the corrective reason", async () => {
    const output = "Error: connect ECONNREFUSED 127.0.0.1:5432\n";
    const repeated = (times: string) =>
      context(
        "PreToolUse",
        `reins: \`node migrate.js\` gave the same result ${times} with nothing changed in between; running it again will not help. Change something first.`,
      );
    const sameError = (n: number) =>
      context(
        "PostToolUse",
        `reins: The same error came back ${n} times in a row (last from Bash). Retrying will not change it: read the error, find its cause, and fix that.`,
      );
    const warnings = [null, null, repeated("twice"), repeated("3 times")];
    const afterwards = [null, null, sameError(3), sameError(4)];
    for (const [i, warning] of warnings.entries()) {
      expect(await reply(pre("Bash", "node migrate.js"))).toEqual(warning);
      expect(await reply(post("Bash", "node migrate.js", output, 1))).toEqual(afterwards[i]);
    }
    expect(await reply(pre("Bash", "node migrate.js"))).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason:
          "reins: The same Bash call `node migrate.js` was made 5 times in a row, failing the same way each time. The circuit breaker is now open: stop, explain what you were trying and why it is not working. A person must acknowledge before work goes on.",
      },
    });
    const { state, log } = await stateOf();
    expect(state?.breaker).toMatchObject({ status: "open", reason: "duplicate_calls" });
    expect(log.find((r) => r.event.kind === "tool.requested")?.event).toMatchObject({
      task: `turn-${TURN}`,
      tool: "Bash",
      command: "node migrate.js",
      callId: "call_1",
    });
  });

  it("refuses a stop after an edit without tests (keep going), and allows it once the tests pass", async () => {
    expect(await reply(pre("apply_patch", patch("slug.js")))).toBeNull();
    expect(
      await reply(
        post("apply_patch", patch("slug.js"), "Success. Updated the following files:\nA slug.js\n"),
      ),
    ).toBeNull();

    expect(await reply(stop())).toEqual({
      decision: "block",
      reason:
        "reins: Not done yet: tests has not run (run `npm test`). Claim completion again once it passes.",
    });

    // A run Codex reports as failed (its model-facing header) keeps the gate shut.
    expect(await reply(pre("Bash", "npm test"))).toBeNull();
    expect(
      await reply(post("Bash", "npm test", "Exit code: 1\nWall time: 0.4 seconds\nOutput:\n1 failed\n")),
    ).toBeNull();
    expect(await reply(stop(true))).toEqual({
      decision: "block",
      reason:
        "reins: Not done yet: tests is failing (run `npm test` and fix it). Claim completion again once it passes.",
    });

    expect(await reply(pre("Bash", "npm test"))).toBeNull();
    expect(await reply(post("Bash", "npm test", "1 passed\n", 0))).toBeNull();
    expect(await reply(stop(true))).toBeNull();

    const { log } = await stateOf();
    expect(log.filter((r) => r.event.kind === "completion.claimed").map((r) => r.decision.verdict)).toEqual([
      "block",
      "block",
      "allow",
    ]);
    expect(
      log.find((r) => r.event.kind === "tool.completed" && r.event.tool === "apply_patch")?.event,
    ).toMatchObject({
      writes: ["slug.js"],
    });
    expect(
      log
        .filter((r) => r.event.kind === "verification.ran")
        .map((r) => (r.event.kind === "verification.ran" ? r.event.passed : null)),
    ).toEqual([false, true]);
  });

  it("takes a shell command's exit code from the rollout, and counts a check with no evidence as not run", async () => {
    await reply(pre("apply_patch", patch("slug.js")));
    await reply(postInput("apply_patch", patch("slug.js"), "Success.\n"));
    // No exit code in the hook input, none in the rollout, no test summary: not evidence of a pass.
    await reply(pre("Bash", "npm test"));
    await reply(post("Bash", "npm test", "done\n"));
    expect(await reply(stop())).toMatchObject({ decision: "block" });
    // The rollout says the same command exited 1: a failed check, with the output's failure.
    await reply(pre("Bash", "npm test"));
    await reply(post("Bash", "npm test", "done\n", 1));
    const { log } = await stateOf();
    const runs = log.filter((r) => r.event.kind === "verification.ran").map((r) => r.event);
    expect(runs).toEqual([
      expect.objectContaining({ name: "tests", passed: false, fingerprint: expect.any(String) as unknown }),
    ]);
    expect(log.filter((r) => r.event.kind === "tool.completed").at(-1)?.event).toMatchObject({
      outcome: "failure",
      exitCode: 1,
    });
  });

  it("reads the session's token usage from the rollout, each response once", async () => {
    const usage = (n: number) => ({
      timestamp: "2026-01-05T09:00:02.000Z",
      type: "token_usage_record",
      payload: {
        response_id: `resp_${n}`,
        usage: { input_tokens: 1_000, cached_input_tokens: 400, output_tokens: 50 },
      },
    });
    appendFileSync(
      rollout,
      `${JSON.stringify({ type: "turn_context", payload: { model: "gpt-5-codex" } })}\n${JSON.stringify(usage(1))}\n`,
    );
    await reply({ ...base("UserPromptSubmit"), prompt: "Go." });
    appendFileSync(rollout, `${JSON.stringify(usage(2))}\n`);
    await reply(pre("Bash", "ls"));
    await reply(post("Bash", "ls", "a\n", 0));
    await reply(stop());
    const { state } = await stateOf();
    expect(state?.budget.session.spent.tokens).toBe(2 * (600 + 50));
    expect(state?.budget.session.spent.usd).toBeGreaterThan(0);
  });

  it("gives a healthy session status context and never a blocking reply", async () => {
    const status = await reply({
      session_id: session,
      transcript_path: null,
      cwd: project,
      hook_event_name: "SessionStart",
      model: "gpt-5-codex",
      permission_mode: "default",
      source: "startup",
    });
    // After the status, what reins says of its own guarding: reins sets no sandbox for this agent.
    const line = [
      "reins: session budget 0 of 500,000 tokens used (0%); circuit breaker closed.",
      "reins: not contained: reins cannot keep this agent from switching it off (Codex CLI's sandbox cannot hide reins' secrets and store inside the project); to contain it, drive it with `reins run`, which boxes each iteration.",
    ].join("\n");
    expect(status).toEqual(context("SessionStart", line));
    expect(await reply({ ...base("UserPromptSubmit"), prompt: "Add a slug helper." })).toEqual(
      context("UserPromptSubmit", line),
    );
    expect(await reply(pre("Bash", "ls"))).toBeNull();
    expect(await reply(post("Bash", "ls", "package.json\n"))).toBeNull();
    expect(await reply(pre("apply_patch", patch("slug.js")))).toBeNull();
    expect(
      await reply(
        post("apply_patch", patch("slug.js"), "Success. Updated the following files:\nA slug.js\n"),
      ),
    ).toBeNull();
    expect(await reply(pre("Bash", "npm test"))).toBeNull();
    expect(await reply(post("Bash", "npm test", "1 passed\n", 0))).toBeNull();
    expect(await reply(stop(false, "Added slug.js; the tests pass."))).toBeNull();
    expect(
      await reply({
        session_id: session,
        transcript_path: rollout,
        cwd: project,
        hook_event_name: "SessionEnd",
        reason: "other",
      }),
    ).toBeNull();

    const { log } = await stateOf();
    expect(log.filter((r) => r.decision.verdict !== "allow")).toEqual([]);
    expect(log.map((r) => r.event.kind)).toEqual([
      "session.started",
      "task.started",
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
    expect(log[0]?.event).toMatchObject({ kind: "session.started", agent: "codex", model: "gpt-5-codex" });
  });

  it("denies a call a person must confirm, since Codex's PreToolUse has no ask", async () => {
    writeFileSync(
      join(project, "reins.config.json"),
      JSON.stringify({ budget: { session: { toolCalls: 10 } } }),
    );
    const commands = ["ls", "pwd", "git status", "node --version", "cat README.md", "whoami", "uname", "env"];
    for (const command of commands) await reply(pre("Bash", command));
    expect(await reply(pre("Bash", "git log"))).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason:
          "reins: The session has used 90% of its tool call budget (9 tool calls of 10 tool calls). A person must confirm before work goes on.",
      },
    });
  });

  it("ends the previous turn's task when the next prompt comes", async () => {
    expect(await reply({ ...base("UserPromptSubmit"), prompt: "First." })).not.toBeNull();
    expect(
      await reply({ ...base("UserPromptSubmit"), turn_id: "turn-two", prompt: "Second." }),
    ).not.toBeNull();
    const { log } = await stateOf();
    expect(log.map((r) => r.event)).toMatchObject([
      { kind: "task.started", task: `turn-${TURN}`, taskType: "prompt" },
      { kind: "task.ended", task: `turn-${TURN}`, status: "done" },
      { kind: "task.started", task: "turn-turn-two" },
    ]);
  });

  it("allows bad input with one line on stderr", async () => {
    const cases: [unknown, RegExp][] = [
      ["{oops", /^reins hook codex: input is not JSON; allowed without guarding$/],
      [
        { ...pre("Bash", "ls"), session_id: undefined },
        /^reins hook codex: input is missing or has a bad session_id /,
      ],
      [
        { ...base("PermissionRequest"), tool_name: "Bash" },
        /^reins hook codex: input is missing or has a bad hook_event_name /,
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

describe("codexOutcome", () => {
  it("reads an exit code where Codex gives one, and counts plain output as a success", () => {
    expect(codexOutcome("three")).toEqual({ failed: false, text: "three", output: "three" });
    expect(codexOutcome("Process exited with code 2\nOutput:\nboom")).toMatchObject({
      failed: true,
      exitCode: 2,
    });
    expect(codexOutcome("Exit code: 0\nWall time: 1 seconds\nOutput:\nok")).toMatchObject({
      failed: false,
      exitCode: 0,
    });
    // A program printing the marker later in its output does not decide the outcome.
    expect(codexOutcome("a\nb\nc\nExit code: 1")).toMatchObject({ failed: false });
    expect(codexOutcome({ exit_code: 1, stderr: "boom" })).toMatchObject({
      failed: true,
      text: "boom",
      exitCode: 1,
    });
  });
});
