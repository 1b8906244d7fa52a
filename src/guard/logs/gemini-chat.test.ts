import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { defaultPolicy } from "../../base/core/policy.js";
import { replayRun } from "../evaluate/replay.js";
import { isGeminiChat, readGeminiChat } from "./gemini-chat.js";
import { jsonLines, readLog } from "./load.js";

/**
 * Gemini CLI chat recordings against hand-written fixtures in the shape of its ChatRecordingService:
 * `gemini-chat.json` (the whole-record JSON of 0.x) and `gemini-chat.jsonl` (the newer append-only form).
 */

const fixture = (name: string) => `test/fixtures/logs/${name}`;
const json = (name: string): unknown => JSON.parse(readFileSync(fixture(name), "utf8"));
const chat = () => readGeminiChat(json("gemini-chat.json"), fixture("gemini-chat.json"), "fallback");
const hooks = (run: { calls: { input: Record<string, unknown> }[] }) =>
  run.calls.map((c) => c.input.hook_event_name);

describe("isGeminiChat", () => {
  it("recognises the JSON record and the JSON Lines rows", () => {
    expect(isGeminiChat(json("gemini-chat.json"))).toBe(true);
    expect(isGeminiChat(jsonLines(readFileSync(fixture("gemini-chat.jsonl"), "utf8")))).toBe(true);
  });

  it("rejects other agents' logs and empty values", () => {
    expect(isGeminiChat({ trajectory_format: "mini-swe-agent-1", messages: [] })).toBe(false);
    expect(isGeminiChat({})).toBe(false);
    expect(isGeminiChat([])).toBe(false);
    expect(isGeminiChat(json("swe-agent-1.traj"))).toBe(false);
    // Claude Code transcript lines carry a sessionId too, but no project hash.
    expect(isGeminiChat([{ sessionId: "s", type: "user", uuid: "u", message: {} }])).toBe(false);
  });
});

