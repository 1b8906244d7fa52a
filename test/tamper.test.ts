/**
 * Tampering is loud (docs/tamper-detection.md): each way of switching reins off from the agent's shell
 * (the hook settings removed, emptied, edited, deleted through `find` or a symlink; the store's events
 * deleted; the store replaced) is performed for real by a shell, and the next turn's hook tells the model,
 * records a `guard.tampered` event, and `reins doctor` exits 1 naming it. An untampered project and a
 * `reins gc` say nothing of it.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { answerHook, openServices, readHookInput } from "../src/guard/hooks/hook-call.js";
import { SqliteStore } from "../src/base/store/sqlite.js";
import { e2eProject, removeE2eProject, type E2eProject } from "#test/e2e-project.js";
import { cleanEnv, reinsBin, runReins } from "#test/processes.js";
import { claudeUnavailableReason, runClaude } from "#test/claude-code.js";
import {
  lastToolResults,
  startFakeAnthropic,
  type FakeAnthropic,
  type Script,
} from "#test/fake-anthropic.js";
import { waitFor } from "#test/fault-redis.js";
import { listDaemons } from "../src/guard/daemon/list.js";

const projects: E2eProject[] = [];
afterEach(async () => {
  for (const p of projects.splice(0)) await removeE2eProject(p.root);
});

const hasPython = spawnSync("python3", ["-c", "import sqlite3"]).status === 0;

beforeAll(() => {
  expect(existsSync(join(reinsBin, "..", "..", "dist")), "run `npm run build` first").toBe(true);
});

/** A project set up with `reins init claude`, its user folders (HOME, state, runtime) inside the test's. */
function setUp(config = "{}") {
  const p = e2eProject("tamper");
  projects.push(p);
  writeFileSync(join(p.project, "reins.config.json"), config);
  execFileSync("git", ["init", "-q"], { cwd: p.project });
  const env = cleanEnv(p.home, {
    XDG_STATE_HOME: join(p.root, "state"),
    REINS_RUNTIME_DIR: join(p.root, "run"),
  });
  const init = runReins(["init", "claude"], { cwd: p.project, env });
  expect(init.status, init.stderr).toBe(0);
  return { ...p, env };
}

type Project = ReturnType<typeof setUp>;

/** One Claude Code hook call answered by `reins hook claude` in its own process: its reply's context. */
function hook(p: Project, input: Record<string, unknown>): string {
  const raw = JSON.stringify({ cwd: p.project, transcript_path: join(p.root, "none.jsonl"), ...input });
  const run = spawnSync(process.execPath, [reinsBin, "hook", "claude"], {
    cwd: p.project,
    env: p.env,
    input: raw,
    encoding: "utf8",
    timeout: 30_000,
  });
  expect(run.status, run.stderr).toBe(0);
  const reply = run.stdout.trim() === "" ? {} : (JSON.parse(run.stdout) as Record<string, unknown>);
  const specific = reply.hookSpecificOutput as { additionalContext?: string } | undefined;
  return specific?.additionalContext ?? "";
}

const sessionStart = (p: Project, session: string) =>
  hook(p, { session_id: session, hook_event_name: "SessionStart", source: "startup" });
const prompt = (p: Project, session: string, id: string) =>
  hook(p, { session_id: session, hook_event_name: "UserPromptSubmit", prompt_id: id, prompt: "go on" });

/** A few tool calls of `session`, answered in their own processes, as Claude Code's hooks would be. */
function work(p: Project, session: string, calls: number): void {
  for (let i = 0; i < calls; i++) {
    const call = {
      session_id: session,
      tool_name: "Bash",
      tool_use_id: `t${i}`,
      tool_input: { command: `echo ${i}` },
    };
    hook(p, { ...call, hook_event_name: "PreToolUse" });
    hook(p, { ...call, hook_event_name: "PostToolUse", tool_response: { stdout: `${i}\n`, exit_code: 0 } });
  }
}

/** A shell command run in the project, as the agent's Bash tool would. */
function sh(p: Project, command: string): void {
  execFileSync("sh", ["-c", command], { cwd: p.project, env: p.env, stdio: "pipe" });
}

