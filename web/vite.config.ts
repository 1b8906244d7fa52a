import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, gzipSync } from "node:zlib";
import preact from "@preact/preset-vite";
import { defineConfig, type Plugin } from "vite";

const outDir = fileURLToPath(new URL("../dist/web", import.meta.url));

/** Writes `.gz` and `.br` next to the page, each script and stylesheet, which `reins serve` sends when asked. */
function precompress(): Plugin {
  return {
    name: "reins-precompress",
    apply: "build",
    closeBundle() {
      const files = [
        join(outDir, "index.html"),
        join(outDir, "all.html"),
        ...readdirSync(join(outDir, "assets")).map((name) => join(outDir, "assets", name)),
      ];
      for (const file of files) {
        if (!/\.(html|js|css)$/.test(file)) continue;
        const body = readFileSync(file);
        writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
        writeFileSync(`${file}.br`, brotliCompressSync(body));
      }
    },
  };
}

/** The dashboard: `web/` built into `dist/web`, which `reins serve` serves at `/`. */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  plugins: [preact(), precompress()],
  logLevel: "warn",
  build: {
    outDir,
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    modulePreload: { polyfill: false },
    // The project's dashboard, and the user-level page of every project (`reins serve --all`).
    rollupOptions: {
      input: {
        index: fileURLToPath(new URL("index.html", import.meta.url)),
        all: fileURLToPath(new URL("all.html", import.meta.url)),
      },
    },
  },
});
