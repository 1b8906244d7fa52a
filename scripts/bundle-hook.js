// `npm run build`, after tsc: bundles the hook command (and `reins status`, `reins doctor`) into CommonJS
// files that bin/reins.js (itself CommonJS, see bin/package.json) requires for `reins hook <agent>`:
// - dist/hook.cjs: dist/hook-entry/hook-main.js and what it imports, run through V8's code cache;
// - dist/hook-entry/hook-loader.cjs: dist/hook-entry/hook-bundle.js, which runs dist/hook.cjs through
//   that cache;
// - dist/cli/quick.cjs: dist/cli/quick-main.js (`reins status` and `reins doctor`) and what it imports, run
//   through the same cache by dist/hook-entry/quick-loader.cjs (dist/hook-entry/quick-bundle.js).
// The in-process fallback starts a Node process per agent tool call: Node's ESM loader starting and walking
// hundreds of small files, and compiling them, cost more than answering the hook.
import { build } from "esbuild";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

const root = join(import.meta.dirname, "..");
/** What every bundle shares: CommonJS for Node 20 (V8's code cache is only for scripts, through node:vm). */
const common = {
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  logLevel: "warning",
  define: { "import.meta.url": "__bundleUrl" },
  banner: { js: 'var __bundleUrl = require("node:url").pathToFileURL(__filename).href;' },
};

/** What both code-cached bundles share: one minified file, its packages but two inside. */
const cached = {
  ...common,
  minify: true,
  sourcemap: true,
  sourcesContent: false,
  // A native addon, and a client loaded only when a Redis store is opened.
  external: ["better-sqlite3", "ioredis"],
  // jsonc-parser's `main` is a UMD build that requires its own files at run time, which a bundle cannot
  // find: its ES module build bundles whole.
  alias: { "jsonc-parser": "jsonc-parser/lib/esm/main.js" },
  // import("ioredis") becomes require(): a script run through node:vm has no dynamic import.
  supported: { "dynamic-import": false },
};

/**
 * Each bundled module's `import.meta.url` as where the module itself lies in dist/, found from the bundle's
 * own place at run time: the paths a module computes from it (`../../../package.json` from
 * dist/base/config/) hold wherever in dist/ the bundle sits, and in any copy of the package.
 */
function ownUrls(outDir) {
  return {
    name: "own-urls",
    setup(build) {
      build.onLoad({ filter: /\.js$/ }, (args) => {
        const text = readFileSync(args.path, "utf8");
        if (!text.includes("import.meta.url")) return undefined;
        const from = relative(outDir, args.path).split("\\").join("/");
        return {
          contents: text.replaceAll("import.meta.url", `new URL(${JSON.stringify(from)}, __bundleUrl).href`),
          loader: "js",
        };
      });
    },
  };
}

await build({
  ...cached,
  plugins: [ownUrls(join(root, "dist"))],
  entryPoints: [join(root, "dist", "hook-entry", "hook-main.js")],
  // In dist/, so the external packages below resolve from node_modules as the tsc output's do.
  outfile: join(root, "dist", "hook.cjs"),
});

// The quick bundle holds what `reins status` and `reins doctor` always run. What they import only for some
// options (`status --all` and `--daemons`: the server's and daemon's modules; a Redis store) stays out,
// imported at run time from dist/ as the module path does: each `import("./x.js")` of one of those
// becomes `__import("<x from dist/cli/>")`, which requireCached (src/hook-entry/code-cache.ts) provides.
const quickDir = join(root, "dist", "cli");
/** Loaded with the policy by every command: in the bundle, not imported late. */
const alwaysLoaded = new Set([join(root, "dist", "base", "config", "load-policy.js")]);
const late = new Set();
const quick = await build({
  ...cached,
  entryPoints: [join(quickDir, "quick-main.js")],
  // In dist/cli/, beside the modules of cli/ it bundles; every module's import.meta.url is its own (ownUrls).
  outfile: join(quickDir, "quick.cjs"),
  supported: { "dynamic-import": true },
  write: false,
  plugins: [
    ownUrls(quickDir),
    {
      name: "late-imports",
      setup(build) {
        build.onResolve({ filter: /^\.\.?\// }, (args) => {
          const path = join(dirname(args.importer), args.path);
          if (args.kind !== "dynamic-import" || alwaysLoaded.has(path)) return undefined;
          const specifier = relative(quickDir, path).startsWith("..")
            ? relative(quickDir, path)
            : `./${relative(quickDir, path)}`;
          late.add(specifier);
          return { path: specifier, external: true };
        });
      },
    },
  ],
});
for (const file of quick.outputFiles) {
  let text = file.text;
  if (file.path.endsWith(".cjs")) {
    for (const specifier of late) {
      const call = `import(${JSON.stringify(specifier)})`;
      // Each late import must be found as esbuild wrote it, or the bundle would fail only when it is run.
      if (!text.includes(call)) throw new Error(`bundle-hook: ${call} not found in ${file.path}`);
      text = text.replaceAll(call, `__import(${JSON.stringify(specifier)})`);
    }
    if (/\bimport\(/.test(text)) throw new Error(`bundle-hook: an import() is left in ${file.path}`);
  }
  writeFileSync(file.path, text);
}

await build({
  ...common,
  entryPoints: [join(root, "dist", "hook-entry", "hook-bundle.js")],
  // Beside hook-bundle.js, so the path it computes for dist/hook.cjs holds.
  outfile: join(root, "dist", "hook-entry", "hook-loader.cjs"),
});

await build({
  ...common,
  entryPoints: [join(root, "dist", "hook-entry", "quick-bundle.js")],
  // Beside quick-bundle.js, so the path it computes for dist/cli/quick.cjs holds.
  outfile: join(root, "dist", "hook-entry", "quick-loader.cjs"),
});
