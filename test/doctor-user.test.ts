import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { memoryIo } from "../src/cli/io.js";
import { run } from "../src/cli/run.js";

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
      "by the user-level hooks (~/.claude/settings.json), for this git root; its store is .reins/ (made on first use)",
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
