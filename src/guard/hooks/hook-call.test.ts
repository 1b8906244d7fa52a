import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ReinsEvent } from "../../base/core/reins-event.js";
import { defaultPolicy, type Policy } from "../../base/core/policy.js";
import type { Store } from "../../base/core/store.js";
import { ReinsError } from "../../base/core/errors.js";
import { MemoryStore } from "../../base/store/memory.js";
import { Spool } from "../../base/store/spool.js";
import { HOOK_AGENTS } from "./hook-agents.js";
import { answerHook, runHook, type HookServices } from "./hook-call.js";
import { TranscriptReader } from "./transcript.js";

/**
 * A hook call reads the agent's transcript from where the last call stopped. That place moves on only once
 * the call's events are in the store or the spool: a call that dies in between (a daemon killed, a store
 * refusing) must leave the usage it read for the next call, and a cursor that cannot be saved (a full disk)
 * must never cost the call itself.
 */

const claude = HOOK_AGENTS.claude!;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The transcript line of assistant message `n`, which asks for a tool call and used those tokens. */
function assistantLine(n: number, input: number, output: number): string {
  return `${JSON.stringify({
    type: "assistant",
    message: {
      id: `msg_${n}`,
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [{ type: "tool_use", id: `toolu_${n}`, name: "Bash", input: { command: "ls" } }],
      usage: { input_tokens: input, output_tokens: output },
    },
    requestId: `req_${n}`,
  })}\n`;
}

/** A project folder (removed after the tests) with a transcript of one message of 1,234 + 56 tokens. */
function project() {
  const dir = mkdtempSync(join(tmpdir(), "reins-hook-call-"));
  dirs.push(dir);
  const transcript = join(dir, "session.jsonl");
  writeFileSync(transcript, assistantLine(1, 1_234, 56));
  return { dir, transcript };
}

/** A PostToolUse, where Claude Code's hooks read the transcript's new usage. */
const postToolUse = (transcript: string, id: string) => ({
  session_id: "s1",
  transcript_path: transcript,
  cwd: "/tmp",
  hook_event_name: "PostToolUse",
  tool_name: "Bash",
  tool_input: { command: `echo ${id}` },
  tool_response: { stdout: id, stderr: "", interrupted: false },
  tool_use_id: id,
});

function services(dir: string, store: Store, cursors = join(dir, "cursors")): HookServices {
  return {
    root: dir,
    policy: defaultPolicy,
    store,
    spool: new Spool(join(dir, "spool")),
    transcripts: new TranscriptReader(cursors),
  };
}

/** A store that fails every append and read with `error`. */
class Failing extends MemoryStore {
  constructor(readonly error: Error) {
    super();
  }
  override append(_scope: string, _events: readonly ReinsEvent[], _policy: Policy): never {
    throw this.error;
  }
  override state(): never {
    throw this.error;
  }
}

const tokensOf = async (store: Store) => (await store.state("session:s1"))?.budget.session.spent.tokens ?? 0;

