import { execFileSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryIo } from "../src/cli/io.js";
import { run } from "../src/cli/run.js";
import { claudeUnavailableReason, runClaude } from "#test/claude-code.js";
import { failJs, initReins, recorded, removeE2eProject } from "#test/e2e-project.js";
import { lastToolResults, startFakeAnthropic, type Script } from "#test/fake-anthropic.js";

/**
 * `reins init --user claude` into a throwaway HOME, then the real Claude Code CLI (against a scripted model)
 * in folders no `reins init` ever ran in: a git repository, a repository nested in it, a worktree of it. Each
 * is guarded by the user-level hooks and counted in its own store; a project with hooks of its own is counted
 * once; a folder in no repository is told it is not guarded.
 */

let root: string;
let home: string;
let repo: string;

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd, stdio: "ignore" });

function repository(dir: string): string {
  mkdirSync(dir, { recursive: true });
  git(dir, "init", "-q");
  writeFileSync(join(dir, "fail.js"), failJs);
  git(dir, "add", "fail.js");
  git(dir, "commit", "-q", "-m", "x");
  return dir;
}

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "reins-user-e2e-")));
  home = join(root, "home");
  mkdirSync(home);
  repo = repository(join(root, "repo"));
  const io = memoryIo({ cwd: home, env: { HOME: home } });
  expect(await run(["init", "--user", "claude"], io), io.err.join("")).toBe(0);
}, 120_000);

afterAll(async () => {
  await removeE2eProject(root);
});

const bash = (command: string) => ({ toolUses: [{ name: "Bash", input: { command, description: "run" } }] });

/** Seven `node fail.js` calls in `cwd`: what the model read back, and the session. */
async function loop(cwd: string) {
  const script: Script = (_request, turn) => (turn < 7 ? bash("node fail.js") : { text: "stuck" });
  const fake = await startFakeAnthropic(script);
  try {
    const result = await runClaude({
      cwd,
      home,
      prompt: "Go.",
      baseUrl: fake.url,
      maxTurns: 10,
      timeoutMs: 120_000,
    });
    expect(result.timedOut, result.stderr).toBe(false);
    expect(fake.errors).toEqual([]);
    const texts = fake.mainRequests().map((r) => lastToolResults(r)[0]?.text ?? "");
    return { result, texts, first: JSON.stringify(fake.requests), session: result.json!.session_id };
  } finally {
    await fake.close();
  }
}

/** The loop is denied by its 6th call, and the project's own store holds the session with its breaker open. */
async function expectGuarded(dir: string) {
  const { texts, first, session } = await loop(dir);
  const denied = texts.findIndex((t) => t.startsWith("PreToolUse:Bash hook error"));
  expect(denied, texts.join("\n")).toBeGreaterThan(0);
  expect(denied).toBeLessThanOrEqual(6);
  expect(texts[1]).toContain("ECONNREFUSED");
  // Contained from the user's settings: its .reins is a link into the state folder the user's sandbox denies.
  expect(first).not.toContain("not contained");
  expect(lstatSync(join(dir, ".reins")).isSymbolicLink()).toBe(true);
  const { log, state } = await recorded(dir, session);
  expect(state?.breaker).toMatchObject({ status: "open" });
  // Every call the model made, the denied ones too, once.
  expect(log.filter((r) => r.event.kind === "tool.requested").length).toBe(texts.length - 1);
  return session;
}

describe.skipIf(claudeUnavailableReason() !== null)("reins init --user claude", () => {
  it("installs the hooks and the sandbox in the user's settings only", () => {
    const settings = JSON.parse(readFileSync(join(home, ".claude", "settings.json"), "utf8")) as {
      hooks: Record<string, { hooks: { command: string }[] }[]>;
      sandbox: { enabled: boolean; allowUnsandboxedCommands: boolean };
    };
    expect(settings.hooks.PreToolUse?.[0]?.hooks[0]?.command).toMatch(/^REINS_HOOK_SCOPE=user "/);
    expect(settings.sandbox).toMatchObject({ enabled: true, allowUnsandboxedCommands: false });
    expect(existsSync(join(repo, ".reins"))).toBe(false);
  });

  it("guards a repository never initialised, in a store made under its own .reins/", async () => {
    const session = await expectGuarded(repo);
    expect(readFileSync(join(repo, ".reins", "hook-secret"), "utf8").trim().length).toBeGreaterThan(31);
    expect(session).not.toBe("");
  }, 180_000);

  it("guards a nested repository and a worktree, each counted in its own store", async () => {
    const nested = repository(join(repo, "vendor", "lib"));
    const worktree = join(root, "wt");
    git(repo, "worktree", "add", "-q", worktree);
    const inNested = await expectGuarded(nested);
    const inWorktree = await expectGuarded(worktree);
    // Neither session is in the outer repository's store.
    if (existsSync(join(repo, ".reins", "reins.db")))
      for (const session of [inNested, inWorktree]) expect((await recorded(repo, session)).log).toEqual([]);
    expect((await recorded(worktree, inNested)).log).toEqual([]);
  }, 300_000);

  it("stands down in a project with hooks of its own, so each call is counted once", async () => {
    const own = repository(join(root, "own"));
    await initReins({ project: own, home }, ["claude"]);
    const { texts, session } = await loop(own);
    const denied = texts.findIndex((t) => t.startsWith("PreToolUse:Bash hook error"));
    expect(denied).toBeGreaterThan(0);
    const { log } = await recorded(own, session);
    // One tool.requested per call the model made, not two.
    expect(log.filter((r) => r.event.kind === "tool.requested").length).toBe(texts.length - 1);
  }, 180_000);

  it("says at the session's start that a folder in no repository is not guarded, and records nothing", async () => {
    const loose = join(root, "loose");
    mkdirSync(loose);
    writeFileSync(join(loose, "fail.js"), failJs);
    const script: Script = (_request, turn) => (turn < 1 ? bash("node fail.js") : { text: "done" });
    const fake = await startFakeAnthropic(script);
    try {
      const result = await runClaude({ cwd: loose, home, prompt: "Go.", baseUrl: fake.url, maxTurns: 4 });
      expect(result.timedOut, result.stderr).toBe(false);
      expect(JSON.stringify(fake.requests)).toContain("reins: not guarding this session");
      expect(lastToolResults(fake.mainRequests()[1]!)[0]?.text).toContain("ECONNREFUSED");
    } finally {
      await fake.close();
    }
    expect(existsSync(join(loose, ".reins"))).toBe(false);
  }, 120_000);
});
