/**
 * A typo in reins.config.json (`"sesion"` for `"session"`) never switches guarding off: through the bundled
 * `reins hook claude` command agents run, through the user's hook daemon, and through the real Claude Code
 * CLI against a scripted model. A loop of one failing command is still denied by its 6th call, the session
 * is recorded, and the model is told of the error at the session's start and with the deny.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { REINS_BIN } from "../src/base/config/package-info.js";
import { startHookDaemon } from "../src/guard/daemon/hook-daemon.js";
import { daemonCall } from "#test/daemon-call.js";
import { hookSecret } from "../src/base/config/hook-secret.js";
import { claudeUnavailableReason, runClaude } from "#test/claude-code.js";
import { e2eProject, failJs, initReins, recorded, removeE2eProject } from "#test/e2e-project.js";
import {
  lastToolResults,
  startFakeAnthropic,
  lastSystemTexts,
  type FakeAnthropic,
} from "#test/fake-anthropic.js";

const repo = join(import.meta.dirname, "..");

/** The config of the issue: the session's budget meant, `session` misspelt. */
const TYPO = '{\n  "budget": {\n    "sesion": { "tokens": 50000 }\n  }\n}\n';

/** What the model must be told, at a turn's start and with every deny. */
const SAID =
  'reins config error: reins.config.json:3:5: unknown key "sesion" in budget (did you mean "session"?); reins is guarding with the defaults for it';

let root: string;
let project: string;
let home: string;

beforeEach(() => {
  ({ root, project, home } = e2eProject("config-error", { "fail.js": failJs }));
  writeFileSync(join(project, "reins.config.json"), TYPO);
});

afterEach(async () => {
  await removeE2eProject(root);
});

/** The hook inputs of one Claude Code session: its start, a prompt, and `calls` identical failing Bash calls. */
function session(id: string, calls: number): Record<string, unknown>[] {
  const base = { session_id: id, cwd: project };
  const bash = { ...base, tool_name: "Bash", tool_input: { command: "node fail.js" } };
  const inputs: Record<string, unknown>[] = [
    { ...base, hook_event_name: "SessionStart", source: "startup" },
    { ...base, hook_event_name: "UserPromptSubmit", prompt: "Migrate the database.", prompt_id: "p1" },
  ];
  for (let i = 0; i < calls; i++)
    inputs.push(
      { ...bash, hook_event_name: "PreToolUse", tool_use_id: `t${i}` },
      {
        ...bash,
        hook_event_name: "PostToolUseFailure",
        tool_use_id: `t${i}`,
        error: "Exit code 1\nError: connect ECONNREFUSED 127.0.0.1:5432",
      },
    );
  return inputs;
}

interface Reply {
  hookSpecificOutput?: {
    additionalContext?: string;
    permissionDecision?: string;
    permissionDecisionReason?: string;
  };
}

/** What a session's replies showed: the start's and the prompt's context, and the PreToolUse replies in order. */
function summarise(inputs: Record<string, unknown>[], replies: (Reply | null)[]) {
  const pre = replies.filter((_, i) => inputs[i]?.hook_event_name === "PreToolUse");
  return {
    start: replies[0]?.hookSpecificOutput?.additionalContext ?? "",
    prompt: replies[1]?.hookSpecificOutput?.additionalContext ?? "",
    pre,
    firstDeny: pre.findIndex((r) => r?.hookSpecificOutput?.permissionDecision === "deny"),
  };
}

/** Where the hook commands of these tests keep their compiled code (not the user's ~/.cache). */
const codeCache = mkdtempSync(join(tmpdir(), "reins-code-cache-"));
afterAll(() => rmSync(codeCache, { recursive: true, force: true }));