function doctor(p: Project) {
  const run = runReins(["doctor", "--json"], { cwd: p.project, env: p.env });
  const report = JSON.parse(run.stdout) as { checks: { status: string; message: string }[] };
  const failed = report.checks.filter((c) => c.status === "fail").map((c) => c.message);
  return { code: run.status, failed };
}

/** The `guard.tampered` events of a session's scope, read from the store file. */
async function tampered(p: Project, session: string): Promise<string[]> {
  const store = new SqliteStore(join(p.project, ".reins", "reins.db"));
  try {
    const records = await store.events(`session:${session}`);
    return records.flatMap((r) => (r.event.kind === "guard.tampered" ? [r.event.detail] : []));
  } finally {
    await store.close();
  }
}

const TAMPER_LINE = /reins: the (hooks reins installed|store)/;

describe("the hook settings changed from the agent's shell", () => {
  const spellings: [string, string, RegExp][] = [
    ["rm -rf .claude", "rm -rf .claude", /settings\.local\.json were changed: the file is gone/],
    [
      "echo {} into the settings after a cd",
      "cd .claude && echo {} > settings.local.json",
      /settings\.local\.json were changed: SessionStart is gone, UserPromptSubmit is gone, PreToolUse is gone/,
    ],
    [
      "perl -pi renaming PreToolUse",
      "perl -pi -e 's/PreToolUse/X/' .claude/settings.local.json",
      /settings\.local\.json were changed: PreToolUse is gone\. Guarding of tool calls is off until a person runs `reins init claude` again\./,
    ],
    [
      "find -delete",
      "find .claude -name '*.json' -delete",
      /settings\.local\.json were changed: the file is gone/,
    ],
    [
      "a write through a symlink to .claude/",
      "ln -s .claude c && echo '{\"hooks\":{}}' > c/settings.local.json",
      /settings\.local\.json were changed: SessionStart is gone/,
    ],
  ];

  it.each(spellings)(
    "%s: the next session's start says so, records it, and doctor exits 1",
    async (_name, command, said) => {
      const p = setUp();
      const first = sessionStart(p, "s1");
      expect(first).toMatch(/^reins: session budget|reins is guarding/);
      expect(first).not.toMatch(TAMPER_LINE);
      expect(doctor(p)).toEqual({ code: 0, failed: [] });
      sh(p, command);
      const context = sessionStart(p, "s2");
      expect(context).toMatch(said);
      expect(await tampered(p, "s2")).toEqual([expect.stringMatching(said)]);
      const checked = doctor(p);
      expect(checked.code).toBe(1);
      expect(checked.failed.join("\n")).toMatch(
        /reins was set up here.*(hooks are gone|were changed)|lacks reins' (SessionStart, UserPromptSubmit, )?PreToolUse/,
      );
      // A person setting reins up again makes it whole, and the next session says nothing more.
      expect(runReins(["init", "claude"], { cwd: p.project, env: p.env }).status).toBe(0);
      expect(sessionStart(p, "s3")).not.toMatch(TAMPER_LINE);
      expect(doctor(p)).toEqual({ code: 0, failed: [] });
    },
  );
});

