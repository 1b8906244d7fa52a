/** `reins init claude` sets Claude Code's sandbox as the boundary, keeps the user's own, and takes out only its own. */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { run } from "../../src/cli/run.js";
import { claudeContainment, judgesOf } from "../../src/base/config/boundary.js";
import { REINS_BIN } from "../../src/base/config/package-info.js";

function project(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "reins-contain-")));
  writeFileSync(join(dir, "reins.config.json"), "{}");
  return dir;
}

async function reins(dir: string, ...argv: string[]) {
  const env = { HOME: join(dir, "home"), PATH: process.env.PATH ?? "" };
  const io = memoryIo({ cwd: dir, env });
  const code = await run(argv, io);
  return { code, out: io.out.join(""), err: io.err.join(""), env };
}

const settingsOf = (dir: string) =>
  JSON.parse(readFileSync(join(dir, ".claude", "settings.local.json"), "utf8")) as {
    sandbox?: Record<string, unknown> & { filesystem?: { denyRead?: string[]; denyWrite?: string[] } };
    permissions?: { deny?: string[]; allow?: string[] };
  };

describe("reins init claude: the boundary", () => {
  it("sets the sandbox with no way out, hides .reins/ and the user's reins folders, and holds the hook settings", async () => {
    const dir = project();
    const { code, out, env } = await reins(dir, "init", "claude", "--in-process");
    expect(code).toBe(0);
    expect(out).toContain("contained: Claude Code's sandbox");
    const { sandbox, permissions } = settingsOf(dir);
    expect(sandbox).toMatchObject({
      enabled: true,
      failIfUnavailable: true,
      allowUnsandboxedCommands: false,
    });
    expect(sandbox?.network).toEqual({ allowedDomains: ["*"] });
    expect(sandbox?.filesystem?.denyRead).toEqual(
      expect.arrayContaining(["./.reins/**", "./home/.cache/reins/run/**", "./home/.local/state/reins/**"]),
    );
    expect(sandbox?.filesystem?.denyWrite).toEqual(
      expect.arrayContaining(["./.reins/**", "./.claude/**", "./reins.config.json", "./.git/hooks/**"]),
    );
    expect(permissions?.deny).toEqual(expect.arrayContaining(["Read(./.reins/**)", "Edit(./.claude/**)"]));
    expect(claudeContainment(dir, env, judgesOf(dir, env, REINS_BIN), "darwin")).toEqual({
      contained: true,
      by: "Claude Code's sandbox",
    });
  });

  it("is idempotent, keeps the user's own sandbox and permission settings, and uninstalls exactly what it added", async () => {
    const dir = project();
    mkdirSync(join(dir, ".claude"));
    const mine = {
      theme: "dark",
      sandbox: {
        enabled: true,
        network: { allowedDomains: ["github.com"] },
        filesystem: { denyRead: ["~/.ssh/**"] },
      },
      permissions: { allow: ["Bash(npm test)"], deny: ["Read(./secrets/**)"] },
    };
    writeFileSync(join(dir, ".claude", "settings.local.json"), JSON.stringify(mine));
    expect((await reins(dir, "init", "claude", "--in-process")).code).toBe(0);
    const once = readFileSync(join(dir, ".claude", "settings.local.json"), "utf8");
    const again = await reins(dir, "init", "claude", "--in-process");
    expect(again.out).toContain("already keeps reins' files");
    expect(readFileSync(join(dir, ".claude", "settings.local.json"), "utf8")).toBe(once);
    const { sandbox, permissions } = settingsOf(dir);
    expect(sandbox?.network).toEqual({ allowedDomains: ["github.com"] });
    expect(sandbox?.filesystem?.denyRead?.[0]).toBe("~/.ssh/**");
    expect(permissions?.allow).toEqual(["Bash(npm test)"]);
    expect(permissions?.deny?.[0]).toBe("Read(./secrets/**)");

    expect((await reins(dir, "init", "claude", "--uninstall")).code).toBe(0);
    expect(settingsOf(dir)).toEqual(mine);
  });

  it("with --no-contain sets no sandbox, and says the agent is not contained", async () => {
    const dir = project();
    const { code, out, env } = await reins(dir, "init", "claude", "--in-process", "--no-contain");
    expect(code).toBe(0);
    expect(out).toContain("not contained (--no-contain)");
    expect(settingsOf(dir).sandbox).toBeUndefined();
    const containment = claudeContainment(dir, env, judgesOf(dir, env, REINS_BIN), "darwin");
    expect(containment).toMatchObject({ contained: false, why: "Claude Code's sandbox is off" });
  });

  it("says codex and gemini are not contained, and why", async () => {
    for (const agent of ["codex", "gemini"]) {
      const dir = project();
      const { out } = await reins(dir, "init", agent, "--no-trust");
      expect(out).toMatch(/not contained: reins cannot keep this agent from switching it off \(.+\)/);
    }
  });

  it("reports a sandbox the user turned back on for unsandboxed commands, or a path taken out", async () => {
    const dir = project();
    const { env } = await reins(dir, "init", "claude", "--in-process");
    const judges = judgesOf(dir, env, REINS_BIN);
    const path = join(dir, ".claude", "settings.local.json");
    const settings = settingsOf(dir);
    writeFileSync(
      path,
      JSON.stringify({ ...settings, sandbox: { ...settings.sandbox, allowUnsandboxedCommands: true } }),
    );
    expect(claudeContainment(dir, env, judges, "darwin")).toMatchObject({
      contained: false,
      why: "Claude Code may run commands outside its sandbox",
    });
    const fs = settings.sandbox!.filesystem!;
    writeFileSync(
      path,
      JSON.stringify({ ...settings, sandbox: { ...settings.sandbox, filesystem: { ...fs, denyRead: [] } } }),
    );
    expect(claudeContainment(dir, env, judges, "darwin")).toMatchObject({ contained: false });
    expect(claudeContainment(dir, env, judges, "win32")).toMatchObject({ contained: false });
  });
});
