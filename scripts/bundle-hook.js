// `npm run build`, after tsc: bundles the hook command (dist/hooks/hook-main.js and what it imports) into
// one CommonJS file, dist/hook.cjs, which dist/hooks/hook-bundle.js runs through V8's code cache. The
// in-process fallback starts a Node process per agent tool call: Node's ESM loader walking hundreds of
// small files, and compiling them, cost more than answering the hook.
import { build } from "esbuild";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");

await build({
  entryPoints: [join(root, "dist", "hooks", "hook-main.js")],
  // In dist/, so the external packages below resolve from node_modules as the tsc output's do.
  outfile: join(root, "dist", "hook.cjs"),
  bundle: true,
  // CommonJS, not ESM: V8's code cache is only available to scripts (node:vm) on Node 20.
  format: "cjs",
  platform: "node",
  target: "node20",
  minify: true,
  sourcemap: true,
  sourcesContent: false,
  // A native addon, and a client loaded only when a Redis store is opened.
  external: ["better-sqlite3", "ioredis"],
  // import("ioredis") becomes require(): a script run through node:vm has no dynamic import.
  supported: { "dynamic-import": false },
  define: { "import.meta.url": "__bundleUrl" },
  banner: { js: 'var __bundleUrl = require("node:url").pathToFileURL(__filename).href;' },
  logLevel: "warning",
});
