import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { run } from "../../src/cli/run.js";
import { containmentOf } from "../../src/base/config/boundary.js";
import { linkReinsDir, linkedReinsDir } from "../../src/base/config/reins-link.js";
import { denyProjectPolicy } from "../../src/base/config/user-policy-deny.js";
import { runHook } from "../../src/guard/hooks/hook-call.js";
import { readTamper } from "../../src/guard/hooks/tamper-record.js";

/**
 * The installs around a project whose `.reins` is linked into the state folder (docs/user-install-hooks.md):
 * the policy entry the hooks add to the user's sandbox, `reins init claude` in it, `--uninstall`.
 */

let dir: string;
let home: string;
let repo: string;
let env: NodeJS.ProcessEnv;

async function reins(cwd: string, ...args: string[]): Promise<string> {
  const io = memoryIo({ cwd, env: { HOME: home } });
  expect(await run(args, io), io.err.join("")).toBe(0);
  return io.out.join("");
}

const settings = () =>
  JSON.parse(readFileSync(join(home, ".claude", "settings.json"), "utf8")) as {
    sandbox?: { filesystem?: { denyWrite?: string[] } };
    permissions?: { deny?: string[] };
  };

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "reins-user-link-")));
  home = join(dir, "home");
  mkdirSync(home);
  repo = join(dir, "repo");
  mkdirSync(repo);
  execFileSync("git", ["init", "-q"], { cwd: repo });
  env = { HOME: home, PATH: process.env.PATH ?? "" };
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("a project linked into the state folder", () => {
  it("gets its policy file denied in the user's sandbox once, and --uninstall takes the entries out", async () => {
    await reins(home, "init", "--user", "claude");
    linkReinsDir(repo, env, true);
    const policy = join(repo, "reins.config.json");
    expect(denyProjectPolicy(repo, env)).toBe(true);
    expect(settings().sandbox?.filesystem?.denyWrite).toContain(policy);
    expect(settings().permissions?.deny).toContain(`Edit(/${policy})`);
    expect(denyProjectPolicy(repo, env)).toBe(false);
    const out = await reins(home, "init", "--user", "claude", "--uninstall");
    expect(settings().sandbox).toBeUndefined();
    expect(JSON.stringify(settings())).not.toContain(policy);
    // The link and the store behind it stay: the project's history is kept, and reins still finds it.
    expect(readlinkSync(join(repo, ".reins"))).toBe(linkedReinsDir(repo, env));
    expect(out).toContain("linked into");
  });

  it("gets nothing added when the user-level sandbox was not installed (--no-contain)", async () => {
    await reins(home, "init", "--user", "claude", "--no-contain");
    linkReinsDir(repo, env, true);
    expect(denyProjectPolicy(repo, env)).toBe(false);
    expect(JSON.stringify(settings())).not.toContain("reins.config.json");
  });

  it("keeps its link when `reins init claude` is run in it, contained by the project's own boundary", async () => {
    await reins(home, "init", "--user", "claude");
    linkReinsDir(repo, env, true);
    await reins(repo, "init", "claude", "--in-process");
    expect(readlinkSync(join(repo, ".reins"))).toBe(linkedReinsDir(repo, env));
    // What reins added to the project's settings is noted behind the link.
    expect(existsSync(join(linkedReinsDir(repo, env), "claude-sandbox.json"))).toBe(true);
    expect(containmentOf("claude", repo, env, join(process.cwd(), "bin", "reins.js"), "linux")).toMatchObject(
      {
        contained: true,
        by: "Claude Code's sandbox",
      },
    );
  });

  it("is made by a user-level hook's first call, and put back by a later one, in the tamper record even with no daemon yet", async () => {
    const runtime = join(dir, "run");
    // The hook reads the state folder from its process's environment too: named here, as the test's own.
    const hookEnv = {
      HOME: home,
      PATH: env.PATH,
      REINS_HOOK_SCOPE: "user",
      REINS_RUNTIME_DIR: runtime,
      REINS_STATE_DIR: join(dir, "state"),
    };
    const call = (id: string) =>
      runHook(
        "claude",
        Buffer.from(
          JSON.stringify({
            session_id: "s1",
            transcript_path: join(dir, "none.jsonl"),
            cwd: repo,
            hook_event_name: "PreToolUse",
            tool_name: "Bash",
            tool_input: { command: "ls" },
            tool_use_id: id,
          }),
        ),
        hookEnv,
        repo,
      );
    expect((await call("t1")).warning).toBe("");
    expect(readlinkSync(join(repo, ".reins"))).toBe(linkedReinsDir(repo, hookEnv));
    rmSync(join(repo, ".reins"));
    mkdirSync(join(repo, ".reins"));
    writeFileSync(join(repo, ".reins", "reins.db"), "");
    expect((await call("t2")).warning).toBe("");
    expect(readlinkSync(join(repo, ".reins"))).toBe(linkedReinsDir(repo, hookEnv));
    expect(readTamper(runtime)).toMatchObject([{ kind: "reins-link", socket: join(repo, ".reins") }]);
  });
});
