/** Runs a CommonJS file through V8's code cache on disk, so the next process skips compiling it. */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Script } from "node:vm";

/** A CommonJS file run by `requireCached`. */
export interface CachedModule<T> {
  exports: T;
  /** Whether V8 took the compiled code from the cache rather than compiling the source. */
  fromCache: boolean;
  /**
   * Keeps the compiled code for the next process, unless it came from the cache. Call it after the work:
   * V8 then includes every function compiled meanwhile. Never throws; a cache that cannot be written is
   * skipped.
   */
  save(): void;
}

/** Where reins keeps compiled code: `$XDG_CACHE_HOME/reins`, else `~/.cache/reins`. */
export function codeCacheDir(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CACHE_HOME !== undefined && env.XDG_CACHE_HOME !== "" ? env.XDG_CACHE_HOME : null;
  return join(base ?? join(homedir(), ".cache"), "reins");
}

/** FNV-1a, 32 bits, as 8 hex digits: names one cache file per source path. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, "0");
}

/** The cache file starts with its key, so code compiled from other source or by another Node is never used. */
function readCache(path: string, key: string): Buffer | undefined {
  try {
    const data = readFileSync(path);
    const length = data.readUInt32LE(0);
    return data.toString("utf8", 4, 4 + length) === key ? data.subarray(4 + length) : undefined;
  } catch {
    return undefined;
  }
}

function writeCache(path: string, key: string, code: Buffer): void {
  const header = Buffer.alloc(4);
  const keyBytes = Buffer.from(key);
  header.writeUInt32LE(keyBytes.length);
  // Hooks run in parallel: write aside, then rename, so a reader sees a whole file or none.
  const temp = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(temp, Buffer.concat([header, keyBytes, code]), { mode: 0o600 });
    renameSync(temp, path);
  } catch {
    // Only the next process's start-up is slower.
  }
}

/**
 * Runs a CommonJS file as `require` would, but compiles it with V8's code cache kept in `cacheDir`: a
 * process that runs the same file again skips parsing and compiling it (about 10 ms for the hook bundle).
 * The cache is used only for the same path and content under the same Node version and platform.
 * A script run through node:vm has no `import()`: the file may call `__import(specifier)` instead, which
 * imports an ES module relative to the file.
 */
export function requireCached<T>(file: string, cacheDir: string): CachedModule<T> {
  const source = readFileSync(file, "utf8");
  // The hash of the very text compiled: V8 itself checks only the source's length, its version and flags.
  const hash = createHash("sha256").update(source).digest("hex");
  const key = JSON.stringify([file, hash, process.version, process.arch, process.platform]);
  const cachePath = join(cacheDir, `${basename(file)}-${fnv1a(file)}.jsc`);
  const cachedData = readCache(cachePath, key);
  const script = new Script(
    `(function (exports, require, module, __filename, __dirname, __import) {${source}\n})`,
    {
      filename: file,
      ...(cachedData === undefined ? {} : { cachedData }),
    },
  );
  const fromCache = cachedData !== undefined && !script.cachedDataRejected;
  const module = { exports: {} as T };
  const wrapper = script.runInThisContext() as (
    exports: T,
    require: NodeJS.Require,
    module: { exports: T },
    filename: string,
    dirname: string,
    importModule: (specifier: string) => Promise<unknown>,
  ) => void;
  const importModule = (specifier: string) => import(new URL(specifier, pathToFileURL(file)).href);
  wrapper(module.exports, createRequire(file), module, file, dirname(file), importModule);
  return {
    exports: module.exports,
    fromCache,
    save: () => {
      if (!fromCache) writeCache(cachePath, key, script.createCachedData());
    },
  };
}
