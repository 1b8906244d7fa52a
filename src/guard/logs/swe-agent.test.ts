import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { defaultPolicy } from "../../base/core/policy.js";
import { replayRun } from "../evaluate/replay.js";
import { readLog } from "./load.js";
import type { LoggedRun } from "./run.js";
import { isSweAgent, readSweAgent } from "./swe-agent.js";

/**
 * SWE-agent trajectories against hand-written fixtures in its `.traj` shapes: `swe-agent-1.traj` (1.x: the
 * `str_replace_editor` tool, dict `state`, `execution_time`, `replay_config`, review-on-submit) and
 * `swe-agent-0.traj` (0.x: `open`/`edit N:M`/`create`, `state` as JSON text, no `execution_time`).
 */

const fixture = (name: string) => `test/fixtures/logs/${name}`;
const json = (name: string): unknown => JSON.parse(readFileSync(fixture(name), "utf8"));
const v1 = () => readSweAgent(json("swe-agent-1.traj"), fixture("swe-agent-1.traj"), "swe-agent-1");
const v0 = () => readSweAgent(json("swe-agent-0.traj"), fixture("swe-agent-0.traj"), "swe-agent-0");
const hooks = (run: LoggedRun) => run.calls.map((c) => c.input.hook_event_name);
const tools = (run: LoggedRun) =>
  run.calls
    .filter((c) => c.input.hook_event_name === "PreToolUse")
    .map((c) => [c.input.tool_name, c.input.tool_input]);
const pair = ["PreToolUse", "PostToolUse"];

describe("isSweAgent", () => {
  it("recognises 0.x and 1.x trajectories", () => {
    expect(isSweAgent(json("swe-agent-1.traj"))).toBe(true);
    expect(isSweAgent(json("swe-agent-0.traj"))).toBe(true);
  });

  it("rejects mini-swe-agent trajectories, Gemini chats and empty values", () => {
    expect(isSweAgent({ trajectory_format: "mini-swe-agent-1", messages: [] })).toBe(false);
    expect(isSweAgent({})).toBe(false);
    expect(isSweAgent(json("gemini-chat.json"))).toBe(false);
  });
});

