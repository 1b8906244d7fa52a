/** Tests of running a CommonJS file through the V8 code cache, and where the cache lives. */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { codeCacheDir, requireCached } from "./code-cache.js";

interface Answer {
  answer: () => number;
  dir: string;
}

function setup(body = "module.exports = { answer: () => 42, dir: __dirname };") {
  const dir = mkdtempSync(join(tmpdir(), "reins-code-cache-"));
  const file = join(dir, "script.cjs");
  writeFileSync(file, body);
  return { dir, file, cache: join(dir, "cache") };
}

describe("requireCached", () => {
  it("runs a CommonJS file with exports, module, require and __dirname", () => {
    const { dir, file, cache } = setup(
      'const { join } = require("node:path"); module.exports = { answer: () => 42, dir: join(__dirname, ".") };',
    );
    const loaded = requireCached<Answer>(file, cache);
    expect(loaded.exports.answer()).toBe(42);
    expect(loaded.exports.dir).toBe(dir);
  });

  it("hands the file __import, which imports an ES module relative to the file, as node:vm has no import()", async () => {
    const { dir, file, cache } = setup('module.exports = { late: () => __import("./sub/late.mjs") };');
    mkdirSync(join(dir, "sub"));
    writeFileSync(join(dir, "sub", "late.mjs"), "export const answer = 43;");
    const loaded = requireCached<{ late: () => Promise<{ answer: number }> }>(file, cache);
    expect((await loaded.exports.late()).answer).toBe(43);
  });

  it("compiles the first time, keeps the code on save, and takes it from the cache the next time", () => {
    const { file, cache } = setup();
    const first = requireCached<Answer>(file, cache);
    expect(first.fromCache).toBe(false);
    expect(existsSync(cache)).toBe(false);
    first.exports.answer();
    first.save();
    expect(readdirSync(cache)).toHaveLength(1);
    const second = requireCached<Answer>(file, cache);
    expect(second.fromCache).toBe(true);
    expect(second.exports.answer()).toBe(42);
  });

  it("does not use code compiled from another version of the file, even of the same length", () => {
    const { file, cache } = setup();
    requireCached<Answer>(file, cache).save();
    const { atime, mtime } = statSync(file);
    writeFileSync(file, "module.exports = { answer: () => 43, dir: __dirname };");
    utimesSync(file, atime, mtime);
    const changed = requireCached<Answer>(file, cache);
    expect(changed.fromCache).toBe(false);
    expect(changed.exports.answer()).toBe(43);
    changed.save();
    expect(requireCached<Answer>(file, cache).exports.answer()).toBe(43);
  });

  it("uses the cache for the same content whatever the file's mtime", () => {
    const { file, cache } = setup();
    requireCached<Answer>(file, cache).save();
    const { atime, mtime } = statSync(file);
    utimesSync(file, atime, new Date(mtime.getTime() + 5_000));
    expect(requireCached<Answer>(file, cache).fromCache).toBe(true);
  });

  it("ignores a damaged cache file and replaces it", () => {
    const { file, cache } = setup();
    requireCached<Answer>(file, cache).save();
    const [name] = readdirSync(cache);
    for (const damaged of [Buffer.alloc(0), Buffer.from([1, 2]), Buffer.from("garbage garbage garbage")]) {
      writeFileSync(join(cache, name!), damaged);
      const loaded = requireCached<Answer>(file, cache);
      expect(loaded.fromCache).toBe(false);
      expect(loaded.exports.answer()).toBe(42);
      loaded.save();
      expect(requireCached<Answer>(file, cache).fromCache).toBe(true);
    }
  });

  it("still runs the file when the cache cannot be written", () => {
    const { dir, file } = setup();
    const blocked = join(dir, "not-a-folder");
    writeFileSync(blocked, "");
    const loaded = requireCached<Answer>(file, join(blocked, "cache"));
    expect(loaded.exports.answer()).toBe(42);
    expect(() => loaded.save()).not.toThrow();
  });
});

describe("codeCacheDir", () => {
  it("is reins under XDG_CACHE_HOME, else under ~/.cache", () => {
    expect(codeCacheDir({ XDG_CACHE_HOME: "/x/cache" })).toBe(join("/x/cache", "reins"));
    expect(codeCacheDir({ XDG_CACHE_HOME: "" })).toMatch(/\.cache[/\\]reins$/);
    expect(codeCacheDir({})).toMatch(/\.cache[/\\]reins$/);
  });
});