describe("a misspelt key in reins.config.json", () => {
  it("keeps the bundled `reins hook claude` guarding: the loop is denied by its 6th call, and the model told why", async () => {
    const inputs = session("typo-in-process", 6);
    const replies: (Reply | null)[] = [];
    for (const input of inputs) {
      const hook = spawnSync(process.execPath, [join(repo, "bin", "reins.js"), "hook", "claude"], {
        input: JSON.stringify(input),
        cwd: project,
        env: { ...process.env, HOME: home, XDG_CACHE_HOME: codeCache },
        encoding: "utf8",
      });
      // Nothing "allowed without guarding" on stderr: the hook answered with the policy.
      expect(hook).toMatchObject({ status: 0, stderr: "" });
      replies.push(hook.stdout.trim() === "" ? null : (JSON.parse(hook.stdout) as Reply));
    }
    const { start, prompt, pre, firstDeny } = summarise(inputs, replies);
    expect(start).toContain(SAID);
    expect(prompt).toContain(SAID);
    // An allowed tool call says nothing: the notices go with a turn's start and a deny only.
    expect(pre[0]).toBeNull();
    expect(firstDeny).toBeGreaterThanOrEqual(0);
    expect(firstDeny).toBeLessThan(6);
    const reason = pre[firstDeny]?.hookSpecificOutput?.permissionDecisionReason ?? "";
    expect(reason).toMatch(/^reins: The same Bash call `node fail\.js` was made \d times in a row/);
    expect(reason).toContain(SAID);

    // The session is recorded, under the defaults for the misspelt part.
    const { log, state } = await recorded(project, "typo-in-process");
    expect(log.map((r) => r.event.kind)).toContain("session.started");
    expect(log.filter((r) => r.event.kind === "tool.requested")).toHaveLength(6);
    expect(state?.breaker.status).toBe("open");
  });

  it("keeps the user's hook daemon guarding, and it follows the config once fixed", async () => {
    const runtime = realpathSync(mkdtempSync(join(tmpdir(), "reins-rt-")));
    const socket = join(runtime, "config.sock");
    const started = await startHookDaemon({ socket, bin: REINS_BIN, version: "test" });
    if (started.kind !== "listening") throw new Error("another daemon answers");
    const secret = hookSecret(project);
    try {
      const inputs = session("typo-daemon", 6);
      const replies: (Reply | null)[] = [];
      for (const input of inputs) {
        const { status, json } = await call(socket, input, project, secret);
        expect(status).toBe(200);
        replies.push(Object.keys(json).length === 0 ? null : json);
      }
      const { start, prompt, pre, firstDeny } = summarise(inputs, replies);
      expect(start).toContain(SAID);
      expect(prompt).toContain(SAID);
      expect(firstDeny).toBeGreaterThanOrEqual(0);
      expect(firstDeny).toBeLessThan(6);
      expect(pre[firstDeny]?.hookSpecificOutput?.permissionDecisionReason).toContain(SAID);
      expect((await recorded(project, "typo-daemon")).state?.breaker.status).toBe("open");

      // Fixed, the next session's start says nothing of it.
      writeFileSync(join(project, "reins.config.json"), '{ "budget": { "session": { "tokens": 50000 } } }');
      const fixed = await call(socket, session("fixed-daemon", 0)[0], project, secret);
      expect(JSON.stringify(fixed.json)).not.toContain("reins config error");
    } finally {
      await started.daemon.close("test over");
      rmSync(runtime, { recursive: true, force: true });
    }
  });
});

/** One hook call over the daemon's socket, as reins' hook clients make it. */
const call = (socket: string, body: unknown, root: string, secret: string) =>
  daemonCall<Reply>(socket, body, { root, secret });

describe.skipIf(claudeUnavailableReason() !== null)("a misspelt key with the real Claude Code CLI", () => {
  let fake: FakeAnthropic | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  it("keeps the default install guarding: the model reads the error, and its loop is denied by the 6th call", async () => {
    await initReins({ project, home }, ["claude"]);
    // `reins init` leaves the config as the person wrote it.
    writeFileSync(join(project, "reins.config.json"), TYPO);
    fake = await startFakeAnthropic((_request, turn) =>
      turn < 7
        ? { toolUses: [{ name: "Bash", input: { command: "node fail.js", description: "migrate" } }] }
        : { text: "I am stuck; stopping." },
    );
    const result = await runClaude({
      cwd: project,
      home,
      prompt: "Migrate the database.",
      baseUrl: fake.url,
      maxTurns: 10,
      timeoutMs: 90_000,
    });
    expect(result.timedOut, result.stderr).toBe(false);
    expect(fake.errors).toEqual([]);

    const main = fake.mainRequests();
    // The session's start put the error in the model's context, after reins' status line.
    expect(lastSystemTexts(main[0]!).join("\n")).toContain(
      `SessionStart hook additional context: reins: session budget 0 of 500,000 tokens used (0%); circuit breaker closed.\n${SAID}`,
    );
    const results = main.map((r) => lastToolResults(r)[0]);
    const denied = results.findIndex(
      (r) => r?.text.startsWith("PreToolUse:Bash hook error: reins:") === true,
    );
    expect(denied).toBeGreaterThan(0);
    expect(denied).toBeLessThanOrEqual(6);
    // The calls before it ran, and failed for real.
    for (let i = 1; i < denied; i++) expect(results[i]?.text).toContain("ECONNREFUSED");
    expect(results[denied]?.text).toMatch(/The same Bash call `node fail\.js` was made \d times in a row/);
    expect(results[denied]?.text).toContain(SAID);

    const { log } = await recorded(project, result.json!.session_id);
    expect(log.map((r) => r.event.kind)).toContain("session.started");
  }, 120_000);
});
