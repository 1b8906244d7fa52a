/**
 * The README's user path, on a clean HOME: `node scripts/install-user.js` from the clone into a fresh npm prefix
 * (the runtime dependencies resolved by npm from the registry, as a user's install does), then `reins` from
 * that PATH: `--version`, and in two new git projects `init claude` and a session each, whose events land in
 * that project's store and no other; then `reins status --all` shows both and `reins statusline` prints each
 * one's line. The install runs once for the file; each check is a test of its own.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stopHookDaemons } from "#test/processes.js";

const root = join(import.meta.dirname, "..");
const packageJson = (dir: string) =>
  JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
    version: string;
    engines: { node: string };
  };
const version = packageJson(root).version;
/** The install: a build of its own, then npm's global install; the one long step of this file. */
const INSTALL_MS = 540_000;
const STEP_MS = 60_000;

const dir = realpathSync(mkdtempSync(join(tmpdir(), "reins-user-install-")));
const prefix = join(dir, "prefix");
const prebuilds = join(dir, "prebuilds");
const env: Record<string, string> = {
  PATH: `${join(prefix, "bin")}:${process.env.PATH ?? "/usr/bin:/bin"}`,
  HOME: join(dir, "home"),
  XDG_STATE_HOME: join(dir, "home", ".local", "state"),
  REINS_RUNTIME_DIR: join(dir, "run"),
  npm_config_update_notifier: "false",
  // npm's cache from the repository's own install, so most of what it needs is already there.
  npm_config_cache: process.env.npm_config_cache ?? join(homedir(), ".npm"),
  npm_config_prefer_offline: "true",
  // better-sqlite3's addon, compiled for the repository at the same version, as the prebuilt binary
  // prebuild-install looks for before it downloads one (none can be downloaded here) or compiles (minutes).
  npm_config_better_sqlite3_local_prebuilds: prebuilds,
  NO_COLOR: "1",
};
for (const name of ["LANG", "TMPDIR"] as const)
  if (process.env[name] !== undefined) env[name] = process.env[name];

/** One guarded project of the test: a git repository of its own. */
interface Project {
  name: string;
  dir: string;
  session: string;
}
const projects: Project[] = ["one", "two"].map((name) => ({
  name,
  dir: join(dir, "code", name),
  session: `user-install-${name}`,
}));

/** Runs a command with the test's environment; a command that could not start fails with its error. */
function step(
  command: string,
  args: string[],
  options: { cwd?: string; input?: string; timeout?: number } = {},
) {
  const ran = spawnSync(command, args, {
    cwd: options.cwd ?? dir,
    env,
    encoding: "utf8",
    timeout: options.timeout ?? STEP_MS,
    ...(options.input !== undefined ? { input: options.input } : {}),
  });
  if (ran.error !== undefined)
    throw new Error(`${command} ${args.join(" ")}: ${ran.error.message}; ${ran.stderr}`);
  return ran;
}

/** `reins` as the user's shell finds it: from the install's bin on PATH. */
const reins = (project: Project, ...args: string[]) => step("reins", args, { cwd: project.dir });

let install: ReturnType<typeof step>;

beforeAll(() => {
  mkdirSync(env.HOME!, { recursive: true });
  mkdirSync(prebuilds, { recursive: true });
  const sqlite = join(root, "node_modules", "better-sqlite3");
  const tarball = `better-sqlite3-v${packageJson(sqlite).version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync("tar", ["czf", join(prebuilds, tarball), "-C", sqlite, "build/Release/better_sqlite3.node"]);
  install = step(process.execPath, [join(root, "scripts", "install-user.js"), "--prefix", prefix], {
    cwd: root,
    timeout: INSTALL_MS,
  });
  for (const project of projects) {
    mkdirSync(project.dir, { recursive: true });
    execFileSync("git", ["init", "-q", project.dir]);
  }
}, INSTALL_MS + STEP_MS);

afterAll(async () => {
  await stopHookDaemons(env);
  rmSync(dir, { recursive: true, force: true });
}, STEP_MS);

describe("the README's user path on a clean HOME", () => {
  it("is the command the README shows", () => {
    expect(readFileSync(join(root, "README.md"), "utf8")).toMatch(/^node scripts\/install-user\.js(\s|$)/m);
  });

  it("installs reins with no engine warning, of its own or of its dependencies", () => {
    const output = install.stdout + install.stderr;
    expect(install.status, output).toBe(0);
    expect(output).toContain(`install-user: reins ${version} is ${join(prefix, "bin", "reins")}`);
    // Each EBADENGINE warning names its package on the line after it; reins itself must never be one.
    const warned = [...output.matchAll(/EBADENGINE {3}package: '([^']+)'/g)].map((m) =>
      m[1]!.replace(/@[^@]*$/, ""),
    );
    expect(warned).not.toContain("reins");
    // Nor any of its dependencies': those that would on Node 20 are pinned below it (docs/install.md).
    expect(warned).toEqual([]);
    expect(packageJson(join(prefix, "lib", "node_modules", "reins")).engines.node).toBe(
      "^20.19.0 || >=22.12.0",
    );
  });

  it(
    "puts reins on the PATH: reins --version",
    () => {
      const shown = reins(projects[0]!, "--version");
      expect(shown.status, shown.stderr).toBe(0);
      expect(shown.stdout.trim()).toBe(version);
      expect(step("sh", ["-c", "command -v reins"]).stdout.trim()).toBe(join(prefix, "bin", "reins"));
    },
    2 * STEP_MS,
  );

  it(
    "guards two projects: init claude and a session in each, recorded in that project's store only",
    () => {
      for (const project of projects) {
        const init = reins(project, "init", "claude");
        expect(init.status, init.stdout + init.stderr).toBe(0);
        expect(init.stdout).toMatch(
          /added reins hooks for 8 event\(s\) to .*\.claude\/settings\.local\.json/,
        );
        for (const call of [
          { hook_event_name: "SessionStart", source: "startup" },
          { hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" } },
        ]) {
          const input = JSON.stringify({ session_id: project.session, cwd: project.dir, ...call });
          const answered = step("reins", ["hook", "claude"], { cwd: project.dir, input });
          expect(answered.status, answered.stderr).toBe(0);
        }
      }
      for (const project of projects) {
        const status = reins(project, "sessions", "--json");
        expect(status.status, status.stderr).toBe(0);
        const scopes = (JSON.parse(status.stdout) as { scope: string; events: number }[]).map((s) => [
          s.scope,
          s.events,
        ]);
        expect(scopes).toEqual([[`session:${project.session}`, 2]]);
      }
    },
    8 * STEP_MS,
  );

  it(
    "shows both projects at once: reins status --all, and each one's status line",
    () => {
      const all = reins(projects[0]!, "status", "--all", "--json");
      expect(all.status, all.stderr).toBe(0);
      const shown = (JSON.parse(all.stdout) as { projects: { root: string; sessions: { total: number } }[] })
        .projects;
      for (const project of projects)
        expect(shown.find((p) => p.root === project.dir)?.sessions.total, project.name).toBe(1);
      for (const project of projects) {
        const input = JSON.stringify({
          session_id: project.session,
          cwd: project.dir,
          workspace: { current_dir: project.dir, project_dir: project.dir },
          model: { id: "claude-sonnet-4-5", display_name: "Sonnet" },
        });
        const line = step("reins", ["statusline"], { cwd: project.dir, input });
        expect(line.status, line.stderr).toBe(0);
        expect(line.stdout, project.name).toMatch(/^reins · .*tokens/);
        expect(line.stdout, project.name).not.toContain("not guarding");
      }
    },
    4 * STEP_MS,
  );
});
