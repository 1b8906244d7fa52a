import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { finished } from "#test/processes.js";

/**
 * What `npm pack` puts in the tarball: what `npx reins` and the package's entry points need, nothing else.
 * Scripts are not run (no prepack build): the tarball is packed from the dist/ that `npm test` built.
 */

const root = join(import.meta.dirname, "..");
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  bin: Record<string, string>;
  exports: Record<string, unknown>;
};

interface Packed {
  filename: string;
  size: number;
  unpackedSize: number;
  files: { path: string; mode: number }[];
}

/** How long one step of the packed-package test (a child process, the server's start) may take, ms. */
const STEP_MS = 20_000;

function pack(args: string[]): Packed {
  const out = execFileSync("npm", ["pack", "--json", "--ignore-scripts", ...args], {
    cwd: root,
    encoding: "utf8",
    timeout: STEP_MS,
    env: { ...process.env, npm_config_update_notifier: "false", npm_config_loglevel: "error" },
  });
  const [packed] = JSON.parse(out) as Packed[];
  return packed!;
}

/** Every file an `exports` condition or subpath points at, and the bin's. */
function entryPoints(): string[] {
  const targets: string[] = Object.values(manifest.bin);
  const walk = (value: unknown) => {
    if (typeof value === "string") targets.push(value);
    else if (value !== null && typeof value === "object") Object.values(value).forEach(walk);
  };
  walk(manifest.exports);
  return targets.map((t) => t.replace(/^\.\//, ""));
}

/** Where a packed file may be; anything else is not needed to run reins. */
const ALLOWED = [/^bin\//, /^dist\//, /^schema\/[^/]+\.json$/, /^(package\.json|README\.md|LICENSE)$/];
/** What must never ship, wherever it is (dist/ included). */
const FORBIDDEN = [
  /\.map$/,
  /\.test\./,
  /(^|\/)test\//,
  /(^|\/)bench\//,
  /(^|\/)artifacts\//,
  /(^|\/)\.reins\//,
  /(^|\/)node_modules\//,
  /^web\/src\//,
  /^src\/.*\.ts$/,
];
/** Files the code reads beside itself at run time (see their `new URL(..., import.meta.url)`). */
const RUNTIME_FILES = [
  "bin/package.json", // makes bin/reins.js CommonJS
  "bin/reins-hook", // the sh + curl hook client that `reins init` installs without a C compiler
  "src/client/reins-hook.c", // the native hook client `reins init` compiles
  "src/client/hmac-sha256.h", // its SHA-256 and HMAC, included by it
  "dist/hook.cjs", // the bundled hook command
  "dist/hook-entry/hook-loader.cjs",
  "dist/web/index.html", // the dashboard `reins serve` serves
  "dist/web/all.html", // the page of every project `reins serve --all` serves
];

describe("npm pack", () => {
  const packed = pack(["--dry-run"]);
  const paths = packed.files.map((f) => f.path);

  it("ships the bin, every entry point with its types, the schemas, the dashboard and the README", () => {
    const schemas = readdirSync(join(root, "schema")).map((f) => `schema/${f}`);
    expect(schemas).toContain("schema/reins.config.schema.json");
    const html = readFileSync(join(root, "dist", "web", "index.html"), "utf8");
    const assets = [...html.matchAll(/(?:src|href)="\.\/(assets\/[^"]+)"/g)].map((m) => `dist/web/${m[1]}`);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    const required = [
      "package.json",
      "README.md",
      ...(existsSync(join(root, "LICENSE")) ? ["LICENSE"] : []),
      ...entryPoints(),
      ...schemas,
      ...RUNTIME_FILES,
      ...assets,
    ];
    expect(required).toContain("bin/reins.js");
    expect(required).toContain("dist/base/store/sqlite.d.ts");
    expect(required.filter((file) => !paths.includes(file))).toEqual([]);
    // Agents run the bin and the sh client directly.
    for (const bin of ["bin/reins.js", "bin/reins-hook"])
      expect(packed.files.find((f) => f.path === bin)!.mode & 0o111, bin).not.toBe(0);
  });

  it("ships nothing else: no sources, tests, benchmarks, source maps, run artefacts or dashboard sources", () => {
    expect(paths.filter((p) => FORBIDDEN.some((re) => re.test(p)))).toEqual([]);
    const client = ["src/client/hmac-sha256.h", "src/client/reins-hook.c"];
    expect(paths.filter((p) => !client.includes(p) && !ALLOWED.some((re) => re.test(p)))).toEqual([]);
    expect(paths.filter((p) => p.startsWith("src/")).sort()).toEqual(client);
  });

  it(
    "is a package that works on its own: the CLI, the hook command, the dashboard and every entry point",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "reins-pack-"));
      const tarball = pack(["--pack-destination", dir]);
      execFileSync("tar", ["-xzf", join(dir, tarball.filename), "-C", dir]);
      const pkg = join(dir, "package");
      // Its dependencies as an install would give them; nothing of the repository but node_modules.
      symlinkSync(join(root, "node_modules"), join(pkg, "node_modules"));
      const bin = join(pkg, "bin", "reins.js");
      const project = join(dir, "project");
      mkdirSync(join(project, ".git"), { recursive: true });
      // Each child is bounded: one that hangs fails its step with its own output, not the whole test silently.
      const reins = (args: string[], input?: string) => {
        const run = spawnSync(process.execPath, [bin, ...args], {
          cwd: project,
          encoding: "utf8",
          timeout: STEP_MS,
          ...(input !== undefined ? { input } : {}),
          env: { ...process.env, XDG_CACHE_HOME: join(dir, "cache"), NO_COLOR: "1" },
        });
        if (run.error !== undefined)
          throw new Error(`reins ${args.join(" ")}: ${run.error.message}; stderr: ${run.stderr}`);
        return run;
      };

      const demo = reins(["demo", "--agent", "stuck"]);
      expect(demo.stderr).toBe("");
      expect(demo.stdout).toMatch(/stuck\s+9\s+5\s+30,000\s+circuit-breaker/);

      const hook = reins(
        ["hook", "claude"],
        JSON.stringify({
          session_id: "packed",
          hook_event_name: "PreToolUse",
          tool_name: "Bash",
          tool_input: { command: "ls" },
          cwd: project,
        }),
      );
      expect(hook).toMatchObject({ status: 0, stderr: "" });
      expect(JSON.parse(reins(["status", "session:packed", "--json"]).stdout)).toEqual([
        expect.objectContaining({ scope: "session:packed", events: 1 }),
      ]);

      const imports = spawnSync(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `for (const s of process.argv.slice(1)) console.log(s, Object.keys(await import(s)).length);`,
          ...Object.keys(manifest.exports)
            .filter((s) => s !== "./package.json")
            .map((s) => s.replace(/^\./, "reins")),
        ],
        { cwd: pkg, encoding: "utf8", timeout: STEP_MS },
      );
      expect(imports.error).toBeUndefined();
      expect(imports.stderr).toBe("");
      const loaded = imports.stdout.trim().split("\n");
      expect(loaded).toHaveLength(Object.keys(manifest.exports).length - 1);
      for (const line of loaded) expect(line).toMatch(/^reins\S* [1-9]\d*$/);

      const serve = spawn(process.execPath, [bin, "serve", "--port", "0"], {
        cwd: project,
        stdio: ["ignore", "pipe", "pipe"],
      });
      const closed = finished(serve);
      try {
        const url = await new Promise<string>((resolve, reject) => {
          let out = "";
          const late = setTimeout(
            () => reject(new Error(`reins serve did not say where it serves within ${STEP_MS} ms: ${out}`)),
            STEP_MS,
          );
          serve.stdout.on("data", (chunk: Buffer) => {
            out += chunk.toString();
            const match = /reins serving (http:\/\/\S+)/.exec(out);
            if (match !== null) {
              clearTimeout(late);
              resolve(match[1]!);
            }
          });
          void closed.then(({ stderr }) => reject(new Error(`reins serve exited: ${stderr}`)));
        });
        const page = await fetch(`${url}/`);
        expect(await page.text()).toContain("reins dashboard");
        const html = readFileSync(join(pkg, "dist", "web", "index.html"), "utf8");
        const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)![1]!;
        expect((await fetch(`${url}/${script}`)).status).toBe(200);
      } finally {
        serve.kill("SIGTERM");
        expect((await closed).code).toBe(0);
      }
    },
    6 * STEP_MS,
  );
});
