/** `reins/redis` loads what a Redis store needs and nothing of SQLite: checked in a fresh Node process. */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");

/**
 * A module resolve hook that refuses SQLite's files (the opener of every store, the SQLite store and its
 * driver), so importing any of them fails; CommonJS modules required past it are in `require.cache`.
 */
const refuseSqlite = `
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (/\\/dist\\/base\\/store\\/(open|sqlite)\\.js$|\\/better-sqlite3\\//.test(resolved.url))
    throw new Error("loaded " + resolved.url);
  return resolved;
}`;

/** Runs `body` (ES module code) in a new Node process in the package's folder, with the hook registered. */
function node(body: string): { code: number | null; out: string; err: string } {
  const code = `
import { register, createRequire } from "node:module";
register("data:text/javascript," + encodeURIComponent(${JSON.stringify(refuseSqlite)}));
const required = () => Object.keys(createRequire(import.meta.url).cache).filter((f) => /better-sqlite3|\\/store\\/(open|sqlite)\\.js/.test(f));
${body}`;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", code], {
    cwd: root,
    encoding: "utf8",
  });
  return { code: run.status, out: run.stdout, err: run.stderr };
}

describe("importing reins/redis", () => {
  it("loads neither the store opener nor SQLite, even when it connects", () => {
    const run = node(`
const { RedisStore } = await import("reins/redis");
// Connecting loads ioredis; a port where nothing listens fails fast as store_unavailable.
const failed = await RedisStore.connect("redis://127.0.0.1:1", { connectTimeoutMs: 200 }).catch((e) => e.code);
console.log(JSON.stringify({ failed, required: required() }));`);
    expect(run.err).toBe("");
    expect(JSON.parse(run.out)).toEqual({ failed: "store_unavailable", required: [] });
    expect(run.code).toBe(0);
  });

  it("would be caught loading SQLite, by an import or by a require", () => {
    const opener = node(`await import("./dist/base/store/open.js");`);
    expect(opener.code).not.toBe(0);
    expect(opener.err).toMatch(/loaded file:.*\/dist\/base\/store\/open\.js/);
    const driver = node(`createRequire(import.meta.url)("better-sqlite3"); console.log(required().length);`);
    expect(Number(driver.out)).toBeGreaterThan(0);
  });
});
