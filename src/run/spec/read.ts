/**
 * The shell of spec reading: files from disk, hashes with node:crypto, and the section cache. Everything
 * it computes is pure data (sections.ts, section-hashes.ts); a run passes its results through the recorder so a
 * replay never reads the disk.
 */
import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { isAbsolute, relative, resolve, sep } from "node:path";
import type { PlanNode } from "../control/types.js";
import { ReinsError } from "../../base/core/errors.js";
import { normalizeSection } from "./normalize.js";
import { parseSpec, type ParsedSpec } from "./sections.js";
import { sectionHashesOf, specFiles, type HashedSection, type SectionHashes } from "./section-hashes.js";

/** The sha256 (hex) of a section's text, normalised first: only a change someone meant changes it. */
export function hashSection(text: string): string {
  return createHash("sha256").update(normalizeSection(text), "utf8").digest("hex");
}

/** A spec file read and parsed, its sections hashed. */
export interface SpecFile extends Omit<ParsedSpec, "sections"> {
  path: string;
  sections: HashedSection[];
}

/** Parses markdown and hashes each section's own text. */
export function hashedSpec(path: string, markdown: string): SpecFile {
  const parsed = parseSpec(markdown);
  return { ...parsed, path, sections: parsed.sections.map((s) => ({ ...s, hash: hashSection(s.own) })) };
}

/**
 * The section cache: each file's sections and hashes, keyed by the file's path and modification time (to
 * the nanosecond, with its size as a guard on file systems with coarse times), and within a file by the
 * section's heading. A file whose mtime and size are unchanged is not read again. It lives in memory for
 * the process: a run rereads its spec on start and resume, and after that only the files that changed.
 */
export class SectionCache {
  readonly #files = new Map<string, { stamp: string; file: SpecFile }>();

  /** The file at `path`, read and parsed again only when its mtime or size changed. Throws as `stat` does. */
  async file(path: string): Promise<SpecFile> {
    const info = await stat(path, { bigint: true });
    const stamp = `${info.mtimeNs}:${info.size}`;
    const cached = this.#files.get(path);
    if (cached?.stamp === stamp) return cached.file;
    const file = hashedSpec(path, await readFile(path, "utf8"));
    this.#files.set(path, { stamp, file });
    return file;
  }

  /** Forgets every file: for tests, and for a caller that knows better than the mtime. */
  clear(): void {
    this.#files.clear();
  }
}

/** The process's section cache. */
export const sectionCache = new SectionCache();

/**
 * The path of the spec `file` (relative to `root`), once it is known to be inside the project, symbolic
 * links followed: a plan, a `--spec` or an agent's `read_spec` naming `../secrets.md`, or a link to it,
 * would have reins read a file outside the project into a prompt. A usage error otherwise.
 */
export function specPath(root: string, file: string): string {
  const path = resolve(root, file);
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return p; // not there (yet): judged by its name
    }
  };
  const inside = relative(real(resolve(root)), real(path));
  if (inside === "" || inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside))
    throw new ReinsError(
      "usage",
      `the spec ${file} is outside the project; reins reads specs inside it only`,
    );
  return path;
}

/**
 * Reads the spec file `file` (relative to `root`, inside it) through the cache; a file that cannot be read
 * is a usage error naming it.
 */
export async function readSpecFile(root: string, file: string, cache = sectionCache): Promise<SpecFile> {
  const path = specPath(root, file);
  try {
    return await cache.file(path);
  } catch (error) {
    throw new ReinsError(
      "usage",
      `cannot read the spec ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
}

/**
 * The section hashes of every section the plan's nodes name, read now. A spec file that cannot be read names no
 * section (its sections count as gone), so drift is told rather than the run stopped; the task's prompt
 * then names the problem.
 */
export async function readSectionHashes(
  root: string,
  nodes: Iterable<PlanNode>,
  cache = sectionCache,
): Promise<SectionHashes> {
  const list = [...nodes];
  const files = new Map<string, HashedSection[]>();
  for (const file of specFiles(list)) {
    try {
      files.set(file, (await readSpecFile(root, file, cache)).sections);
    } catch {
      files.set(file, []);
    }
  }
  return sectionHashesOf(list, files);
}
