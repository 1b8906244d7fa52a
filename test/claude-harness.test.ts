import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  claudeUnavailableReason,
  findTranscript,
  readTranscript,
  runClaude,
  type ClaudeRun,
} from "#test/claude-code.js";
import {
  lastSystemTexts,
  lastToolResults,
  lastUserTexts,
  startFakeAnthropic,
  type FakeAnthropic,
  type Script,
} from "#test/fake-anthropic.js";

/**
 * Drives the real Claude Code CLI offline against the scripted fake Messages API, to prove the harness
 * that the end-to-end hook tests build on: tools really run, project hooks really run, and what a hook
 * answers really reaches the model.
 */

type HookInput = Record<string, unknown> & { hook_event_name: string };

let root: string;
let project: string;
let home: string;
let hookLog: string;
let fake: FakeAnthropic | undefined;
let hookServer: Server | undefined;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "reins-claude-harness-")));
  project = join(root, "project");
  home = join(root, "home");
  hookLog = join(root, "hooks.jsonl");
  mkdirSync(join(project, ".claude"), { recursive: true });
  mkdirSync(home);
  // A hook that appends its stdin (one JSON line) to the log and allows; `node` needs no shell quoting.
  writeFileSync(
    join(root, "record.mjs"),
    `import { appendFileSync, readFileSync } from "node:fs";
const input = readFileSync(0, "utf8").trim();
appendFileSync(process.argv[2], input + "\\n");
const answer = process.argv[3];
if (answer === "deny") {
  process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse",
    permissionDecision: "deny", permissionDecisionReason: "reins says no" } }));
} else if (answer === "block-once" && JSON.parse(input).stop_hook_active === false) {
  process.stdout.write(JSON.stringify({ decision: "block", reason: "reins: run the tests first" }));
}
`,
  );
});

