import { spawn } from "node:child_process";
import { execFileSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SqliteStore } from "../src/store/sqlite.js";

/**
 * The in-process hook command (`reins hook claude`, what `reins init --in-process` installs) against
 * inputs that used to hang it: a FIFO as transcript_path, and an agent that writes its input and never
 * closes stdin. A hang fails the test by its timeout.
 */
const bin = join(import.meta.dirname, "..", "bin", "reins.js");

function project(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "reins-hook-faults-")));
  writeFileSync(join(dir, "reins.config.json"), "{}");
  return dir;
}

/** Runs the hook with `input` written to stdin, which is left open unless `close`. */
function hook(
  cwd: string,
  input: string,
  close: boolean,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, "hook", "claude"], { cwd, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.write(input);
    if (close) child.stdin.end();
  });
}

describe("the in-process hook on inputs that used to hang it", () => {
  it("answers an agent that writes its input and keeps stdin open", async () => {
    const dir = project();
    const input = JSON.stringify({ session_id: "s1", hook_event_name: "SessionStart", cwd: dir });
    const result = await hook(dir, `${input}\n`, false);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("reins: session budget");
    // What the hook made is its owner's alone, and git never stages it.
    expect(statSync(join(dir, ".reins", "reins.db")).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, ".reins")).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(dir, ".reins", ".gitignore"), "utf8")).toMatch(/^\*$/m);
  }, 20_000);

  it("answers when transcript_path is a FIFO nobody writes to", async () => {
    const dir = project();
    const fifo = join(dir, "transcript.jsonl");
    execFileSync("mkfifo", [fifo]);
    const base = { session_id: "s2", cwd: dir, transcript_path: fifo, prompt_id: "p" };
    const result = await hook(
      dir,
      JSON.stringify({ ...base, hook_event_name: "UserPromptSubmit", prompt: "go" }),
      true,
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("reins: session budget");
  }, 20_000);
});

describe("the in-process hook when the store cannot be opened", () => {
  const pre = (dir: string, n: number) =>
    JSON.stringify({
      session_id: "s3",
      hook_event_name: "PreToolUse",
      cwd: dir,
      tool_name: "Bash",
      tool_input: { command: `echo ${n}` },
      tool_use_id: `t${n}`,
    });

  /** A project whose SQLite file is not a database. */
  function corrupt(policy: object = {}): string {
    const dir = project();
    writeFileSync(join(dir, "reins.config.json"), JSON.stringify(policy));
    mkdirSync(join(dir, ".reins"), { recursive: true });
    writeFileSync(join(dir, ".reins", "reins.db"), "this is not a database ".repeat(400));
    return dir;
  }

  it("allows with one line saying why, and keeps the events in the spool", async () => {
    const dir = corrupt();
    const result = await hook(dir, pre(dir, 1), true);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(
      /^reins: store unavailable \(.*reins\.db is not a reins database.*\); allowing without guards; 1 event\(s\) kept in .*spool\n$/,
    );
    expect(readdirSync(join(dir, ".reins", "spool")).filter((f) => f.endsWith(".json"))).toHaveLength(1);
  }, 20_000);

  it("denies the call when the policy fails closed", async () => {
    const dir = corrupt({ failClosed: true });
    const result = await hook(dir, pre(dir, 2), true);
    expect(JSON.parse(result.stdout)).toMatchObject({
      hookSpecificOutput: {
        permissionDecision: "deny",
        permissionDecisionReason: expect.stringMatching(/failClosed is set/) as unknown,
      },
    });
    expect(readdirSync(join(dir, ".reins", "spool")).filter((f) => f.endsWith(".json"))).toHaveLength(1);
  }, 20_000);

  it("answers the same for a Redis server that refuses", async () => {
    const dir = project();
    writeFileSync(
      join(dir, "reins.config.json"),
      JSON.stringify({ failClosed: true, store: "redis://127.0.0.1:1" }),
    );
    const result = await hook(dir, pre(dir, 3), true);
    expect(JSON.parse(result.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
    expect(readdirSync(join(dir, ".reins", "spool")).filter((f) => f.endsWith(".json"))).toHaveLength(1);
  }, 20_000);
});

describe("the in-process hook on absurd input", () => {
  it("guards a tool call nested 5,000 levels deep instead of failing open", async () => {
    const dir = project();
    const deep = `${"[".repeat(5_000)}${"]".repeat(5_000)}`;
    const input = `{"session_id":"s4","hook_event_name":"PreToolUse","cwd":${JSON.stringify(dir)},"tool_name":"Bash","tool_input":{"command":"ls","x":${deep}},"tool_use_id":"t1"}`;
    const result = await hook(dir, input, true);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    const store = new SqliteStore(join(dir, ".reins", "reins.db"));
    try {
      const log = await store.events("session:s4");
      expect(log.map((r) => r.event.kind)).toEqual(["tool.requested"]);
    } finally {
      await store.close();
    }
  }, 20_000);
});

describe("the project a hook records into", () => {
  it("stays the one the agent started in after a cd into a nested repository", async () => {
    const dir = project();
    const nested = join(dir, "vendor", "lib");
    mkdirSync(join(nested, ".git"), { recursive: true });
    const call = (n: number) =>
      JSON.stringify({
        session_id: "s5",
        hook_event_name: "PreToolUse",
        cwd: n === 0 ? dir : nested,
        tool_name: "Bash",
        tool_input: { command: `echo ${n}` },
        tool_use_id: `t${n}`,
      });
    for (const n of [0, 1]) {
      const child = spawn(process.execPath, [bin, "hook", "claude"], {
        cwd: dir,
        env: { ...process.env, CLAUDE_PROJECT_DIR: dir },
      });
      child.stdin.end(call(n));
      await new Promise((resolve) => child.on("close", resolve));
    }
    const store = new SqliteStore(join(dir, ".reins", "reins.db"));
    try {
      expect((await store.events("session:s5")).map((r) => r.event.kind)).toEqual([
        "tool.requested",
        "tool.requested",
      ]);
    } finally {
      await store.close();
    }
    expect(readdirSync(nested)).not.toContain(".reins");
  }, 20_000);
});

describe("the in-process hook on an input over 16 MiB", () => {
  it("judges the call without its content: a session whose budget is paused is denied", async () => {
    const dir = project();
    writeFileSync(join(dir, "reins.config.json"), JSON.stringify({ budget: { session: { toolCalls: 2 } } }));
    const small = (n: number) =>
      JSON.stringify({
        session_id: "s6",
        hook_event_name: "PreToolUse",
        cwd: dir,
        tool_name: "Bash",
        tool_input: { command: `echo ${n}` },
        tool_use_id: `t${n}`,
      });
    for (const n of [1, 2]) await hook(dir, small(n), true);
    const huge = `{"session_id":"s6","hook_event_name":"PreToolUse","cwd":${JSON.stringify(dir)},"tool_name":"Write","tool_use_id":"t3","tool_input":{"file_path":"big.txt","content":"${"x".repeat(17 * 1024 * 1024)}"}}`;
    const result = await hook(dir, huge, true);
    expect(result.stderr).toMatch(
      /^reins hook claude: input of \d+ bytes is over the 16777216-byte limit; judged without its content/,
    );
    expect(JSON.parse(result.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
  }, 30_000);
});