describe("the transcript cursor", () => {
  it("stays where it was when the call's events were neither stored nor spooled", async () => {
    const { dir, transcript } = project();
    const dying = services(dir, new Failing(new Error("the daemon was killed")));
    await expect(answerHook(claude, postToolUse(transcript, "t1"), dying, 1_000)).rejects.toThrow(/killed/);

    // The store is down and the spool cannot be written: nothing of the call was kept.
    writeFileSync(join(dir, "spool"), "a file where the spool's folder should be");
    const down = services(dir, new Failing(new ReinsError("store_unavailable", "down")));
    const unkept = await answerHook(claude, postToolUse(transcript, "t2"), down, 2_000);
    expect(unkept.warning).toMatch(/could not be kept/);
    rmSync(join(dir, "spool"));

    const store = new MemoryStore();
    await answerHook(claude, postToolUse(transcript, "t3"), services(dir, store), 3_000);
    expect(await tokensOf(store)).toBe(1_234 + 56);
  });

  it("moves on once the events are spooled, so they are counted once", async () => {
    const { dir, transcript } = project();
    const down = services(dir, new Failing(new ReinsError("store_unavailable", "down")));
    const spooled = await answerHook(claude, postToolUse(transcript, "t1"), down, 1_000);
    expect(spooled.warning).toMatch(/kept in/);
    const store = new MemoryStore();
    await answerHook(claude, postToolUse(transcript, "t2"), services(dir, store), 2_000);
    expect(await tokensOf(store)).toBe(1_234 + 56);
    expect(new Spool(join(dir, "spool")).files()).toEqual([]);
  });

  it("that cannot be saved costs nothing but a re-read: the call is recorded all the same", async () => {
    const { dir, transcript } = project();
    const blocked = join(dir, "not-a-folder");
    writeFileSync(blocked, "");
    const store = new MemoryStore();
    const answered = await answerHook(
      claude,
      postToolUse(transcript, "t1"),
      services(dir, store, blocked),
      1_000,
    );
    expect(answered.warning).toBe("");
    expect(await tokensOf(store)).toBe(1_234 + 56);
    // The next call reads the transcript from its start again (it has a new message too): the first
    // message is counted once by its ids, and the new one is counted.
    appendFileSync(transcript, assistantLine(2, 700, 8));
    await answerHook(claude, postToolUse(transcript, "t2"), services(dir, store, blocked), 2_000);
    expect(await tokensOf(store)).toBe(1_234 + 56 + 700 + 8);
    const usage = (await store.events("session:s1")).filter((r) => r.event.kind === "usage.recorded");
    expect(usage).toHaveLength(2);
  });
});

describe("a store that is down", () => {
  it("still gets a prompt's events spooled: the state read for the reply does not stop them", async () => {
    const { dir, transcript } = project();
    const down = services(dir, new Failing(new ReinsError("store_unavailable", "down")));
    const prompt = {
      session_id: "s1",
      transcript_path: transcript,
      cwd: "/tmp",
      hook_event_name: "UserPromptSubmit",
      prompt: "fix the tests",
      prompt_id: "p1",
    };
    const answered = await answerHook(claude, prompt, down, 1_000);
    expect(answered.warning).toMatch(
      /store unavailable \(down\); allowing without guards; \d+ event\(s\) kept in/,
    );
    const kinds = new Spool(join(dir, "spool"))
      .files()
      .flatMap(
        (f) => (JSON.parse(readFileSync(join(dir, "spool", f), "utf8")) as { events: ReinsEvent[] }).events,
      )
      .map((e) => e.kind);
    expect(kinds).toContain("task.started");
  });
});

describe("a refused done inside an iteration reins run drives", () => {
  it("names the plan's checks that will judge the task, not the project's usual tests", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reins-plan-checks-"));
    dirs.push(dir);
    mkdirSync(join(dir, ".git"));
    writeFileSync(join(dir, "reins.config.json"), "{}");
    const call = (input: object, env: NodeJS.ProcessEnv, session = "s-plan") =>
      runHook("claude", Buffer.from(JSON.stringify({ session_id: session, cwd: dir, ...input })), env, dir);
    const edit = {
      hook_event_name: "PostToolUse",
      tool_name: "Write",
      tool_input: { file_path: join(dir, "calc.py"), content: "def add(a, b):\n    return a + b\n" },
      tool_response: { filePath: join(dir, "calc.py") },
    };
    const stop = { hook_event_name: "Stop", stop_hook_active: false, last_assistant_message: "done" };
    const driven = { REINS_PLAN_CHECKS: JSON.stringify(["python -m pytest -q tests", "ruff check ."]) };
    await call(edit, driven);
    expect((await call(stop, driven)).reply).toEqual({
      decision: "block",
      reason:
        "reins: Not done yet: tests has not run (run `python -m pytest -q tests && ruff check .`). Claim completion again once it passes.",
    });
    // Anything but a list of commands is no plan's: the usual advice stands.
    for (const [n, bad] of ['"pytest"', "[]", "[1]", '["a\\nb"]', "not json"].entries()) {
      await call(edit, { REINS_PLAN_CHECKS: bad }, `s-bad-${n}`);
      const answer = await call(stop, { REINS_PLAN_CHECKS: bad }, `s-bad-${n}`);
      const reason = (answer.reply as { reason?: string } | null)?.reason;
      expect(reason, bad).toContain("tests has not run (run the project's tests)");
    }
  });
});
