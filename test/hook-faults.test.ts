import { execFileSync, spawn } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../src/base/store/sqlite.js";
import { cleanEnv, finished, killGroup, reinsBin } from "#test/processes.js";

/**
 * The in-process hook command (`reins hook claude`, what `reins init --in-process` installs) against
 * inputs that used to hang it: a FIFO as transcript_path, and an agent that writes its input and never
 * closes stdin. A hook that hangs is killed, and the test fails.
 */

/** How long a hook may run before it is killed: its command-hook timeout in Claude Code (`timeout: 30`). */
const HOOK_TIMEOUT_MS = 30_000;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  dirs.push(dir);
  return dir;
}

/** The hooks' HOME (for reins' code cache): none of the developer's, shared by the file's hooks. */
const home = tempDir("reins-hook-faults-home-");

function project(): string {
  const dir = tempDir("reins-hook-faults-");
  writeFileSync(join(dir, "reins.config.json"), "{}");
  return dir;
}

/**
 * Runs the hook in `cwd` with `input` written to stdin, which is left open unless `close`, and nothing of
 * this process's environment (REINS_*, CLAUDE_PROJECT_DIR) but what is given in `env`. A hook that has not
 * exited on its own within the hook timeout is killed, and the call throws.
 */
async function hook(
  cwd: string,
  input: string,
  close: boolean,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [reinsBin, "hook", "claude"], {
    cwd,
    env: cleanEnv(home, env),
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  const done = finished(child);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid);
  }, HOOK_TIMEOUT_MS);
  child.stdin.on("error", () => undefined); // a hook that exits before reading all of a huge input
  child.stdin.write(input);
  if (close) child.stdin.end();
  const result = await done;
  clearTimeout(timer);
  child.stdin.destroy();
  if (timedOut) throw new Error(`the hook was killed after ${HOOK_TIMEOUT_MS} ms:\n${result.stderr}`);
  return result;
}

describe("the in-process hook on inputs that used to hang it", () => {
  it(
    "answers an agent that writes its input and keeps stdin open",
    async () => {
      const dir = project();
      const input = JSON.stringify({ session_id: "s1", hook_event_name: "SessionStart", cwd: dir });
      const result = await hook(dir, `${input}\n`, false);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("reins: session budget");
      // What the hook made is its owner's alone, and git never stages it.
      expect(statSync(join(dir, ".reins", "reins.db")).mode & 0o777).toBe(0o600);
      expect(statSync(join(dir, ".reins")).mode & 0o777).toBe(0o700);
      expect(readFileSync(join(dir, ".reins", ".gitignore"), "utf8")).toMatch(/^\*$/m);
    },
    HOOK_TIMEOUT_MS + 10_000,
  );

  it(
    "answers when transcript_path is a FIFO nobody writes to",
    async () => {
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
    },
    HOOK_TIMEOUT_MS + 10_000,
  );
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

  it(
    "allows with one line saying why, and keeps the events in the spool",
    async () => {
      const dir = corrupt();
      const result = await hook(dir, pre(dir, 1), true);
      expect(result.code).toBe(0);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(
        /^reins: store unavailable \(.*reins\.db is not a reins database.*\); allowing without guards; 1 event\(s\) kept in .*spool\n$/,
      );
      expect(readdirSync(join(dir, ".reins", "spool")).filter((f) => f.endsWith(".json"))).toHaveLength(1);
    },
    HOOK_TIMEOUT_MS + 10_000,
  );

  it(
    "denies the call when the policy fails closed",
    async () => {
      const dir = corrupt({ failClosed: true });
      const result = await hook(dir, pre(dir, 2), true);
      expect(JSON.parse(result.stdout)).toMatchObject({
        hookSpecificOutput: {
          permissionDecision: "deny",
          permissionDecisionReason: expect.stringMatching(/failClosed is set/) as unknown,
        },
      });
      expect(readdirSync(join(dir, ".reins", "spool")).filter((f) => f.endsWith(".json"))).toHaveLength(1);
    },
    HOOK_TIMEOUT_MS + 10_000,
  );

  it(
    "answers the same for a Redis server that refuses",
    async () => {
      const dir = project();
      writeFileSync(
        join(dir, "reins.config.json"),
        JSON.stringify({ failClosed: true, store: "redis://127.0.0.1:1" }),
      );
      const result = await hook(dir, pre(dir, 3), true);
      expect(JSON.parse(result.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
      expect(readdirSync(join(dir, ".reins", "spool")).filter((f) => f.endsWith(".json"))).toHaveLength(1);
    },
    HOOK_TIMEOUT_MS + 10_000,
  );
});

describe("the in-process hook on absurd input", () => {
  it(
    "guards a tool call nested 5,000 levels deep instead of failing open",
    async () => {
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
    },
    HOOK_TIMEOUT_MS + 10_000,
  );
});

describe("the project a hook records into", () => {
  it(
    "stays the one the agent started in after a cd into a nested repository",
    async () => {
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
        const result = await hook(dir, call(n), true, { CLAUDE_PROJECT_DIR: dir });
        expect([result.code, result.stderr]).toEqual([0, ""]);
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
    },
    HOOK_TIMEOUT_MS + 10_000,
  );
});

describe("the in-process hook on an input over 16 MiB", () => {
  it(
    "judges the call without its content: a session whose budget is paused is denied",
    async () => {
      const dir = project();
      writeFileSync(
        join(dir, "reins.config.json"),
        JSON.stringify({ budget: { session: { toolCalls: 2 } } }),
      );
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
    },
    3 * HOOK_TIMEOUT_MS + 10_000,
  );
});
