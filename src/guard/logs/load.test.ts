/** Tests of reading agents' logs from disk, each format told from its content. */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { defaultPolicy } from "../../base/core/policy.js";
import { replayRun } from "../evaluate/replay.js";
import { jsonLines, logFiles, readLog } from "./load.js";

/**
 * The importers read back what the real agent CLIs wrote. The fixtures were captured from Claude Code
 * 2.1.330 and Codex CLI 0.169.0 run in the end-to-end harness against a scripted model (a Read, a failing
 * command, a Write, a passing `npm test`, "Done."), together with every hook input those sessions sent: the
 * importer must rebuild the hook calls the agent really made. (Long system prompts were cut from the
 * fixtures; nothing the importers read was.)
 */
const fixtures = join(import.meta.dirname, "..", "..", "..", "test", "fixtures", "logs");
const hooksOf = (name: string) => jsonLines(readFileSync(join(fixtures, name), "utf8"));

/** The fields of a hook input that say what the agent did. */
function gist(input: Record<string, unknown>) {
  return {
    hook: input.hook_event_name,
    tool: input.tool_name,
    input: input.tool_input,
    id: input.tool_use_id,
  };
}

describe("Claude Code transcripts", () => {
  const run = readLog(join(fixtures, "claude-code-2.1.330.jsonl"));
  const sent = hooksOf("claude-code-2.1.330.hooks.jsonl");

  it("are read as the hook calls Claude Code made, in order", () => {
    expect(run).toMatchObject({ agent: "claude", format: "claude-transcript", id: sent[0]?.session_id });
    // SessionEnd is not in a transcript: it is the one hook the log cannot show.
    const expected = sent.filter((h) => h.hook_event_name !== "SessionEnd");
    expect(run.calls.map((c) => gist(c.input))).toEqual(expected.map(gist));
  });

  it("give each tool result as the hook received it: the structured response, or the failure's error", () => {
    const post = (name: string) => (c: { input: Record<string, unknown> }) =>
      c.input.hook_event_name === name;
    expect(run.calls.filter(post("PostToolUse")).map((c) => c.input.tool_response)).toEqual(
      sent.filter((h) => h.hook_event_name === "PostToolUse").map((h) => h.tool_response),
    );
    expect(run.calls.find(post("PostToolUseFailure"))?.input.error).toBe("Exit code 1\nError: boom");
    expect(run.calls.find(post("Stop"))?.input.last_assistant_message).toBe("Done.");
    expect(
      run.calls.every((c) => c.input.prompt_id === undefined || c.input.prompt_id === sent[1]?.prompt_id),
    ).toBe(true);
  });

  it("hand each model call's usage to the first hook after it that reads the transcript, once", () => {
    const usage = run.calls.flatMap((c) => (c.usage ?? []).map((u) => [c.input.hook_event_name, u.id]));
    expect(usage.map(([, id]) => id)).toEqual([
      "msg_fake_1/req_msg_fake_1",
      "msg_fake_2/req_msg_fake_2",
      "msg_fake_3/req_msg_fake_3",
      "msg_fake_4/req_msg_fake_4",
    ]);
    expect(usage.every(([hook]) => hook !== "PreToolUse")).toBe(true);
    expect(run.calls.flatMap((c) => c.usage ?? [])[0]).toMatchObject({
      model: "claude-opus-5-5",
      input: 1000,
      output: 50,
      cacheRead: 300,
    });
  });

  it("carry the transcript's times, never going back", () => {
    const times = run.calls.map((c) => c.at);
    expect(times[0]).toBe(Date.parse("2026-11-23T09:04:16.358Z"));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });
});