describe("the store's events removed from the agent's shell", () => {
  it.skipIf(!hasPython)(
    "a python3 `delete from events`: the next turn says the store lost events",
    async () => {
      const p = setUp();
      sessionStart(p, "s1");
      prompt(p, "s1", "p1");
      work(p, "s1", 3);
      expect(prompt(p, "s1", "p2")).not.toMatch(TAMPER_LINE);
      sh(
        p,
        `python3 -c "import sqlite3; c = sqlite3.connect('.reins/reins.db'); c.execute('delete from events'); c.commit()"`,
      );
      // The turn goes on and ends: its end does not move the mark past the loss.
      work(p, "s1", 1);
      hook(p, { session_id: "s1", hook_event_name: "Stop" });
      const context = prompt(p, "s1", "p3");
      expect(context).toMatch(
        /reins: the store \.reins\/reins\.db lost events of this session \(it holds \d+ of the \d+ events reins saw recorded\)/,
      );
      expect(await tampered(p, "s1")).toEqual([expect.stringMatching(/lost events/)]);
      const checked = doctor(p);
      expect(checked.code).toBe(1);
      expect(checked.failed.join("\n")).toMatch(/session:s1: the store \.reins\/reins\.db lost events/);
      // Said once: the next turn goes on from what the store holds now.
      expect(prompt(p, "s1", "p4")).not.toMatch(TAMPER_LINE);
    },
  );

  it.skipIf(!hasPython)(
    "a `delete from events` under a long-lived store (the daemon's, which keeps states in memory)",
    async () => {
      const p = setUp();
      const services = await openServices(p.project, p.env);
      try {
        const call = async (input: Record<string, unknown>) => {
          const checked = readHookInput(
            "claude",
            JSON.stringify({ cwd: p.project, session_id: "s1", ...input }),
          );
          if (!("adapter" in checked)) throw new Error("bad input");
          const { reply } = await answerHook(checked.adapter, checked.input, services, Date.now());
          const specific = (reply as { hookSpecificOutput?: { additionalContext?: string } } | null)
            ?.hookSpecificOutput;
          return specific?.additionalContext ?? "";
        };
        const tool = { tool_name: "Bash", tool_use_id: "t1", tool_input: { command: "ls" } };
        expect(await call({ hook_event_name: "SessionStart" })).not.toMatch(TAMPER_LINE);
        for (const event of ["PreToolUse", "PostToolUse"]) await call({ ...tool, hook_event_name: event });
        expect(await call({ hook_event_name: "UserPromptSubmit", prompt_id: "p1" })).not.toMatch(TAMPER_LINE);
        sh(
          p,
          `python3 -c "import sqlite3; c = sqlite3.connect('.reins/reins.db'); c.execute('delete from events'); c.commit()"`,
        );
        for (const event of ["PreToolUse", "PostToolUse"])
          await call({ ...tool, tool_use_id: "t2", hook_event_name: event });
        // The scope's head follows its log (schema 6), so the daemon's store sees its copy ahead of the file
        // and rebuilds from the snapshot: the log then holds fewer events than the mark.
        expect(await call({ hook_event_name: "UserPromptSubmit", prompt_id: "p2" })).toMatch(
          /reins: the store \.reins\/reins\.db lost events of this session \(it holds \d+ of the \d+ events reins saw recorded\)/,
        );
      } finally {
        await services.store.close();
      }
      expect(await tampered(p, "s1")).toEqual([expect.stringMatching(/lost events/)]);
    },
  );

  it.skipIf(!hasPython)(
    "reins.db replaced with an empty database: the next session start says so",
    async () => {
      const p = setUp();
      sessionStart(p, "s1");
      work(p, "s1", 2);
      sh(
        p,
        `rm -f .reins/reins.db .reins/reins.db-wal .reins/reins.db-shm && python3 -c "import sqlite3; sqlite3.connect('.reins/reins.db').close()"`,
      );
      const context = sessionStart(p, "s1");
      expect(context).toMatch(
        /reins: the store \.reins\/reins\.db is not the one reins recorded to: it was replaced/,
      );
      expect(await tampered(p, "s1")).toEqual([expect.stringMatching(/was replaced/)]);
      const checked = doctor(p);
      expect(checked.code).toBe(1);
      expect(checked.failed.join("\n")).toMatch(/was replaced/);
    },
  );

  it("doctor finds the loss by itself before any turn: the whole scope gone", async () => {
    const p = setUp();
    sessionStart(p, "s1");
    work(p, "s1", 1);
    prompt(p, "s1", "p1");
    const store = new SqliteStore(join(p.project, ".reins", "reins.db"));
    await store.close();
    // What `sqlite3 .reins/reins.db "delete from snapshots; delete from events"` does.
    execFileSync(process.execPath, [
      "-e",
      `const D = require(${JSON.stringify(require.resolve("better-sqlite3"))}); const db = new D(${JSON.stringify(join(p.project, ".reins", "reins.db"))}); db.exec("delete from snapshots; delete from events"); db.close();`,
    ]);
    const checked = doctor(p);
    expect(checked.code).toBe(1);
    expect(checked.failed.join("\n")).toMatch(/lost events: session:s1: it holds 0 of the \d+ events/);
  });
});

