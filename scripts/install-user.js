// `node scripts/install-user.js [--prefix <dir>]`: puts `reins` on a user's PATH from a fresh clone, without the
// development set (2.6 GB: the agent CLIs the tests drive, the browser tooling...). See docs/install.md.
//
// The package ships dist/, which a clone does not have, and `npm pack`'s prepack builds it with the whole
// development set (it type-checks against the SDKs the adapters speak to). So this script builds in a
// throwaway copy of the clone that installs only the build's tools, pinned by package-lock.json: TypeScript
// (emitting without a second type check: CI checks the types), esbuild (the hook bundle) and Vite with
// Preact and uPlot (the dashboard). It packs that build as `npm pack` would (`files` in package.json), and
// installs the tarball with `npm install -g --prefix`, which resolves the runtime dependencies from the
// registry as any user's install does and compiles better-sqlite3 when no prebuilt binary can be had.
// The clone itself is left as it was.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The packages the build runs, kept at the versions package-lock.json pins. */
const BUILD_TOOLS = [
  "typescript",
  "esbuild",
  "vite",
  "@preact/preset-vite",
  "preact",
  "uplot",
  "@types/node",
];
/** What the build reads, copied into the throwaway folder. */
const SOURCES = [
  "package.json",
  "package-lock.json",
  "tsconfig.json",
  "tsconfig.build.json",
  "README.md",
  "LICENSE",
  "bin",
  "schema",
  "scripts",
  "src",
  "web",
];

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
if (major < 20 || (major === 20 && minor < 19) || (major === 22 && minor < 12) || major === 21) {
  process.stderr.write(
    `install-user: reins needs Node.js ^20.19.0 or >=22.12.0; this is ${process.version}\n`,
  );
  process.exit(2);
}

function usage(line) {
  process.stderr.write(`install-user: ${line}\nusage: node scripts/install-user.js [--prefix <dir>]\n`);
  process.exit(2);
}

function prefixOf(argv) {
  if (argv.length === 0) return process.env.REINS_PREFIX ?? join(homedir(), ".local");
  if (argv[0] === "--prefix" && argv.length === 2 && argv[1] !== "") return resolve(argv[1]);
  return usage(`unknown arguments: ${argv.join(" ")}`);
}

/** Runs a step with its output shown; a failed step ends the install with its name. */
function step(what, command, args, cwd) {
  process.stdout.write(`install-user: ${what}\n`);
  const ran = spawnSync(command, args, { cwd, stdio: "inherit" });
  if (ran.error !== undefined || ran.status !== 0) {
    process.stderr.write(`install-user: ${what} failed (${ran.error?.message ?? `exit ${ran.status}`})\n`);
    process.exit(1);
  }
}

const prefix = prefixOf(process.argv.slice(2));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const stage = mkdtempSync(join(tmpdir(), "reins-install-"));
try {
  for (const entry of SOURCES)
    if (existsSync(join(root, entry)))
      cpSync(join(root, entry), join(stage, entry), {
        recursive: true,
        filter: (from) => !from.includes(`${join(root, "src")}/`) || !from.endsWith(".test.ts"),
      });
  const manifest = JSON.parse(readFileSync(join(stage, "package.json"), "utf8"));
  manifest.devDependencies = Object.fromEntries(
    BUILD_TOOLS.map((name) => [name, manifest.devDependencies[name]]),
  );
  writeFileSync(join(stage, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  // No install scripts: the build loads no native addon, and better-sqlite3 is compiled where it is installed.
  step("the build's tools", npm, ["install", "--ignore-scripts", "--no-audit", "--no-fund"], stage);
  const bin = (name) => join(stage, "node_modules", ".bin", name);
  step("compiling", bin("tsc"), ["-p", "tsconfig.build.json", "--noCheck"], stage);
  step("the hook bundle", process.execPath, [join("scripts", "bundle-hook.js")], stage);
  step("the dashboard", bin("vite"), ["build", "-c", join("web", "vite.config.ts")], stage);
  step("packing", npm, ["pack", "--ignore-scripts", "--silent", "--pack-destination", stage], stage);
  const tarball = join(stage, `reins-${manifest.version}.tgz`);
  // npm 11 asks a global install to name the dependencies whose install scripts may run: better-sqlite3's
  // fetches or compiles its addon. Older npm runs them without being asked.
  const npmMajor = Number(spawnSync(npm, ["--version"], { encoding: "utf8" }).stdout.split(".")[0]);
  const allow = npmMajor >= 11 ? ["--allow-scripts=better-sqlite3"] : [];
  // npm reads its global config from the prefix's etc/npmrc: installing into another prefix would leave the
  // machine's behind (a CA file, a registry, a proxy), and every fetch could then fail. It is named instead.
  const globalConfig = spawnSync(npm, ["config", "get", "globalconfig"], { encoding: "utf8" }).stdout.trim();
  const keep = globalConfig !== "" && existsSync(globalConfig) ? [`--globalconfig=${globalConfig}`] : [];
  step(
    `installing into ${prefix}`,
    npm,
    ["install", "--global", "--prefix", prefix, ...keep, "--no-audit", "--no-fund", ...allow, tarball],
    stage,
  );
  const binDir = process.platform === "win32" ? prefix : join(prefix, "bin");
  process.stdout.write(`install-user: reins ${manifest.version} is ${join(binDir, "reins")}\n`);
  if (!(process.env.PATH ?? "").split(delimiter).includes(binDir))
    process.stdout.write(
      `install-user: ${binDir} is not on your PATH; add it: export PATH="${binDir}:$PATH"\n`,
    );
} finally {
  rmSync(stage, { recursive: true, force: true });
}
