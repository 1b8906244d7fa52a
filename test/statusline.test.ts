import { spawnSync } from "node:child_process";
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
import { memoryIo } from "../src/cli/io.js";
import { run } from "../src/cli/run.js";
import { runHook } from "../src/guard/hooks/hook-call.js";
import { recorded } from "#test/e2e-project.js";
import { cleanEnv, reinsBin } from "#test/processes.js";

/**
 * `reins statusline` as Claude Code runs it on every render (its JSON on stdin, the bin as installed), and
 * `reins init claude` putting it in the settings, around a status line of the user's own or not.
 */

let dir: string;
let project: string;
let home: string;

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "reins-statusline-")));
  project = join(dir, "project");
  home = join(dir, "home");
  mkdirSync(project);
  mkdirSync(home);
  writeFileSync(join(project, "reins.config.json"), "{}");
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const call = (event: string, extra: object = {}) =>
  Buffer.from(JSON.stringify({ session_id: "s1", hook_event_name: event, cwd: project, ...extra }));

/** A session of five identical Bash calls, recorded through the in-process hook: its breaker opens. */
async function loopedSession(): Promise<void> {
  const env = { HOME: home };
  await runHook("claude", call("SessionStart", { source: "startup" }), env, project);
  for (let i = 0; i < 5; i++) {
    const tool = { tool_name: "Bash", tool_input: { command: "node fail.js" }, tool_use_id: `t${i}` };
    await runHook("claude", call("PreToolUse", tool), env, project);
    await runHook("claude", call("PostToolUseFailure", { ...tool, error: "exit 1" }), env, project);
  }
  const { state } = await recorded(project, "s1");
  expect(state?.breaker.status).toBe("open");
}

function statusline(input: object, env: Record<string, string> = {}, args: string[] = []): string {
  const result = spawnSync(process.execPath, [reinsBin, "statusline", ...args], {
    cwd: home,
    env: cleanEnv(home, env),
    input: JSON.stringify(input),
    encoding: "utf8",
    timeout: 30_000,
  });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout;
}

const claudeInput = {
  session_id: "s1",
  cwd: "/elsewhere",
  workspace: { current_dir: "/elsewhere" },
  model: { id: "claude-x", display_name: "X" },
  cost: { total_cost_usd: 0.5 },
};

describe("reins statusline fed Claude Code's JSON", () => {
  it("prints the session's line from the project's store: spend, breaker, containment", async () => {
    await loopedSession();
    const input = { ...claudeInput, workspace: { current_dir: project, project_dir: project } };
    expect(statusline(input)).toBe("reins · 0/500k tokens (0%) · $0.50 · breaker OPEN · NOT CONTAINED\n");
  });

  it("names the task of the reins run driving the session, and runs the user's own line first", async () => {
    await loopedSession();
    const input = { ...claudeInput, workspace: { project_dir: project } };
    const mine = Buffer.from("echo mine; echo second line").toString("base64");
    expect(statusline(input, { REINS_TASK: "t3", REINS_ATTEMPT: "1" }, ["--compose", mine])).toBe(
      "mine │ reins · 0/500k tokens (0%) · $0.50 · breaker OPEN · task t3 (attempt 1) · NOT CONTAINED\n",
    );
  });

  it("says nothing is recorded for a new session, and that a folder in no project is not guarded", () => {
    expect(statusline({ ...claudeInput, session_id: "new", workspace: { project_dir: project } })).toMatch(
      /^reins · guarding, nothing recorded yet · NOT CONTAINED\n$/,
    );
    expect(statusline({ ...claudeInput, workspace: { project_dir: dir } })).toBe(
      "reins: not guarding (no git repository here)\n",
    );
    expect(statusline({})).toMatch(/^reins/);
  });
});

type Settings = { statusLine?: { type: string; command: string; padding?: number } };
/** A settings file, or {} once reins removed the file it had made. */
const read = (file: string): Settings =>
  existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Settings) : {};

async function init(...args: string[]): Promise<string> {
  const io = memoryIo({ cwd: project, env: { HOME: home } });
  expect(await run(["init", "claude", "--no-contain", "--in-process", ...args], io), io.err.join("")).toBe(0);
  return io.out.join("");
}

describe("reins init claude and the status line", () => {
  const local = () => join(project, ".claude", "settings.local.json");
  const user = () => join(home, ".claude", "settings.json");

  it("adds reins' status line when there is none, and takes it out on --uninstall", async () => {
    expect(await init()).toContain("added reins' status line");
    expect(read(local()).statusLine).toEqual({
      type: "command",
      command: `"${process.execPath}" "${reinsBin}" statusline`,
    });
    expect(await init("--uninstall")).toContain("removed reins' status line");
    expect(read(local()).statusLine).toBeUndefined();
  });

  it("leaves the user's own status line and says how to compose; compose wraps it, uninstall restores", async () => {
    mkdirSync(join(home, ".claude"));
    writeFileSync(
      user(),
      JSON.stringify({ statusLine: { type: "command", command: "echo mine", padding: 1 } }),
    );
    expect(await init()).toContain("--statusline compose");
    expect(read(local()).statusLine).toBeUndefined();
    expect(await init("--statusline", "compose")).toContain("runs yours first");
    const composed = read(local()).statusLine!;
    expect(composed.padding).toBe(1);
    expect(composed.command).toBe(
      `"${process.execPath}" "${reinsBin}" statusline --compose ${Buffer.from("echo mine").toString("base64")}`,
    );
    await init("--uninstall");
    expect(read(local()).statusLine).toBeUndefined();
    expect(read(user()).statusLine).toEqual({ type: "command", command: "echo mine", padding: 1 });
  });

  it("composed over a status line in the same file, puts it back there on --uninstall", async () => {
    mkdirSync(join(project, ".claude"));
    writeFileSync(local(), JSON.stringify({ statusLine: { type: "command", command: "~/line.sh" } }));
    await init("--statusline", "compose");
    expect(read(local()).statusLine?.command).toContain("statusline --compose");
    expect(await init("--uninstall")).toContain("put your status line back");
    expect(read(local()).statusLine).toEqual({ type: "command", command: "~/line.sh" });
  });

  it("--user: in the user's settings, composed over theirs and restored", async () => {
    mkdirSync(join(home, ".claude"));
    writeFileSync(user(), JSON.stringify({ statusLine: { type: "command", command: "echo mine" } }));
    const io = memoryIo({ cwd: project, env: { HOME: home } });
    const args = ["init", "--user", "claude", "--no-contain", "--statusline", "compose"];
    expect(await run(args, io), io.err.join("")).toBe(0);
    expect(read(user()).statusLine?.command).toContain("statusline --compose");
    expect(
      await run(["init", "--user", "claude", "--uninstall"], memoryIo({ cwd: project, env: { HOME: home } })),
    ).toBe(0);
    expect(read(user()).statusLine).toEqual({ type: "command", command: "echo mine" });
  });
});
