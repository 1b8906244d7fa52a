import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteStore } from "../../base/store/sqlite.js";
import { opencodeOutcome, opencodeTool } from "./opencode.js";
import { runHook } from "./hook-call.js";

/**
 * The opencode / Kilo Code adapter against the calls reins' plugin makes (install/opencode-plugin.ts), each
 * through `runHook` as the daemon or `reins hook opencode` answers it, with the project's SQLite store.
 */

let project: string;
let calls = 0;
let session: string;

beforeEach(() => {
  project = realpathSync(mkdtempSync(join(tmpdir(), "reins-opencode-")));
  writeFileSync(join(project, "package.json"), JSON.stringify({ scripts: { test: "node test.js" } }));
  writeFileSync(join(project, "reins.config.json"), "{}");
  session = `ses_test${++calls}`;
});

afterEach(() => rmSync(project, { recursive: true, force: true }));

const hook = (agent: string, input: object) =>
  runHook(agent, Buffer.from(JSON.stringify({ session_id: session, cwd: project, ...input })), {}, project);

async function logOf() {
  const store = new SqliteStore(join(project, ".reins", "reins.db"));
  try {
    return await store.events(`session:${session}`);
  } finally {
    await store.close();
  }
}

describe("opencode's tools in reins' words", () => {
  it("reads bash as a shell command and write/edit as edits of their file", () => {
    expect(opencodeTool("bash", { command: "npm test", description: "x" })).toEqual({
      name: "Bash",
      input: { command: "npm test" },
    });
    expect(opencodeTool("edit", { filePath: "/p/a.js", oldString: "a", newString: "b" })).toEqual({
      name: "Edit",
      input: { file_path: "/p/a.js", old_string: "a", new_string: "b" },
    });
    expect(opencodeTool("glob", { pattern: "*" })).toEqual({ name: "glob", input: { pattern: "*" } });
  });

  it("reads bash's exit code from its metadata, and a killed command as a failure", () => {
    expect(opencodeOutcome("bash", { output: "ok", metadata: { exit: 0 } })).toMatchObject({
      failed: false,
      exitCode: 0,
    });
    expect(opencodeOutcome("bash", { output: "no", metadata: { exit: 2 } })).toMatchObject({
      failed: true,
      exitCode: 2,
    });
    expect(opencodeOutcome("bash", { output: "", metadata: { exit: null } }).failed).toBe(true);
    expect(opencodeOutcome("write", { output: "Wrote file", metadata: {} })).toMatchObject({ failed: false });
  });
});

describe.each(["opencode", "kilo"])("the %s adapter", (agent) => {
  it("opens the session with the agent's name and answers a prompt with the status line", async () => {
    expect((await hook(agent, { hook_event_name: "session.start" })).reply).toMatchObject({
      context: expect.stringContaining("reins") as unknown,
    });
    const prompt = await hook(agent, { hook_event_name: "prompt" });
    expect(prompt.reply).toMatchObject({
      context: expect.stringMatching(/^reins: session budget|reins is guarding/),
    });
    const log = await logOf();
    expect(log[0]?.event).toMatchObject({ kind: "session.started", agent });
  });

  it("denies the repeated failing command with the reason, in the plugin's form", async () => {
    const command = { tool_name: "bash", tool_input: { command: "ls /nope", description: "d" } };
    const failed = {
      ...command,
      tool_output: { output: "ls: cannot access '/nope'", metadata: { exit: 2 } },
    };
    let denied: unknown = null;
    for (let i = 0; i < 8 && denied === null; i++) {
      const before = await hook(agent, { hook_event_name: "tool.before", ...command });
      if (before.reply !== null && (before.reply as { decision?: string }).decision === "deny")
        denied = before.reply;
      else await hook(agent, { hook_event_name: "tool.after", ...failed });
    }
    expect(denied).toMatchObject({ decision: "deny", reason: expect.stringMatching(/^reins: /) as unknown });
  });

  it("counts one message's tokens once however often it is sent", async () => {
    const message = {
      id: "msg_1",
      tokens: { input: 100, output: 20, reasoning: 5, cache: { read: 30, write: 0 } },
      cost: 0.01,
      modelID: "m1",
    };
    await hook(agent, { hook_event_name: "usage", message });
    await hook(agent, { hook_event_name: "usage", message });
    const usage = (await logOf()).filter((r) => r.event.kind === "usage.recorded");
    expect(usage).toHaveLength(1);
    expect(usage[0]?.event).toMatchObject({
      inputTokens: 100,
      outputTokens: 25,
      cacheReadTokens: 30,
      costUsd: 0.01,
      pricing: "agent",
    });
  });

  it("refuses 'done' after an edit with no check, and allows it once the tests passed", async () => {
    const write = { tool_name: "write", tool_input: { filePath: join(project, "a.js"), content: "1\n" } };
    await hook(agent, { hook_event_name: "tool.before", ...write });
    await hook(agent, {
      hook_event_name: "tool.after",
      ...write,
      tool_output: { output: "Wrote", metadata: {} },
    });
    const refused = await hook(agent, { hook_event_name: "stop", last_message: "Done." });
    expect(refused.reply).toMatchObject({
      decision: "deny",
      reason: expect.stringContaining("npm test") as unknown,
    });
    const tests = { tool_name: "bash", tool_input: { command: "npm test" } };
    await hook(agent, { hook_event_name: "tool.before", ...tests });
    await hook(agent, {
      hook_event_name: "tool.after",
      ...tests,
      tool_output: { output: "Tests: 1 passed, 1 total", metadata: { exit: 0 } },
    });
    expect((await hook(agent, { hook_event_name: "stop", last_message: "Done." })).reply).toBeNull();
  });
});