describe("readSweAgent on a 1.x trajectory", () => {
  it("starts the run with the task prompt and maps each step to Claude Code's hooks", () => {
    const run = v1();
    expect(run).toMatchObject({ id: "calc__calc-17", agent: "claude", format: "swe-agent" });
    expect(hooks(run)).toEqual([
      "SessionStart",
      "UserPromptSubmit",
      ...pair,
      ...pair,
      ...pair,
      ...pair,
      "PreToolUse",
      "PostToolUseFailure",
      ...pair,
      "Stop",
      ...pair,
      "Stop",
    ]);
    expect(run.calls[1]?.input.prompt).toContain("add() subtracts its arguments instead of adding them.");
    for (const call of run.calls)
      expect(call.input).toMatchObject({ session_id: "calc__calc-17", prompt_id: "task", cwd: "/testbed" });
  });

  it("reads the editor's commands as Read, Write and Edit, and everything else as Bash", () => {
    expect(tools(v1())).toEqual([
      ["Read", { file_path: "/testbed/calc/ops.py" }],
      [
        "Write",
        { file_path: "/testbed/reproduce.py", content: "from calc.ops import add\nprint(add(1, 2))\n" },
      ],
      ["Bash", { command: "cd /testbed && python reproduce.py" }],
      [
        "Edit",
        { file_path: "/testbed/calc/ops.py", old_string: "    return a - b", new_string: "    return a + b" },
      ],
      ["Bash", { command: "python -m pytest tests/test_ops.py" }],
      ["Bash", { command: "python reproduce.py" }],
      ["Bash", { command: "rm /testbed/reproduce.py" }],
    ]);
  });

  it("reports observations as successful output, and a timed-out command as a failure", () => {
    const calls = v1().calls;
    expect(calls[3]?.input).toMatchObject({
      tool_use_id: "step-1",
      tool_response: {
        stdout: expect.stringContaining("return a - b"),
        stderr: "",
        interrupted: false,
        isImage: false,
      },
    });
    expect(calls[11]?.input).toMatchObject({ tool_use_id: "step-5", tool_name: "Bash", is_interrupt: true });
    expect(calls[11]?.input.error).toMatch(/^Command timed out\nThe command 'python -m pytest/);
  });

  it("makes every submit a Stop with the step's response, the run going on after a reviewed one", () => {
    const stops = v1().calls.filter((c) => c.input.hook_event_name === "Stop");
    expect(stops.map((c) => c.input)).toMatchObject([
      { stop_hook_active: false, last_assistant_message: "add() now adds. Submitting." },
      { stop_hook_active: false, last_assistant_message: "Confirming the submission." },
    ]);
  });

  it("advances time by each step's execution time plus a second, PostToolUse 1 ms after PreToolUse", () => {
    const times = v1().calls.map((c) => c.at);
    expect(times.slice(0, 6)).toEqual([0, 0, 1000, 1001, 2180, 2181]);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it("puts the run's total usage, at SWE-agent's own cost, on the last call only", () => {
    const run = v1();
    expect(run.calls.slice(0, -1).every((c) => c.usage === undefined)).toBe(true);
    expect(run.calls[run.calls.length - 1]?.usage).toEqual([
      {
        id: "calc__calc-17#total",
        model: "claude-sonnet-4-20250514",
        input: 120345,
        output: 2210,
        cacheRead: 0,
        cacheWrite: 0,
        costUsd: 0.4213,
      },
    ]);
  });
});

describe("readSweAgent on a 0.x trajectory", () => {
  it("reads open, edit and create against the open file and working directory", () => {
    const run = v0();
    expect(tools(run)).toEqual([
      ["Bash", { command: 'find_file "fields.py" src' }],
      ["Read", { file_path: "/shop__ledger/src/ledger/fields.py" }],
      [
        "Edit",
        {
          file_path: "/shop__ledger/src/ledger/fields.py",
          old_string: "",
          new_string: "        return round(value.total_seconds() / unit)",
          line_range: "41:41",
        },
      ],
      ["Write", { file_path: "/shop__ledger/reproduce.py", content: "" }],
      ["Bash", { command: "python reproduce.py" }],
    ]);
    expect(run.calls[0]?.input.cwd).toBe("/shop__ledger");
    expect(run.calls[1]?.input.prompt).toContain("Duration serialization truncates instead of rounding.");
  });

  it("names the run after its file, fails the timed-out command and ends with the submit", () => {
    const run = v0();
    expect(run.id).toBe("swe-agent-0");
    expect(hooks(run).slice(-3)).toEqual(["PreToolUse", "PostToolUseFailure", "Stop"]);
    // Without execution times every step takes the default second, plus one for the model.
    expect(run.calls.map((c) => c.at)).toEqual([
      0, 0, 1000, 1001, 3000, 3001, 5000, 5001, 7000, 7001, 9000, 9001, 11000,
    ]);
  });

  it("leaves an unpriced run's cost to the policy", () => {
    const usage = v0().calls.at(-1)?.usage;
    expect(usage).toEqual([
      { id: "swe-agent-0#total", input: 54021, output: 812, cacheRead: 0, cacheWrite: 0 },
    ]);
  });
});

describe("readSweAgent on 1.x windowed tools", () => {
  it("reads `edit <search> <replace>` as an Edit of the open file, and skips the agent giving up", () => {
    const state = { open_file: "/testbed/app.py", working_dir: "/testbed" };
    const run = readSweAgent(
      {
        trajectory: [
          { action: "open app.py", observation: "[File: /testbed/app.py (3 lines total)]", state },
          { action: "edit 'x = 1' 'x = \"two\"'", observation: "Text replaced.", state },
          { action: "exit_forfeit", observation: "Exited", state },
        ],
        history: [],
        info: {},
      },
      "inline.traj",
      "inline",
    );
    expect(tools(run)).toEqual([
      ["Read", { file_path: "/testbed/app.py" }],
      ["Edit", { file_path: "/testbed/app.py", old_string: "x = 1", new_string: 'x = "two"' }],
    ]);
    expect(hooks(run).at(-1)).toBe("PostToolUse");
  });
});

describe("replaying a SWE-agent trajectory", () => {
  it("gives the events the live Claude Code hooks would have recorded", () => {
    const replayed = replayRun(readLog(fixture("swe-agent-1.traj")), defaultPolicy);
    expect(replayed.calls.every((c) => c.invalid === undefined)).toBe(true);
    const kinds = replayed.calls.map((c) => c.records.map((r) => r.event.kind));
    expect(kinds.slice(0, 4)).toEqual([
      ["session.started"],
      ["task.started"],
      ["tool.requested"],
      ["tool.completed"],
    ]);
    expect(kinds[11]).toEqual(["tool.completed", "verification.ran"]);
    expect(kinds[14]).toEqual(["completion.claimed"]);
    expect(kinds[kinds.length - 1]).toEqual(["usage.recorded", "completion.claimed"]);
    expect(replayed.steps).toBe(7);
  });

  it("completes the timed-out test run as a failed check", () => {
    const replayed = replayRun(v1(), defaultPolicy);
    const events = replayed.calls[11]?.records.map((r) => r.event);
    expect(events?.[0]).toMatchObject({ kind: "tool.completed", tool: "Bash", outcome: "failure" });
    expect(events?.[1]).toMatchObject({ kind: "verification.ran", name: "tests", passed: false });
  });
});

describe("SWE-agent-family trajectories as they really are", () => {
  const state = { open_file: "/testbed/app.py", working_dir: "/testbed" };
  const step = (action: string, observation = "ok") => ({ action, observation, state });
  const traj = (steps: ReturnType<typeof step>[], extra: Record<string, unknown> = {}) => ({
    trajectory: steps,
    history: [],
    info: {},
    ...extra,
  });

  it("are recognised by their steps, whatever other keys they carry (a `messages` list)", () => {
    const data = traj([step("ls")], { messages: [{ role: "user", content: "fix it" }] });
    expect(isSweAgent(data)).toBe(true);
    expect(readSweAgent(data, "x.traj", "x").calls.some((c) => c.input.tool_name === "Bash")).toBe(true);
  });

  it("tell ranged edits of one file apart by their lines: deleting three regions is three edits", () => {
    const run = readSweAgent(
      traj([
        step("open app.py"),
        step("edit 10:12\nend_of_edit"),
        step("edit 20:21\nend_of_edit"),
        step("edit 30:30\nend_of_edit"),
      ]),
      "x.traj",
      "x",
    );
    const edits = tools(run)
      .slice(1)
      .map(([, input]) => input);
    expect(new Set(edits.map((e) => JSON.stringify(e))).size).toBe(3);
    expect(edits[0]).toMatchObject({ file_path: "/testbed/app.py", new_string: "", line_range: "10:12" });
  });

  it("tell inserts apart by their line", () => {
    const insert = (line: number) =>
      step(`str_replace_editor insert /testbed/app.py --insert_line ${line} --new_str 'import os'`);
    const edits = tools(readSweAgent(traj([insert(1), insert(40)]), "x.traj", "x")).map(([, i]) => i);
    expect(edits).toEqual([
      { file_path: "/testbed/app.py", old_string: "", new_string: "import os", insert_line: "1" },
      { file_path: "/testbed/app.py", old_string: "", new_string: "import os", insert_line: "40" },
    ]);
  });

  it.each([
    [
      "a linter rejection (0.x and 1.x windowed edit)",
      "edit 3:3\n  x = 1\nend_of_edit",
      "Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.\nERRORS:\n- E999 IndentationError: unexpected indent\n\nYour changes have NOT been applied. Please fix your edit command and try again.",
    ],
    [
      "a replacement that found nothing",
      "str_replace_editor str_replace /testbed/app.py --old_str 'x = 1' --new_str 'x = 2'",
      "No replacement was performed, old_str `x = 1` did not appear verbatim in /testbed/app.py.",
    ],
    [
      "a create over an existing file",
      "str_replace_editor create /testbed/app.py --file_text 'x = 2'",
      "ERROR:\nInvalid `path` parameter: /testbed/app.py. File already exists at: /testbed/app.py. Cannot overwrite files using command `create`.",
    ],
  ])("report an edit that was not applied (%s) as a failed call", (_, action, observation) => {
    const run = readSweAgent(traj([step("open app.py"), step(action, observation)]), "x.traj", "x");
    const after = run.calls.at(-1)?.input;
    expect(after).toMatchObject({ hook_event_name: "PostToolUseFailure", is_interrupt: false });
    expect(String(after?.error)).toContain(observation.split("\n")[0]);
  });

  it("keep an applied edit whose output only mentions an error as applied", () => {
    const run = readSweAgent(
      traj([
        step(
          "edit 3:3\n    raise ValueError('error: bad input')\nend_of_edit",
          "[File: /testbed/app.py (9 lines total)]\n3:    raise ValueError('error: bad input')",
        ),
      ]),
      "x.traj",
      "x",
    );
    expect(run.calls.at(-1)?.input.hook_event_name).toBe("PostToolUse");
  });

  it("deny nothing on a working agent that deletes three regions of one file", () => {
    const steps = [
      step("open app.py", "[File: /testbed/app.py (40 lines total)]"),
      step("edit 10:12\nend_of_edit"),
      step("python -m pytest", "1 failed"),
      step("edit 20:21\nend_of_edit"),
      step("python -m pytest", "1 failed"),
      step("edit 30:30\nend_of_edit"),
      step("python -m pytest", "3 passed"),
    ];
    const replayed = replayRun(readSweAgent(traj(steps), "x.traj", "x"), defaultPolicy);
    expect(replayed.deny?.told ?? null).toBeNull();
    expect(replayed.stop).toBeNull();
  });
});
