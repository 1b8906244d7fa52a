// `npm start` and `npm test` run this first: it installs the dependencies with `npm ci` when node_modules is
// missing or older than package-lock.json (a fresh clone, a pull that changed the lockfile), and does nothing
// otherwise. Plain Node and nothing else, since the dependencies may not be there yet.
// `node scripts/ensure-deps.js [--dry-run] [root]`: --dry-run prints what it would do and installs nothing.
import { spawnSync } from "node:child_process";
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

// import.meta.dirname needs Node 20.11; reins runs on 20.9.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const dryRun = args.includes("--dry-run");
  const root = resolve(args.find((a) => a !== "--dry-run") ?? fileURLToPath(new URL("..", import.meta.url)));
  const state = depsState(root);
  if (dryRun) console.log(`${state.install ? "install" : "skip"}: ${state.why}`);
  else if (state.install) {
    console.error(`reins: ${state.why}; installing the dependencies with npm ci`);
    // Under npm (prestart, pretest) the npm that runs us; else the one on PATH.
    const npm = process.env.npm_execpath ?? "";
    const ci = ["ci", "--no-audit", "--no-fund"];
    const result =
      basename(npm) === "npm-cli.js"
        ? spawnSync(process.execPath, [npm, ...ci], { cwd: root, stdio: "inherit" })
        : spawnSync("npm", ci, { cwd: root, stdio: "inherit", shell: process.platform === "win32" });
    process.exitCode = result.status ?? 1;
  } else if (state.why.includes("links to")) console.error(`reins: ${state.why}`);
}
