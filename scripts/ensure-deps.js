// `npm start` and `npm test` run this first: it installs the dependencies with `npm ci` when node_modules is
// missing or older than package-lock.json (a fresh clone, a pull that changed the lockfile), and does nothing
// otherwise; with --build it then builds reins. Plain Node and nothing else, since the dependencies may not
// be there yet.
// `node scripts/ensure-deps.js [--dry-run] [--build [--quiet]] [root]`:
// - --dry-run prints what it would do about the dependencies and installs and builds nothing;
// - --build runs `npm run build` after, saying so before and with the seconds it took after (a fresh clone
//   is silent for a while otherwise: npm ci, then tsc, the hook bundle and the dashboard);
// - --quiet (for `npm test`) says only the seconds the build took: one line when nothing is installed.
import { spawn } from "node:child_process";
import { lstatSync, realpathSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The modification time of `path` in milliseconds, or null when there is none. */
function mtime(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

/**
 * What to do about the dependencies of the project at `root`: `{ install: false, why }` or
 * `{ install: true, why }`. npm writes node_modules/.package-lock.json last on every install (`npm ci`,
 * `npm install`), so a lockfile newer than it was changed after the install.
 */
export function depsState(root) {
  const lock = mtime(join(root, "package-lock.json"));
  if (lock === null) return { install: false, why: "no package-lock.json" };
  const modules = join(root, "node_modules");
  let linked = false;
  try {
    linked = lstatSync(modules).isSymbolicLink();
  } catch {
    return { install: true, why: "node_modules is missing" };
  }
  const installed = mtime(join(modules, ".package-lock.json"));
  const stale =
    installed === null
      ? "node_modules has no .package-lock.json (an install that did not finish?)"
      : installed < lock
        ? "node_modules is older than package-lock.json"
        : null;
  if (stale === null) return { install: false, why: "node_modules is up to date" };
  // A node_modules linked from another checkout (a git worktree) is that checkout's to install.
  if (linked)
    return { install: false, why: `${stale}, but it links to ${realpathSync(modules)}: not reinstalled` };
  return { install: true, why: stale };
}

/** The line said before `npm ci` runs: what is installed and why. npm's own progress follows it. */
export function installLine(why) {
  return `reins: installing the dependencies with npm ci, as ${why}`;
}

/** The line said before the build starts. */
export const BUILD_LINE = "reins: building reins (TypeScript, the hook bundle, the dashboard)…";

/** The line said when the build is done, with the seconds it took. */
export function builtLine(elapsedMs) {
  return `reins: built in ${(elapsedMs / 1000).toFixed(1)} s`;
}

/** The line said every PROGRESS_MS while a long step runs where npm shows no progress of its own. */
export function stillLine(what, elapsedMs) {
  return `reins: still ${what} (${Math.round(elapsedMs / 1000)} s)…`;
}

const PROGRESS_MS = 20_000;

/**
 * Runs npm with `args` in `root`, its output shown as it comes; resolves with its exit status. npm draws
 * progress only on a terminal: elsewhere (a CI log, a pipe) a line says every 20 s that `what` goes on.
 */
function npm(root, args, what) {
  // Under npm (prestart, pretest) the npm that runs us; else the one on PATH.
  const cli = process.env.npm_execpath ?? "";
  const child =
    basename(cli) === "npm-cli.js"
      ? spawn(process.execPath, [cli, ...args], { cwd: root, stdio: "inherit" })
      : spawn("npm", args, { cwd: root, stdio: "inherit", shell: process.platform === "win32" });
  const started = Date.now();
  const ticker = process.stderr.isTTY
    ? null
    : setInterval(() => console.error(stillLine(what, Date.now() - started)), PROGRESS_MS);
  return new Promise((resolve) => {
    child.on("error", () => resolve(1));
    child.on("close", (code) => {
      if (ticker !== null) clearInterval(ticker);
      resolve(code ?? 1);
    });
  });
}

// import.meta.dirname needs Node 20.11; this script runs before anything has checked the Node version.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const flags = new Set(args.filter((a) => a.startsWith("--")));
  const root = resolve(
    args.find((a) => !a.startsWith("--")) ?? fileURLToPath(new URL("..", import.meta.url)),
  );
  const unknown = [...flags].filter((f) => !["--dry-run", "--build", "--quiet"].includes(f));
  const state = depsState(root);
  if (unknown.length > 0) {
    console.error(
      `reins: ensure-deps: unknown option ${unknown.join(", ")} (use --dry-run, --build, --quiet)`,
    );
    process.exitCode = 2;
  } else if (flags.has("--dry-run")) console.log(`${state.install ? "install" : "skip"}: ${state.why}`);
  else {
    let status = 0;
    if (state.install) {
      console.error(installLine(state.why));
      status = await npm(root, ["ci", "--no-audit", "--no-fund"], "installing the dependencies");
    } else if (state.why.includes("links to")) console.error(`reins: ${state.why}`);
    if (status === 0 && flags.has("--build")) {
      if (!flags.has("--quiet")) console.error(BUILD_LINE);
      const started = Date.now();
      status = await npm(root, ["run", "build", "--silent"], "building");
      if (status === 0) console.error(builtLine(Date.now() - started));
      else console.error(`reins: the build failed (npm run build exited ${status})`);
    }
    process.exitCode = status;
  }
}