describe("a store's identity", () => {
  it("is drawn once per file, and a file put at its path shows even to a store that keeps the old one open", async () => {
    const p = e2eProject("tamper-id");
    projects.push(p);
    const file = join(p.project, "reins.db");
    const kept = new SqliteStore(file);
    const id = await kept.identity();
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    const again = new SqliteStore(file);
    expect(await again.identity()).toBe(id);
    await again.close();
    execFileSync("sh", ["-c", "rm -f reins.db reins.db-wal reins.db-shm && : > reins.db"], {
      cwd: p.project,
    });
    const fresh = new SqliteStore(file);
    expect(await fresh.identity()).toMatch(/^[0-9a-f]{32}$/);
    expect(await fresh.identity()).not.toBe(id);
    expect(await kept.identity()).toBe("(another file)");
    await fresh.close();
    await kept.close();
  });
});

/** Appends to `path` the transcript lines of Bash calls `ids` that finished now, as Claude Code writes them. */
function transcriptCalls(path: string, ids: readonly string[]): void {
  const at = new Date().toISOString();
  const lines = ids.flatMap((id) => [
    {
      type: "assistant",
      timestamp: at,
      message: { content: [{ type: "tool_use", id, name: "Bash", input: {} }] },
    },
    {
      type: "user",
      timestamp: at,
      message: { content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] },
    },
  ]);
  appendFileSync(path, lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
}

describe("tool calls that ran with no hook answered (the daemon killed mid-turn)", () => {
  const UNANSWERED = /(\d+) tool calls? of this session ran with no answer from reins/;

  /** Session s1 of a new project, started and at its first turn, with a transcript: its path, and its next turn. */
  function started() {
    const p = setUp();
    const transcript = join(p.root, "s1.jsonl");
    writeFileSync(transcript, "");
    const turn = (id: string) =>
      hook(p, {
        session_id: "s1",
        hook_event_name: "UserPromptSubmit",
        prompt_id: id,
        prompt: "go on",
        transcript_path: transcript,
      });
    sessionStart(p, "s1");
    turn("p1");
    return { p, transcript, turn };
  }

  it("the next turn's start tells the model how many, records it, and doctor exits 1", async () => {
    const { p, transcript, turn } = started();
    work(p, "s1", 2);
    transcriptCalls(transcript, ["t0", "t1"]);
    // The hooks' answerer is gone: Claude Code lets these three run unjudged, and its Stop hook is not answered.
    transcriptCalls(transcript, ["toolu_a", "toolu_b", "toolu_c"]);
    const told = turn("p2");
    expect(told).toMatch(UNANSWERED);
    expect(UNANSWERED.exec(told)?.[1]).toBe("3");
    expect(told).toContain("3 Bash");
    expect((await tampered(p, "s1")).filter((d) => UNANSWERED.test(d))).toHaveLength(1);
    const report = doctor(p);
    expect(report.code).toBe(1);
    expect(report.failed.join("\n")).toMatch(UNANSWERED);
    // Told once: the turn after says nothing more of them.
    expect(turn("p3")).not.toMatch(UNANSWERED);
  });

  it("a session whose every call was answered hears nothing of it", () => {
    const { p, transcript, turn } = started();
    work(p, "s1", 3);
    transcriptCalls(transcript, ["t0", "t1", "t2"]);
    hook(p, { session_id: "s1", hook_event_name: "Stop", transcript_path: transcript });
    expect(turn("p2")).not.toMatch(UNANSWERED);
    expect(doctor(p)).toEqual({ code: 0, failed: [] });
  });
});

