import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * scripts/ensure-deps.js, which `npm start` and `npm test` run first: `npm ci` when node_modules is missing
 * or older than package-lock.json, nothing otherwise. Decided on temporary projects; the install itself is
 * a stand-in npm that records how it was called and writes what npm ci writes last.
 */

const root = join(import.meta.dirname, "..");
const script = join(root, "scripts", "ensure-deps.js");
const HOUR = 3_600_000;

/** A project with a lockfile written at `lockAt`, and node_modules installed at `installedAt` (or none). */
function project(lockAt: number, installedAt: number | "none" | "unfinished"): string {
  const dir = mkdtempSync(join(tmpdir(), "reins-deps-"));
  writeFileSync(join(dir, "package-lock.json"), "{}");
  utimesSync(join(dir, "package-lock.json"), new Date(lockAt), new Date(lockAt));
  if (installedAt === "none") return dir;
  mkdirSync(join(dir, "node_modules"));
  if (installedAt === "unfinished") return dir;
  const hidden = join(dir, "node_modules", ".package-lock.json");
  writeFileSync(hidden, "{}");
  utimesSync(hidden, new Date(installedAt), new Date(installedAt));
  return dir;
}

/** What the script says it would do for the project at `dir`. */
function decision(dir: string): string {
  const run = spawnSync(process.execPath, [script, "--dry-run", dir], { encoding: "utf8" });
  expect(run.stderr).toBe("");
  return run.stdout.trim();
}