describe("Codex CLI rollouts", () => {
  const run = readLog(join(fixtures, "codex-0.169.0.jsonl"));
  const sent = hooksOf("codex-0.169.0.hooks.jsonl");

  it("are read as the hook calls Codex made: the same tools, inputs, call ids and turns", () => {
    expect(run).toMatchObject({ agent: "codex", format: "codex-rollout", id: sent[0]?.session_id });
    expect(run.calls.map((c) => gist(c.input))).toEqual(sent.map(gist));
    expect(run.calls.slice(1).every((c) => c.input.turn_id === sent[1]?.turn_id)).toBe(true);
  });

  it("give a shell call's result with the exit code the rollout recorded, which Codex's hook leaves out", () => {
    const posts = run.calls.filter((c) => c.input.hook_event_name === "PostToolUse");
    expect(sent.find((h) => h.hook_event_name === "PostToolUse")?.tool_response).toBe("Error: boom\n");
    expect(posts[0]?.input.tool_response).toMatch(/Process exited with code 1\n[\s\S]*Error: boom/);
    expect(posts[1]?.input.tool_response).toMatch(/Process exited with code 0\n[\s\S]*hi/);
  });

  it("give each response's usage once, input net of cached tokens", () => {
    const usage = run.calls.flatMap((c) => c.usage ?? []);
    expect(usage.map((u) => u.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => `resp_fake_${n}`));
    expect(usage[0]).toMatchObject({ input: 900, output: 40, cacheRead: 0, model: "fake-model" });
  });
});

describe("mini-swe-agent trajectories", () => {
  const run = readLog(join(fixtures, "mini-swe-agent.traj.json"));
  const hooks = run.calls.map((c) => c.input.hook_event_name);

  it("are read as Claude Code would have reported the same work: Bash calls with their real outcomes", () => {
    expect(run).toMatchObject({ id: "demo__demo-1", agent: "claude", format: "mini-swe-agent" });
    expect(hooks).toEqual([
      "SessionStart",
      "UserPromptSubmit",
      "PreToolUse",
      "PostToolUse",
      "PreToolUse",
      "PostToolUseFailure",
      "PreToolUse",
      "PostToolUse",
      "PreToolUse",
      "PostToolUseFailure",
      "Stop",
    ]);
    expect(run.calls[3]?.input.tool_response).toMatchObject({ stdout: "slug.py\n" });
    expect(run.calls[5]?.input.error).toBe(
      "Exit code 1\nFAILED tests/test_slug.py::test_lower - AssertionError\n1 failed, 3 passed in 0.05s\n",
    );
    expect(run.calls[9]?.input).toMatchObject({
      error: "Command timed out\nlistening on 8000\n",
      is_interrupt: true,
    });
  });

  it("skip a step whose message held no single command, and end at the submit command", () => {
    const commands = run.calls.flatMap((c) =>
      c.input.hook_event_name === "PreToolUse" ? [(c.input.tool_input as { command: string }).command] : [],
    );
    expect(commands).toEqual([
      "ls src",
      "cd /testbed && python -m pytest tests/test_slug.py -q",
      "sed -i 's/return s/return s.lower()/' src/slug.py",
      "./run_server.sh",
    ]);
    expect(String(run.calls.at(-1)?.input.last_assistant_message)).toContain("COMPLETE_TASK_AND_SUBMIT");
  });

  it("price each model call by the cost it reports, input net of cached tokens, seconds as ms", () => {
    const usage = run.calls.flatMap((c) => c.usage ?? []);
    expect(usage.map((u) => u.id)).toEqual(["gen-1", "gen-2", "gen-3", "gen-4", "gen-5", "gen-6"]);
    expect(usage[1]).toMatchObject({ input: 500, cacheRead: 1000, output: 120, costUsd: 0.003 });
    expect(run.calls[2]?.at).toBe(1763500000 * 1000);
  });
});

