/**
 * `npx reins` on a fresh machine: the packed tarball installed with npm into a new project (its dependencies
 * resolved by npm from the registry, as a user's install does), then `npx reins --version`, `init claude`,
 * `doctor` and `status` there, and one hook call through what init installed.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stopHookDaemons } from "#test/processes.js";

const root = join(import.meta.dirname, "..");
const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
/** How long one step may take; npm's install is the long one. */
const STEP_MS = 120_000;

const dir = realpathSync(mkdtempSync(join(tmpdir(), "reins-npx-")));
const project = join(dir, "app");
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: join(dir, "home"),
  REINS_RUNTIME_DIR: join(dir, "run"),
  npm_config_update_notifier: "false",
  npm_config_fund: "false",
  npm_config_audit: "false",
  // npm's cache from the repository's own install, so most of what it needs is already there.
  npm_config_cache: process.env.npm_config_cache ?? join(homedir(), ".npm"),
  NO_COLOR: "1",
};

afterAll(async () => {
  await stopHookDaemons(env);
  rmSync(dir, { recursive: true, force: true });
});

function step(command: string, args: string[], input?: string) {
  const ran = spawnSync(command, args, {
    cwd: project,
    env,
    encoding: "utf8",
    timeout: STEP_MS,
    ...(input !== undefined ? { input } : {}),
  });
  if (ran.error !== undefined)
    throw new Error(`${command} ${args.join(" ")}: ${ran.error.message}; ${ran.stderr}`);
  return ran;
}

const npmWorks = (() => {
  try {
    execFileSync("npm", ["--version"], { stdio: "ignore", timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!npmWorks)("the packed tarball installed into a new project", () => {
  it(
    "gives a working npx reins: --version, init claude, doctor, status, and a guarded hook call",
    () => {
      mkdirSync(project, { recursive: true });
      mkdirSync(env.HOME, { recursive: true });
      execFileSync("git", ["init", "-q", project]);
      writeFileSync(join(project, "package.json"), JSON.stringify({ name: "app", private: true }));
      // Packed from the dist/ that `npm test` built (no prepack build here).
      const packed = JSON.parse(
        execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], {
          cwd: root,
          encoding: "utf8",
          timeout: STEP_MS,
        }),
      ) as { filename: string }[];
      const tarball = join(dir, packed[0]!.filename);
      const install = step("npm", [
        "install",
        tarball,
        "--prefer-offline",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
      ]);
      expect(install.status, install.stderr).toBe(0);
      // better-sqlite3 compiles its addon at install (about 2 minutes here, no prebuilt binary being reachable):
      // the one built for the repository is the same version's, so it stands in for that step.
      const installed = join(project, "node_modules", "better-sqlite3");
      const same =
        (JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { version: string }).version ===
        (
          JSON.parse(readFileSync(join(root, "node_modules", "better-sqlite3", "package.json"), "utf8")) as {
            version: string;
          }
        ).version;
      if (same)
        cpSync(join(root, "node_modules", "better-sqlite3", "build"), join(installed, "build"), {
          recursive: true,
        });
      else expect(step("npm", ["rebuild", "better-sqlite3"]).status).toBe(0);

      const npx = (...args: string[]) => step("npx", ["--no", "--", "reins", ...args]);
      const shown = npx("--version");
      expect(shown.status, shown.stderr).toBe(0);
      expect(shown.stdout.trim()).toBe(version);

      const init = npx("init", "claude");
      expect(init.status, init.stderr).toBe(0);
      expect(init.stdout).toMatch(/added reins hooks for 8 event\(s\) to .*\.claude\/settings\.local\.json/);
      // Nothing of it shows in git, the installed package aside (the app's own business).
      const dirty = execFileSync("git", ["-C", project, "status", "--porcelain"], { encoding: "utf8" });
      expect(
        dirty.split("\n").filter((line) => line !== "" && !/node_modules|package(-lock)?\.json/.test(line)),
      ).toEqual([]);

      const doctor = npx("doctor");
      expect(doctor.status, doctor.stdout + doctor.stderr).toBe(0);
      expect(doctor.stdout).toMatch(
        /ok {4}claude {2}hooks {10}8 hooks \(the client to the user's hook daemon\)/,
      );
      expect(doctor.stdout).toMatch(/nothing an installed agent needs is wrong/);

      // One tool call through the hook command init wrote, as Claude Code runs it.
      const settings = JSON.parse(readFileSync(join(project, ".claude", "settings.local.json"), "utf8")) as {
        hooks: Record<string, { hooks: { command: string }[] }[]>;
      };
      // Claude Code's tool calls post to the user's daemon (http hooks); a turn's start runs the command.
      const command = settings.hooks.SessionStart?.[0]?.hooks[0]?.command ?? "";
      expect(command).toContain(join(project, "node_modules", "reins", "bin", "reins.js"));
      const call = JSON.stringify({
        session_id: "npx",
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "ls" },
        cwd: project,
      });
      expect(step("sh", ["-c", command], call)).toMatchObject({ status: 0, stdout: "", stderr: "" });

      const status = npx("status", "session:npx", "--json");
      expect(status.status, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout)).toEqual([
        expect.objectContaining({ scope: "session:npx", events: 1 }),
      ]);
      expect(existsSync(join(project, ".reins", "reins.db"))).toBe(true);
    },
    6 * STEP_MS,
  );
});