describe("what is not tampering", () => {
  it("an untampered project: the turns say nothing more and doctor exits 0", async () => {
    const p = setUp();
    for (const context of [sessionStart(p, "s1"), prompt(p, "s1", "p1")])
      expect(context).not.toMatch(TAMPER_LINE);
    work(p, "s1", 2);
    hook(p, { session_id: "s1", hook_event_name: "Stop" });
    expect(prompt(p, "s1", "p2")).not.toMatch(TAMPER_LINE);
    expect(sessionStart(p, "s2")).not.toMatch(TAMPER_LINE);
    expect(await tampered(p, "s1")).toEqual([]);
    expect(doctor(p)).toEqual({ code: 0, failed: [] });
    const installed = JSON.parse(runReins(["doctor", "--json"], { cwd: p.project, env: p.env }).stdout) as {
      checks: { check: string; status: string; message: string }[];
    };
    expect(installed.checks.find((c) => c.check === "as installed")).toMatchObject({ status: "ok" });
    expect(installed.checks.find((c) => c.check === "events")).toMatchObject({ status: "ok" });
  });

  it("`reins gc` trimming a live session and removing an idle one is not reported as lost events", async () => {
    const p = setUp(JSON.stringify({ retention: { days: 1, records: 1 } }));
    sessionStart(p, "live");
    prompt(p, "live", "p1");
    // Many calls (past a snapshot, so gc may trim), in-process through the hooks' own code; and an idle session
    // whose every event is two days old.
    const services = await openServices(p.project, p.env);
    try {
      const call = async (input: Record<string, unknown>, now: number) => {
        const checked = readHookInput("claude", JSON.stringify({ cwd: p.project, ...input }));
        if (!("adapter" in checked)) throw new Error("bad input");
        await answerHook(checked.adapter, checked.input, services, now);
      };
      const old = Date.now() - 2 * 86_400_000;
      await call({ session_id: "idle", hook_event_name: "SessionStart" }, old);
      await call({ session_id: "idle", hook_event_name: "UserPromptSubmit", prompt_id: "q" }, old);
      for (let i = 0; i < 40; i++) {
        const tool = {
          session_id: "live",
          tool_name: "Bash",
          tool_use_id: `t${i}`,
          tool_input: { command: `echo ${i}` },
        };
        await call({ ...tool, hook_event_name: "PreToolUse" }, Date.now());
        await call({ ...tool, hook_event_name: "PostToolUse", tool_response: { exit_code: 0 } }, Date.now());
      }
    } finally {
      await services.store.close();
    }
    const gc = runReins(["gc", "--json"], { cwd: p.project, env: p.env });
    expect(gc.status, gc.stderr).toBe(0);
    const result = JSON.parse(gc.stdout) as { scopes: string[]; records: number };
    expect(result.scopes).toContain("session:idle");
    expect(result.records).toBeGreaterThan(30);
    expect(doctor(p)).toEqual({ code: 0, failed: [] });
    expect(prompt(p, "live", "p2")).not.toMatch(TAMPER_LINE);
    expect(sessionStart(p, "idle")).not.toMatch(TAMPER_LINE);
    expect(readFileSync(join(p.project, ".reins", "reins.db")).length).toBeGreaterThan(0);
  });
});

