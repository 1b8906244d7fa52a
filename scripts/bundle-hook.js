// `npm run build`, after tsc: bundles the hook command's entry into one file, dist/hook.js. The in-process
// fallback starts a Node process per agent tool call, and Node's ESM loader spends more time walking
// hundreds of small files (zod alone is ~60 ms) than running them; one minified file loads in a few ms.
import { build } from "esbuild";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");

await build({
  entryPoints: [join(root, "dist", "hooks", "hook-main.js")],
  // In dist/, so the external packages below resolve from node_modules as the tsc output's do.
  outfile: join(root, "dist", "hook.js"),
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minify: true,
  sourcemap: true,
  // A native addon, and a client loaded only when a Redis store is opened.
  external: ["better-sqlite3", "ioredis"],
  logLevel: "warning",
});
