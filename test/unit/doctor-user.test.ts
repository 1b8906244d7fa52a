import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { run } from "../../src/cli/run.js";
import { linkReinsDir } from "../../src/base/config/reins-link.js";
import { denyProjectPolicy } from "../../src/base/config/user-policy-deny.js";

/** `reins doctor` says which hooks guard a project, and from where, once `reins init --user` ran. */

let dir: string;
let home: string;

beforeEach(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "reins-doctor-user-")));
  home = join(dir, "home");
  mkdirSync(home);
  const io = memoryIo({ cwd: home, env: { HOME: home } });
  expect(await run(["init", "--user", "claude", "--no-contain"], io), io.err.join("")).toBe(0);
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Every line of `reins doctor --json` run in `cwd`. */
async function checks(cwd: string) {
  const io = memoryIo({ cwd, env: { HOME: home, PATH: process.env.PATH ?? "" } });
  await run(["doctor", "--json"], io);
  return (
    JSON.parse(io.out.join("")) as {
      checks: { subject: string; check: string; status: string; message: string }[];
    }
  ).checks;
}

async function guarded(cwd: string): Promise<{ status: string; message: string; fix?: string }> {
  const io = memoryIo({ cwd, env: { HOME: home, PATH: process.env.PATH ?? "" } });
  await run(["doctor", "--json"], io);
  const report = JSON.parse(io.out.join("")) as {
    checks: { subject: string; check: string; status: string; message: string; fix?: string }[];
  };
  const line = report.checks.find((c) => c.subject === "claude" && c.check === "guarded");
  expect(line, io.out.join("")).toBeDefined();
  expect(report.checks.some((c) => c.message.includes("answered twice"))).toBe(false);
  return line!;
}

describe("reins doctor with the user-level hooks", () => {
  it("says a repository never initialised is guarded by them, with its store under its own .reins/", async () => {
    const repo = join(dir, "repo");
    mkdirSync(repo);
    execFileSync("git", ["init", "-q"], { cwd: repo });
    const line = await guarded(repo);
    expect(line.status).toBe("ok");
    expect(line.message).toBe(
      "by the user-level hooks (~/.claude/settings.json), for this git root; its store is .reins/ (made on first use, as a link into reins' state folder)",
    );
  });

  it("says a project whose .reins is linked into the state folder is contained by the user's sandbox, and Codex there is not", async () => {
    const repo = join(dir, "linked");
    mkdirSync(repo);
    execFileSync("git", ["init", "-q"], { cwd: repo });
    for (const args of [
      ["init", "--user", "claude"],
      ["init", "--user", "codex", "--no-contain"],
    ]) {
      const io = memoryIo({ cwd: home, env: { HOME: home } });
      expect(await run(args, io), io.err.join("")).toBe(0);
    }
    const env = { HOME: home };
    // What the first user-level hook call there does (guard/hooks/hook-call.ts, guard/hooks/user-hook.ts).
    expect(linkReinsDir(repo, env, true)).toBe(true);
    const before = await checks(repo);
    expect(before.find((c) => c.subject === "claude" && c.check === "guarded")?.message).toMatch(
      /its store is \.reins\/ \(a link into reins' state folder\)$/,
    );
    // Until a turn has added the project's policy file to the user's sandbox, it is said so.
    expect(before.find((c) => c.subject === "claude" && c.check === "contained")).toMatchObject({
      status: "warn",
      message: expect.stringContaining(join(repo, "reins.config.json")) as string,
    });
    expect(denyProjectPolicy(repo, env)).toBe(true);
    const after = await checks(repo);
    expect(after.find((c) => c.subject === "claude" && c.check === "contained")).toMatchObject({
      status: "ok",
      message:
        "by Claude Code's sandbox, set in the user's settings (.reins/ linked into reins' state folder)",
    });
    expect(after.find((c) => c.subject === "codex" && c.check === "contained")?.status).toBe("warn");
    // A .reins that is no longer the link is not contained, whatever the settings say.
    rmSync(join(repo, ".reins"));
    mkdirSync(join(repo, ".reins"));
    expect((await checks(repo)).find((c) => c.subject === "claude" && c.check === "contained")?.status).toBe(
      "warn",
    );
  });

  it("says a project with hooks of its own is guarded by those, the user-level ones standing down", async () => {
    const repo = join(dir, "own");
    mkdirSync(repo);
    execFileSync("git", ["init", "-q"], { cwd: repo });
    const io = memoryIo({ cwd: repo, env: { HOME: home } });
    expect(await run(["init", "claude", "--no-contain", "--in-process"], io), io.err.join("")).toBe(0);
    const line = await guarded(repo);
    expect(line.status).toBe("ok");
    expect(line.message).toMatch(
      /^by the project's hooks \(\.claude\/settings\.local\.json\); the user-level hooks \(~\/\.claude\/settings\.json\) stand down here/,
    );
  });

  it("says a folder in no git repository is not guarded", async () => {
    const loose = join(dir, "loose");
    mkdirSync(loose);
    const line = await guarded(loose);
    expect(line).toMatchObject({ status: "warn", fix: "git init, or reins init claude here" });
    expect(line.message).toContain("is in no git repository");
  });
});