describe("readGeminiChat", () => {
  it("replays a session as Gemini CLI's hook calls, in order, under the recorded session id", () => {
    const run = chat();
    expect(run).toMatchObject({
      id: "7d3e2f10-5a4b-4c21-9e8f-0b1c2d3e4f50",
      agent: "gemini",
      format: "gemini-chat",
    });
    // No model hooks (AfterModel): each response's usage rides on the next call instead (see below).
    expect(hooks(run)).toEqual([
      "SessionStart",
      "BeforeAgent",
      ...["BeforeTool", "AfterTool"],
      ...["BeforeTool", "AfterTool", "BeforeTool", "AfterTool"],
      ...["BeforeTool", "AfterTool"],
      ...["BeforeTool", "AfterTool"],
      "AfterAgent",
      "BeforeAgent",
      ...["BeforeTool", "AfterTool"],
      "AfterAgent",
    ]);
    for (const call of run.calls) {
      expect(call.input).toMatchObject({ session_id: run.id, transcript_path: fixture("gemini-chat.json") });
      expect(call.input.timestamp).toBe(new Date(call.at).toISOString());
    }
  });

  it("asks for each tool with its recorded args and answers with the response Gemini CLI built", () => {
    const calls = chat().calls;
    expect(calls[2]?.input).toMatchObject({
      tool_name: "read_file",
      tool_input: { absolute_path: "/home/dev/shop/src/money.ts" },
    });
    expect(calls[3]?.input.tool_response).toEqual({
      llmContent: "export const round = (x: number) => Math.floor(x * 100) / 100;\n",
      returnDisplay: "",
    });
    expect(calls[5]?.input).toMatchObject({
      tool_name: "replace",
      tool_input: { old_string: "Math.floor(x * 100)", new_string: "Math.round(x * 100)" },
    });
  });

  it("marks errored and cancelled tool calls with the error the model was sent", () => {
    const calls = chat().calls;
    expect(calls[7]?.input.tool_response).toEqual({
      llmContent: "File not found: /home/dev/shop/src/money.test.js",
      returnDisplay: "File not found.",
      error: { message: "File not found: /home/dev/shop/src/money.test.js" },
    });
    expect(calls[15]?.input.tool_response).toMatchObject({
      error: { message: "[Operation Cancelled] Reason: User did not allow tool call" },
    });
    // A shell command that exits non-zero is a successful tool call: its exit code is in the text.
    expect(calls[9]?.input.tool_response).not.toHaveProperty("error");
  });

  it("records each model response's tokens once, on the next hook call, keyed by its message", () => {
    const run = chat();
    const usage = run.calls.flatMap((c, i) => (c.usage ?? []).map((u) => ({ i, ...u })));
    expect(usage.map((u) => [u.i, u.id])).toEqual([
      [2, "gemini:m-gemini-1"],
      [4, "gemini:m-gemini-2"],
      [8, "gemini:m-gemini-3"],
      [10, "gemini:m-gemini-4"],
      [12, "gemini:m-gemini-5"],
      [14, "gemini:m-gemini-6"],
      [16, "gemini:m-gemini-7"],
    ]);
    // The prompt count includes the cached tokens; output counts the thinking as well.
    expect(usage[0]).toMatchObject({
      input: 1200,
      cacheRead: 4000,
      output: 100,
      cacheWrite: 0,
      model: "gemini-2.5-pro",
    });
  });

  it("ends each turn with AfterAgent carrying the prompt and the model's last answer", () => {
    const ends = chat().calls.filter((c) => c.input.hook_event_name === "AfterAgent");
    expect(ends.map((c) => [c.input.prompt, c.input.prompt_response])).toEqual([
      [
        "The rounding test in src/money.ts fails, please fix it.",
        "Fixed: round() now rounds half up and all 12 tests pass.",
      ],
      ["Also add a CHANGELOG entry.", "Understood, I left CHANGELOG.md unchanged."],
    ]);
  });

  it("takes times from the recording and never goes back", () => {
    const times = chat().calls.map((c) => c.at);
    expect(times[0]).toBe(Date.parse("2025-10-01T09:00:00.000Z"));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(times[times.length - 1]).toBe(Date.parse("2025-10-01T09:02:40.000Z"));
  });

  it("reads the JSON Lines form: a rewritten message keeps its place and a rewound one is gone", () => {
    const run = readLog(fixture("gemini-chat.jsonl"));
    expect(run).toMatchObject({ id: "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", format: "gemini-chat" });
    // No model hooks (AfterModel): each response's usage rides on the next call instead (see below).
    expect(hooks(run)).toEqual([
      "SessionStart",
      "BeforeAgent",
      "BeforeTool",
      "AfterTool",
      "AfterAgent",
      "BeforeAgent",
      "AfterAgent",
    ]);
    expect(run.calls.map((c) => c.input.prompt).filter(Boolean)).not.toContain("Delete src/a.ts");
    expect(run.calls[2]?.input.tool_input).toEqual({ command: "grep -rn TODO src/" });
    expect(run.calls.flatMap((c) => c.usage ?? []).map((u) => u.id)).toEqual([
      "gemini:g1",
      "gemini:g2",
      "gemini:g4",
    ]);
  });
});

describe("replaying a Gemini CLI chat", () => {
  it("gives the events the live Gemini hooks would have recorded", () => {
    const replayed = replayRun(chat(), defaultPolicy);
    expect(replayed.calls.every((c) => c.invalid === undefined)).toBe(true);
    const kinds = replayed.calls.map((c) => c.records.map((r) => r.event.kind));
    expect(kinds.slice(0, 4)).toEqual([
      ["session.started"],
      [],
      ["tool.requested", "usage.recorded"],
      ["tool.completed"],
    ]);
    expect(kinds[9]).toEqual(["tool.completed", "verification.ran"]);
    expect(kinds[12]).toEqual(["completion.claimed", "usage.recorded"]);
  });

  it("completes the failed read, the failing test run and the cancelled write as failures", () => {
    const replayed = replayRun(chat(), defaultPolicy);
    const outcomes = replayed.calls.flatMap((c) =>
      c.records.flatMap((r) => (r.event.kind === "tool.completed" ? [[r.event.tool, r.event.outcome]] : [])),
    );
    expect(outcomes).toEqual([
      ["read_file", "success"],
      ["replace", "success"],
      ["read_file", "failure"],
      ["run_shell_command", "failure"],
      ["run_shell_command", "success"],
      ["write_file", "failure"],
    ]);
    expect(replayed.steps).toBe(6);
  });
});