describe("scripts/ensure-deps.js", () => {
  const now = Date.now();

  it.each([
    ["a fresh clone (no node_modules)", now, "none", "install: node_modules is missing"],
    [
      "a pull that changed the lockfile",
      now,
      now - HOUR,
      "install: node_modules is older than package-lock.json",
    ],
    ["an install that did not finish", now, "unfinished", "install: node_modules has no .package-lock.json"],
    [
      "node_modules installed after the lockfile (npm ci)",
      now - HOUR,
      now,
      "skip: node_modules is up to date",
    ],
    [
      "node_modules and lockfile written together (npm install)",
      now,
      now,
      "skip: node_modules is up to date",
    ],
  ] as const)("%s", (_what, lockAt, installedAt, expected) => {
    expect(decision(project(lockAt, installedAt))).toContain(expected);
  });

  it("leaves alone a node_modules linked from another checkout, even an older one", () => {
    const other = project(now - 2 * HOUR, now - 2 * HOUR);
    const worktree = project(now, "none");
    symlinkSync(join(other, "node_modules"), join(worktree, "node_modules"));
    expect(decision(worktree)).toMatch(
      /^skip: node_modules is older than package-lock.json, but it links to /,
    );
  });

  it("does nothing in a folder without a lockfile", () => {
    expect(decision(mkdtempSync(join(tmpdir(), "reins-deps-")))).toBe("skip: no package-lock.json");
  });

  it("runs npm ci once with a one-line message; after it the install is fresh and it does nothing", () => {
    const dir = project(now, now - HOUR);
    const log = join(dir, "npm-calls.txt");
    const fakeNpm = join(dir, "fake", "npm-cli.js");
    mkdirSync(join(dir, "fake"));
    // What npm ci leaves behind that the check reads: node_modules/.package-lock.json, written last.
    writeFileSync(
      fakeNpm,
      `const fs = require("node:fs");
       fs.appendFileSync(${JSON.stringify(log)}, process.argv.slice(2).join(" ") + " in " + process.cwd() + "\\n");
       fs.writeFileSync("node_modules/.package-lock.json", "{}");`,
    );
    const run = () =>
      spawnSync(process.execPath, [script, dir], {
        encoding: "utf8",
        env: { ...process.env, npm_execpath: fakeNpm },
      });
    const first = run();
    expect(first.status).toBe(0);
    expect(first.stdout).toBe("");
    expect(first.stderr).toBe(
      "reins: installing the dependencies with npm ci, as node_modules is older than package-lock.json\n",
    );
    expect(readFileSync(log, "utf8")).toBe(`ci --no-audit --no-fund in ${dir}\n`);
    const second = run();
    expect(second).toMatchObject({ status: 0, stdout: "", stderr: "" });
    expect(readFileSync(log, "utf8").split("\n").filter(Boolean)).toHaveLength(1);
  });

  it("stops npm start and npm test when npm ci fails", () => {
    const dir = project(now, "none");
    const fakeNpm = join(dir, "npm-cli.js");
    writeFileSync(fakeNpm, "process.exit(7);");
    const run = spawnSync(process.execPath, [script, dir], {
      encoding: "utf8",
      env: { ...process.env, npm_execpath: fakeNpm },
    });
    expect(run.status).toBe(7);
  });

  /**
   * A project and a stand-in npm that records each call, writes what npm ci writes last, and exits with
   * `buildStatus` from `npm run build`.
   */
  function withFakeNpm(installedAt: number | "none", buildStatus = 0) {
    const dir = project(now, installedAt);
    const log = join(dir, "npm-calls.txt");
    const fakeNpm = join(dir, "fake", "npm-cli.js");
    mkdirSync(join(dir, "fake"));
    writeFileSync(
      fakeNpm,
      `const fs = require("node:fs");
       const args = process.argv.slice(2);
       fs.appendFileSync(${JSON.stringify(log)}, args.join(" ") + "\\n");
       if (args[0] === "ci") { fs.mkdirSync("node_modules", { recursive: true }); fs.writeFileSync("node_modules/.package-lock.json", "{}"); }
       if (args[0] === "run") process.exit(${buildStatus});`,
    );
    const run = (...flags: string[]) =>
      spawnSync(process.execPath, [script, ...flags, dir], {
        encoding: "utf8",
        env: { ...process.env, npm_execpath: fakeNpm },
      });
    return { run, calls: () => readFileSync(log, "utf8").trim().split("\n") };
  }

  it("with --build on a fresh clone says it installs and why, then that it builds, then how long that took", () => {
    const { run, calls } = withFakeNpm("none");
    const started = run("--build");
    expect(started.status).toBe(0);
    expect(started.stdout).toBe("");
    expect(started.stderr.split("\n")).toEqual([
      "reins: installing the dependencies with npm ci, as node_modules is missing",
      "reins: building reins (TypeScript, the hook bundle, the dashboard)…",
      expect.stringMatching(/^reins: built in \d+\.\d s$/),
      "",
    ]);
    expect(calls()).toEqual(["ci --no-audit --no-fund", "run build --silent"]);
  });

  it("with --build --quiet and nothing to install prints one short line (npm test's pretest)", () => {
    const { run, calls } = withFakeNpm(now + HOUR);
    const quiet = run("--build", "--quiet");
    expect(quiet.status).toBe(0);
    expect(quiet.stdout).toBe("");
    expect(quiet.stderr).toMatch(/^reins: built in \d+\.\d s\n$/);
    expect(calls()).toEqual(["run build --silent"]);
  });

  it("says in one line that the build failed and stops with its exit status", () => {
    const { run } = withFakeNpm(now + HOUR, 3);
    const failed = run("--build");
    expect(failed.status).toBe(3);
    expect(failed.stderr.trim().split("\n").at(-1)).toBe("reins: the build failed (npm run build exited 3)");
  });

  it("does not build when npm ci fails", () => {
    const dir = project(now, "none");
    const fakeNpm = join(dir, "npm-cli.js");
    writeFileSync(fakeNpm, "process.exit(7);");
    const run = spawnSync(process.execPath, [script, "--build", dir], {
      encoding: "utf8",
      env: { ...process.env, npm_execpath: fakeNpm },
    });
    expect(run.status).toBe(7);
    expect(run.stderr).not.toContain("building");
  });

  it("gives the build's time in seconds to a tenth", async () => {
    const { builtLine } = (await import(pathToFileURL(script).href)) as {
      builtLine: (elapsedMs: number) => string;
    };
    expect(builtLine(97_449)).toBe("reins: built in 97.4 s");
    expect(builtLine(0)).toBe("reins: built in 0.0 s");
  });

  it("says every so often that a long install or build goes on, where npm draws no progress", async () => {
    const { stillLine } = (await import(pathToFileURL(script).href)) as {
      stillLine: (what: string, elapsedMs: number) => string;
    };
    expect(stillLine("installing the dependencies", 40_400)).toBe(
      "reins: still installing the dependencies (40 s)…",
    );
  });

  it("refuses an option it does not know, in one line", () => {
    const run = spawnSync(process.execPath, [script, "--biuld", root], { encoding: "utf8" });
    expect(run.status).toBe(2);
    expect(run.stderr).toBe("reins: ensure-deps: unknown option --biuld (use --dry-run, --build, --quiet)\n");
  });

  it("finds this repository's own install fresh, as npm test has just made sure", () => {
    expect(decision(root)).toMatch(/^skip: /);
  });
});
