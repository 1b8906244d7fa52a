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
import { join } from "node:path";

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

await build({
  ...cached,
  entryPoints: [join(root, "dist", "hook-entry", "hook-main.js")],
  // In dist/, so the external packages below resolve from node_modules as the tsc output's do.
  outfile: join(root, "dist", "hook.cjs"),
});

await build({
  ...cached,
  entryPoints: [join(root, "dist", "cli", "quick-main.js")],
  // In dist/cli/, where the modules it bundles are: the paths they compute from import.meta.url (which is
  // the bundle's own URL here) reach `../../package.json`, `../../bin/reins.js` and `../hook.cjs` as before.
  outfile: join(root, "dist", "cli", "quick.cjs"),
});

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