describe.skipIf(claudeUnavailableReason() !== null)("with the real Claude Code CLI", () => {
  let fake: FakeAnthropic | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  it("after `perl -pi` renamed PreToolUse, the next session's model is told, and doctor exits 1", async () => {
    const p = setUp();
    const script: Script = (_request, turn) =>
      turn < 1
        ? { toolUses: [{ name: "Bash", input: { command: "echo hi", description: "run" } }] }
        : { text: "Done." };
    fake = await startFakeAnthropic(script);
    const session = async () => {
      const before = fake!.mainRequests().length;
      const result = await runClaude({
        cwd: p.project,
        home: p.home,
        prompt: "Say hi.",
        baseUrl: fake!.url,
        env: { XDG_STATE_HOME: p.env.XDG_STATE_HOME!, REINS_RUNTIME_DIR: p.env.REINS_RUNTIME_DIR! },
        timeoutMs: 90_000,
      });
      expect(result.timedOut, result.stderr).toBe(false);
      const first = fake!.mainRequests()[before];
      // The SessionStart hook's context reaches the model in the first request (Claude Code puts it with
      // the environment's description).
      return JSON.stringify(first?.body ?? null);
    };
    const told = await session();
    expect(told).toContain("SessionStart hook additional context: reins: session budget");
    expect(told).not.toMatch(TAMPER_LINE);
    sh(p, "perl -pi -e 's/PreToolUse/X/' .claude/settings.local.json");
    expect(await session()).toContain(
      "reins: the hooks reins installed in .claude/settings.local.json were changed: PreToolUse is gone. Guarding of tool calls is off until a person runs `reins init claude` again.",
    );
    const checked = doctor(p);
    expect(checked.code).toBe(1);
    expect(checked.failed.join("\n")).toMatch(/PreToolUse is gone/);
  }, 240_000);
  it("a daemon killed mid-turn: the call that ran unjudged is told at the resumed session's start, and doctor exits 1", async () => {
    const p = setUp();
    const runtime = { REINS_RUNTIME_DIR: p.env.REINS_RUNTIME_DIR! };
    let killed = 0;
    const script: Script = async (_request, turn) => {
      if (turn === 0)
        return { toolUses: [{ name: "Bash", input: { command: "echo one", description: "run" } }] };
      if (turn === 1) {
        // The first call was answered by the user's daemon (the default install's http hooks): kill it, so
        // the next call's hooks find nothing to answer them and Claude Code runs the call all the same.
        const [daemon] = await listDaemons(runtime);
        expect(daemon?.running, "the user's daemon answering the hooks").toBe(true);
        killed = daemon!.running ? daemon!.status.pid : 0;
        process.kill(killed, "SIGKILL");
        await waitFor("the daemon to stop answering", async () =>
          (await listDaemons(runtime)).every((d) => !d.running),
        );
        return { toolUses: [{ name: "Bash", input: { command: "echo two", description: "run" } }] };
      }
      return { text: "Done." };
    };
    fake = await startFakeAnthropic(script);
    const claude = (prompt: string, args: string[] = []) =>
      runClaude({
        cwd: p.project,
        home: p.home,
        prompt,
        baseUrl: fake!.url,
        env: { XDG_STATE_HOME: p.env.XDG_STATE_HOME!, ...runtime },
        timeoutMs: 90_000,
        args,
      });
    const first = await claude("Say hi twice.");
    expect(first.timedOut, first.stderr).toBe(false);
    expect(killed).toBeGreaterThan(0);
    const session = first.json!.session_id;
    const before = fake.mainRequests().length;
    const resumed = await claude("Go on.", ["--resume", session]);
    expect(resumed.timedOut, resumed.stderr).toBe(false);
    // Claude Code 2.1.330 resumes under the same session id, so the mark and the transcript are the session's.
    expect(resumed.json!.session_id).toBe(session);
    const told = JSON.stringify(fake.mainRequests()[before]?.body ?? null);
    expect(told).toMatch(
      /reins: 1 tool call of this session ran with no answer from reins to their hooks \(1 Bash; the last at /,
    );
    // The call ran (Claude Code goes ahead when an http hook is not answered), and the store never saw it.
    expect(lastToolResults(fake.mainRequests()[2]!).map((r) => r.text)).toEqual(["two"]);
    const store = new SqliteStore(join(p.project, ".reins", "reins.db"));
    const requested = await store
      .events(`session:${session}`)
      .finally(() => store.close())
      .then((log) => log.flatMap((r) => (r.event.kind === "tool.requested" ? [r.event.command] : [])));
    expect(requested).toEqual(["echo one"]);
    expect(await tampered(p, session)).toEqual([
      expect.stringMatching(/^reins: 1 tool call of this session/),
    ]);
    const checked = doctor(p);
    expect(checked.code).toBe(1);
    expect(checked.failed.join("\n")).toMatch(/ran with no answer from reins/);
  }, 240_000);
});