afterEach(async () => {
  await fake?.close();
  fake = undefined;
  const server = hookServer;
  hookServer = undefined;
  if (server) {
    // Claude Code keeps its hook connections alive; close them or `close` waits for them.
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  rmSync(root, { recursive: true, force: true });
});

/** A command hook running record.mjs: it logs its input, then answers as `answer` says. */
function recordHook(answer?: "deny" | "block-once") {
  const args = [process.execPath, join(root, "record.mjs"), hookLog, ...(answer ? [answer] : [])];
  return { type: "command", command: args.map((a) => `'${a}'`).join(" ") };
}

function writeSettings(hooks: Record<string, { matcher?: string; hooks: object[] }[]>): void {
  writeFileSync(join(project, ".claude", "settings.json"), JSON.stringify({ hooks }, null, 2));
}

function hookInputs(): HookInput[] {
  if (!existsSync(hookLog)) return [];
  return readFileSync(hookLog, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as HookInput);
}

async function run(script: Script, env?: Record<string, string>): Promise<ClaudeRun> {
  fake = await startFakeAnthropic(script);
  const result = await runClaude({
    cwd: project,
    home,
    prompt: "Say hello with Bash.",
    baseUrl: fake.url,
    maxTurns: 4,
    timeoutMs: 45_000,
    ...(env ? { env } : {}),
  });
  expect(result.timedOut, result.stderr).toBe(false);
  expect(fake.errors).toEqual([]);
  return result;
}

const sayHello: Script = [
  {
    toolUses: [
      { name: "Bash", input: { command: "echo hello > said.txt && cat said.txt", description: "Say" } },
    ],
    usage: {
      input_tokens: 120,
      output_tokens: 7,
      cache_read_input_tokens: 50,
      cache_creation_input_tokens: 30,
    },
  },
  { text: "done", usage: { input_tokens: 140, output_tokens: 3 } },
  { text: "done, really" },
];

describe.skipIf(claudeUnavailableReason() !== null)("the real Claude Code CLI against the fake API", () => {
  it("runs a scripted Bash call and the project's hooks, and records usage in the transcript", async () => {
    writeSettings({
      SessionStart: [{ hooks: [recordHook()] }],
      UserPromptSubmit: [{ hooks: [recordHook()] }],
      PreToolUse: [{ matcher: "Bash", hooks: [recordHook()] }],
      PostToolUse: [{ matcher: "Bash", hooks: [recordHook()] }],
      Stop: [{ hooks: [recordHook()] }],
    });
    const result = await run(sayHello);

    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toMatchObject({
      type: "result",
      subtype: "success",
      is_error: false,
      result: "done",
    });
    const main = fake!.mainRequests();
    expect(main).toHaveLength(2);
    expect(main[1]!.body!.messages.some((m) => m.role === "assistant")).toBe(true);
    expect(lastToolResults(main[1]!)).toEqual([
      { toolUseId: "toolu_fake_0_0", text: "hello", isError: false },
    ]);
    expect(readFileSync(join(project, "said.txt"), "utf8")).toBe("hello\n");

    const inputs = hookInputs();
    const events = inputs.map((i) => i.hook_event_name);
    expect(events.filter((e) => e !== "SessionStart" && e !== "UserPromptSubmit")).toEqual([
      "PreToolUse",
      "PostToolUse",
      "Stop",
    ]);
    expect(events).toContain("SessionStart");
    expect(events).toContain("UserPromptSubmit");
    const sessionId = result.json!.session_id;
    const transcriptPath = findTranscript(home, sessionId);
    expect(transcriptPath).toBeDefined();
    const common = { session_id: sessionId, transcript_path: transcriptPath, cwd: project };
    const byEvent = (name: string) => inputs.find((i) => i.hook_event_name === name);
    expect(byEvent("SessionStart")).toMatchObject({ ...common, source: "startup" });
    expect(byEvent("UserPromptSubmit")).toMatchObject({ ...common, prompt: "Say hello with Bash." });
    expect(byEvent("PreToolUse")).toMatchObject({
      ...common,
      hook_event_name: "PreToolUse",
      permission_mode: "default",
      tool_name: "Bash",
      tool_input: { command: "echo hello > said.txt && cat said.txt" },
      tool_use_id: "toolu_fake_0_0",
    });
    expect(byEvent("PreToolUse")).toHaveProperty("prompt_id");
    expect(byEvent("PostToolUse")).toMatchObject({
      ...common,
      tool_name: "Bash",
      tool_use_id: "toolu_fake_0_0",
      tool_response: { stdout: "hello", stderr: "", interrupted: false },
    });
    expect(byEvent("Stop")).toMatchObject({
      ...common,
      stop_hook_active: false,
      last_assistant_message: "done",
    });

    // Usage: one assistant entry per content block, each with the whole message's final usage, so
    // a reader counts each `message.id` once.
    const assistant = readTranscript(transcriptPath!).filter((e) => e.type === "assistant");
    const usageById = new Map(
      assistant.map((e) => [e.message!.id, { requestId: e.requestId, ...e.message!.usage }]),
    );
    expect([...usageById.keys()]).toEqual(["msg_fake_1", "msg_fake_2"]);
    expect(usageById.get("msg_fake_1")).toMatchObject({
      requestId: "req_msg_fake_1",
      input_tokens: 120,
      output_tokens: 7,
      cache_read_input_tokens: 50,
      cache_creation_input_tokens: 30,
    });
    expect(usageById.get("msg_fake_2")).toMatchObject({ input_tokens: 140, output_tokens: 3 });
  }, 60_000);

  it("delivers a PreToolUse deny and a Stop block from command hooks to the model", async () => {
    writeSettings({
      PreToolUse: [{ matcher: "Bash", hooks: [recordHook("deny")] }],
      Stop: [{ hooks: [recordHook("block-once")] }],
    });
    const result = await run(sayHello);

    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toMatchObject({ subtype: "success", result: "done, really" });
    expect(existsSync(join(project, "said.txt"))).toBe(false);
    const main = fake!.mainRequests();
    expect(main).toHaveLength(3);
    expect(lastToolResults(main[1]!)).toEqual([
      { toolUseId: "toolu_fake_0_0", text: "PreToolUse:Bash hook error: reins says no", isError: true },
    ]);
    expect(lastUserTexts(main[2]!)).toEqual(["Stop hook feedback:\nreins: run the tests first"]);
    expect(lastSystemTexts(main[2]!).join("\n")).toContain("Stop hook blocking error");
    expect(
      hookInputs()
        .filter((i) => i.hook_event_name === "Stop")
        .map((i) => i.stop_hook_active),
    ).toEqual([false, true]);
  }, 60_000);

  it("posts hook input to an http hook with its configured headers and honours its answer", async () => {
    const received: { path: string; headers: IncomingHttpHeaders; body: HookInput }[] = [];
    hookServer = createServer((req, res) => {
      let raw = "";
      req.on("data", (chunk: Buffer) => (raw += chunk.toString()));
      req.on("end", () => {
        const body = JSON.parse(raw) as HookInput;
        received.push({ path: req.url ?? "", headers: req.headers, body });
        const answer =
          body.hook_event_name === "PreToolUse"
            ? {
                hookSpecificOutput: {
                  hookEventName: "PreToolUse",
                  permissionDecision: "deny",
                  permissionDecisionReason: "reins over http says no",
                },
              }
            : body.stop_hook_active === false
              ? { decision: "block", reason: "reins over http: not done" }
              : {};
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((resolve) => hookServer!.listen(0, "127.0.0.1", resolve));
    const hookUrl = `http://127.0.0.1:${(hookServer.address() as AddressInfo).port}`;
    const httpHook = (path: string) => ({
      type: "http",
      url: `${hookUrl}${path}`,
      timeout: 10,
      headers: {
        Authorization: "Bearer x",
        "X-Reins-Token": "$REINS_TOKEN",
        "X-Not-Allowed": "[${REINS_SECRET}]",
      },
      allowedEnvVars: ["REINS_TOKEN"],
    });
    writeSettings({
      PreToolUse: [{ matcher: "Bash", hooks: [httpHook("/hook/pre-tool-use")] }],
      Stop: [{ hooks: [httpHook("/hook/stop")] }],
    });
    const result = await run(sayHello, { REINS_TOKEN: "tok-123", REINS_SECRET: "s3cret" });

    expect(result.code, result.stderr).toBe(0);
    const main = fake!.mainRequests();
    expect(main).toHaveLength(3);
    expect(lastToolResults(main[1]!)).toEqual([
      {
        toolUseId: "toolu_fake_0_0",
        text: "PreToolUse:Bash hook error: reins over http says no",
        isError: true,
      },
    ]);
    expect(lastUserTexts(main[2]!)).toEqual(["Stop hook feedback:\nreins over http: not done"]);

    expect(received.map((r) => r.path)).toEqual(["/hook/pre-tool-use", "/hook/stop", "/hook/stop"]);
    const pre = received[0]!;
    expect(pre.headers).toMatchObject({
      "content-type": "application/json",
      authorization: "Bearer x",
      // Only variables listed in allowedEnvVars are filled in; any other becomes an empty string.
      "x-reins-token": "tok-123",
      "x-not-allowed": "[]",
    });
    expect(pre.body).toMatchObject({
      session_id: result.json!.session_id,
      cwd: project,
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "echo hello > said.txt && cat said.txt" },
      tool_use_id: "toolu_fake_0_0",
    });
  }, 60_000);
});