describe("finding and reading log files", () => {
  it("reads a gzipped log and names the run after the file when the log does not", () => {
    const dir = mkdtempSync(join(tmpdir(), "reins-logs-"));
    const text = readFileSync(join(fixtures, "mini-swe-agent.traj.json"), "utf8").replace(
      '"instance_id": "demo__demo-1",',
      "",
    );
    writeFileSync(join(dir, "pkg__pkg-7.traj.json.gz"), gzipSync(text));
    writeFileSync(join(dir, "notes.txt"), "not a log");
    expect(logFiles(dir)).toEqual([join(dir, "pkg__pkg-7.traj.json.gz")]);
    expect(readLog(join(dir, "pkg__pkg-7.traj.json.gz")).id).toBe("pkg__pkg-7");
  });

  it("refuses a file that is no log it reads, naming it, in one line", () => {
    const dir = mkdtempSync(join(tmpdir(), "reins-logs-"));
    for (const [name, text] of [
      ["a.json", '{"__proto__": {"polluted": true}, "messages": 3}'],
      ["b.jsonl", "{not json\n[1,2]\n"],
      ["c.json", ""],
    ] as const) {
      writeFileSync(join(dir, name), text);
      expect(() => readLog(join(dir, name))).toThrow(
        new RegExp(`^${join(dir, name)}: not a log reins reads`),
      );
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // A file close to a format names what it lacks.
    writeFileSync(join(dir, "e.traj"), '{"trajectory": [{"thought": "hm"}], "history": []}');
    expect(() => readLog(join(dir, "e.traj"))).toThrow(
      /not a log reins reads \(.*\): as a SWE-agent trajectory, trajectory\[0\] has no `action` or `observation`$/,
    );
    writeFileSync(join(dir, "g.traj"), '{"history": [{"role": "user", "content": "fix it"}]}');
    expect(() => readLog(join(dir, "g.traj"))).toThrow(/: as a SWE-agent trajectory, no `trajectory` list$/);
    writeFileSync(join(dir, "f.json"), '{"messages": [], "info": {}}');
    expect(() => readLog(join(dir, "f.json"))).toThrow(/no `trajectory_format` or `info.mini_version`/);
    expect(() => readLog(join(dir, "missing.jsonl"))).toThrow(/^cannot read .*missing\.jsonl: ENOENT$/);
    writeFileSync(join(dir, "d.json.gz"), Buffer.from([0x1f, 0x8b, 0x6e, 0x6f, 0x74]));
    expect(() => readLog(join(dir, "d.json.gz"))).toThrow(/d\.json\.gz: not a readable gzip file/);
  });
});

/** The real runs of ../shared/corpus (third-party data, never copied here), when this checkout has them. */
const corpus = join(
  import.meta.dirname,
  "..",
  "..",
  "..",
  "..",
  "shared",
  "corpus",
  "mini-swe-agent-gemini-3-pro",
);

describe.skipIf(!existsSync(corpus))("a sample of the real corpus (mini-swe-agent, gemini-3-pro)", () => {
  // Listed when a test runs, not when the file is collected: without the corpus the tests are skipped.
  const sampleOf = () =>
    logFiles(corpus)
      .filter((f) => f.endsWith(".traj.json.gz"))
      .filter((_, i) => i % 25 === 0);

  it("reads every sampled run into hook calls: a start, a prompt, each command with its outcome, the submit", () => {
    const sample = sampleOf();
    expect(sample.length).toBe(20);
    for (const file of sample) {
      const run = readLog(file);
      const hooks = run.calls.map((c) => c.input.hook_event_name);
      expect(hooks.slice(0, 2), file).toEqual(["SessionStart", "UserPromptSubmit"]);
      expect(hooks.at(-1), file).toBe("Stop");
      const pre = hooks.filter((h) => h === "PreToolUse").length;
      const post = hooks.filter((h) => h === "PostToolUse" || h === "PostToolUseFailure").length;
      expect(post, file).toBe(pre);
      expect(run.calls.flatMap((c) => c.usage ?? []).length, file).toBeGreaterThanOrEqual(pre);
    }
  });

  it("replays every sampled run through the Claude Code adapter without a refused input", () => {
    for (const file of sampleOf()) {
      const replayed = replayRun(readLog(file), defaultPolicy);
      expect(
        replayed.calls.filter((c) => c.invalid !== undefined),
        file,
      ).toEqual([]);
      expect(replayed.state?.budget.session.spent.tokens, file).toBeGreaterThan(0);
    }
  });
});
