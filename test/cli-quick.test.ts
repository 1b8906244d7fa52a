/** `reins status` and `reins doctor` from the bundled quick entry answer exactly as the module path does. */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { memoryIo } from "../src/cli/io.js";
import { run } from "../src/cli/run.js";
import { REINS_BIN } from "../src/base/config/package-info.js";

const dist = join(REINS_BIN, "..", "..", "dist");

/** A project with every agent's hooks installed (forwarding to the user's daemon), and a user's folders of its own. */
async function project(): Promise<{ dir: string; env: NodeJS.ProcessEnv }> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "reins-quick-")));
  spawnSync("git", ["init", "-q"], { cwd: dir });
  writeFileSync(join(dir, "reins.config.json"), "{}");
  const env = {
    ...process.env,
    HOME: join(dir, "home"),
    REINS_RUNTIME_DIR: mkdtempSync(join(tmpdir(), "reins-quick-rt-")),
    REINS_STATE_DIR: mkdtempSync(join(tmpdir(), "reins-quick-state-")),
    XDG_CACHE_HOME: mkdtempSync(join(tmpdir(), "reins-quick-cache-")),
  };
  for (const agent of ["claude", "codex", "gemini", "qwen", "copilot"]) {
    const io = memoryIo({ cwd: dir, env });
    expect(await run(["init", agent], io), io.err.join("")).toBe(0);
  }
  return { dir, env };
}

/** An age said relative to now ("13s ago"), which two processes run one after the other may say apart. */
const age = (text: string) => text.replace(/\b\d+(s|m|h|d) ago\b/g, "<age> ago");

/** One `reins` process: what it wrote (ages aside) and how it exited. */
function reins(dir: string, env: NodeJS.ProcessEnv, args: string[]) {
  const ran = spawnSync(process.execPath, [REINS_BIN, ...args], { cwd: dir, env, encoding: "utf8" });
  return { status: ran.status, stdout: age(ran.stdout), stderr: age(ran.stderr) };
}

describe("the quick entry of bin/reins.js (built dist/)", () => {
  it("is built beside the modules it bundles, and a packed reins ships it", () => {
    expect(existsSync(join(dist, "cli", "quick.cjs"))).toBe(true);
    expect(existsSync(join(dist, "hook-entry", "quick-loader.cjs"))).toBe(true);
    const files = (JSON.parse(readFileSync(join(dist, "..", "package.json"), "utf8")) as { files: string[] })
      .files;
    expect(files).toContain("dist");
  });

  it("answers status and doctor, their JSON and their help byte for byte as the module path does", async () => {
    const { dir, env } = await project();
    // The store made first, as a hook would, so status has a session to summarise and doctor a store to open.
    const input = JSON.stringify({
      session_id: "quick",
      hook_event_name: "PreToolUse",
      tool_name: "Read",
      tool_input: { file_path: "a.ts" },
      cwd: dir,
    });
    expect(spawnSync(process.execPath, [REINS_BIN, "hook", "claude"], { cwd: dir, env, input }).status).toBe(
      0,
    );
    const lines = [
      ["status"],
      ["status", "--json"],
      ["status", "session:quick"],
      ["status", "--help"],
      ["status", "--daemons"],
      ["status", "--all"],
      ["status", "--bogus"],
      ["doctor"],
      ["doctor", "--json"],
      ["doctor", "--help"],
    ];
    for (const args of lines) {
      const quick = reins(dir, env, args);
      // An option of the program before the command: bin/reins.js takes the module path (dist/cli/run.js).
      const modules = reins(dir, env, ["-C", dir, ...args]);
      expect(quick, args.join(" ")).toEqual(modules);
    }
    // The hooks installed forward to the daemon named after this reins' bin: doctor from the bundle found
    // them this install's, so the bundle's `../../bin/reins.js` resolved to the same file as the modules'.
    const report = reins(dir, env, ["doctor"]).stdout;
    expect(report).toMatch(/^ok +claude +guarded/m);
    expect(report).not.toContain("another reins install");
  });

  it("keeps the bundle's compiled code in the user's cache after its first run", async () => {
    const { dir, env } = await project();
    reins(dir, env, ["status"]);
    const cache = join(env.XDG_CACHE_HOME ?? "", "reins");
    const written = spawnSync("ls", [cache], { encoding: "utf8" }).stdout;
    expect(written).toMatch(/^quick\.cjs-[0-9a-f]{8}\.jsc$/m);
  });
});
