/**
 * The hunk tier of a task's witness (the budgeted mutation tier of seed 004): each hunk of its change is
 * set aside alone and its checks run again; a hunk none of them goes red without is one no check witnesses.
 * What a check said of a tree is cached by content (the tree's hash, the hunk, the commands), so a run
 * resumed, or a task redone to the same change, pays nothing twice.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { CheckResult, HunkRef, HunkWitness } from "../control/types.js";
import type { Git } from "../git/git.js";

/** One hunk: where it is, and how to set it aside. */
interface Hunk {
  ref: HunkRef;
  /** A patch of this hunk alone (`git apply -R` sets it aside), or how a whole file is. */
  aside: { patch: string } | { remove: true } | { restore: true };
}

/** Entries the cache keeps, newest last: enough for many runs, small enough to read at each witness. */
const CACHE_ENTRIES = 5_000;

/** What checks said of trees, by content: whether a check went red. Kept in a JSON file. */
export class HunkCache {
  readonly #path: string;
  readonly #entries: Map<string, boolean>;

  constructor(path: string) {
    this.#path = path;
    let read: Record<string, boolean> = {};
    try {
      read = JSON.parse(readFileSync(path, "utf8")) as Record<string, boolean>;
    } catch {
      // none yet, or unreadable: start afresh
    }
    this.#entries = new Map(Object.entries(read).filter(([, v]) => typeof v === "boolean"));
  }

  get(key: string): boolean | undefined {
    return this.#entries.get(key);
  }

  set(key: string, red: boolean): void {
    this.#entries.delete(key);
    this.#entries.set(key, red);
  }

  /** Writes the newest entries back, whole (by rename). */
  save(): void {
    const kept = [...this.#entries].slice(-CACHE_ENTRIES);
    mkdirSync(dirname(this.#path), { recursive: true });
    writeFileSync(`${this.#path}.partial`, JSON.stringify(Object.fromEntries(kept)));
    renameSync(`${this.#path}.partial`, this.#path);
  }
}

/** A line git takes for a function's header by default (it starts with a letter, `_` or `$`). */
const FUNCTION_LINE = /^[A-Za-z_$]/;

/**
 * The lines a hunk changes in the new file (`12-14`, `12`, or `12 (removed)` for a removal alone), and
 * the function around them: the last function-like context line before the first change, if any.
 */
function changedLines(from: number, body: readonly string[]): { lines: string; context?: string } {
  let line = from;
  let first: number | null = null;
  let last = 0;
  let added = false;
  let context: string | undefined;
  for (const text of body) {
    const sign = text[0];
    if (sign === " ") {
      if (first === null && FUNCTION_LINE.test(text.slice(1))) context = text.slice(1);
      line += 1;
    } else if (sign === "+") {
      first ??= line;
      last = line;
      added = true;
      line += 1;
    } else if (sign === "-") {
      first ??= line;
      last = Math.max(last, first);
    }
  }
  const start = first ?? from;
  const span = last > start ? `${start}-${last}` : `${start}`;
  return { lines: added ? span : `${start} (removed)`, ...(context !== undefined ? { context } : {}) };
}

/** The hunks of a unified diff (`git diff` of modified files), each as a patch of its own. */
export function parseHunks(diff: string): Hunk[] {
  const hunks: Hunk[] = [];
  for (const part of diff.split(/^(?=diff --git )/m)) {
    const lines = part.replace(/\n$/, "").split("\n");
    const first = lines.findIndex((l) => l.startsWith("@@"));
    const file = /^\+\+\+ b\/(.*)$/m.exec(part)?.[1];
    if (first < 0 || file === undefined) continue;
    const header = lines.slice(0, first).join("\n");
    let start = first;
    for (let i = first + 1; i <= lines.length; i++) {
      if (i < lines.length && !lines[i]!.startsWith("@@")) continue;
      const body = lines.slice(start, i);
      const at = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@ ?(.*)$/.exec(lines[start] ?? "");
      if (at !== null) {
        const where = changedLines(Number(at[1]), body.slice(1));
        hunks.push({
          ref: { file, lines: where.lines, context: (where.context ?? at[2] ?? "").trim().slice(0, 120) },
          aside: { patch: `${header}\n${body.join("\n")}\n` },
        });
      }
      start = i;
    }
  }
  return hunks;
}

/** What the tier needs: the tree, its change, how to run the checks, and what it may spend. */
export interface HunkTierInput {
  git: Git;
  base: string;
  /** The commit holding the tree as the agent left it: each file is put back from it. */
  saved: string;
  /** The behaviour files of the change (not its tests, not its judges), with whether each is new or gone. */
  files: readonly { path: string; added: boolean; gone: boolean }[];
  /** Hunks to try at most. */
  cap: number;
  /** The checks' commands, for the cache key. */
  commands: string;
  cache: HunkCache;
  /** A scratch file for one hunk's patch. */
  scratch: string;
  run: () => Promise<CheckResult[]>;
}

const red = (results: readonly CheckResult[]) => results.some((r) => !r.passed && r.skipped !== true);

/** Runs the hunk tier in a tree that holds the change (with the judges as they were). */
export async function hunkTier(input: HunkTierInput): Promise<HunkWitness> {
  const { git, files } = input;
  const modified = files.filter((f) => !f.added && !f.gone).map((f) => f.path);
  const hunks: Hunk[] = [
    ...parseHunks(modified.length > 0 ? await git.diffFiles(input.base, modified) : ""),
    ...files
      .filter((f) => f.added || f.gone)
      .map((f): Hunk => ({
        ref: { file: f.path, lines: f.added ? "the whole new file" : "the whole file removed", context: "" },
        aside: f.added ? { remove: true } : { restore: true },
      })),
  ];
  const out: HunkWitness = { total: hunks.length, unwitnessed: [], untried: 0, ran: 0, allowed: input.cap };
  // A lone hunk is the whole change, which the change's own counterfactual witnessed.
  if (hunks.length <= 1) return out;
  const tree = await git.worktreeTree();
  const tried = hunks.slice(0, input.cap);
  out.untried = hunks.length - tried.length;
  for (const hunk of tried) {
    const what = "patch" in hunk.aside ? hunk.aside.patch : `${Object.keys(hunk.aside)[0]} ${hunk.ref.file}`;
    const key = createHash("sha256").update(`${tree}\0${input.commands}\0${what}`).digest("hex");
    let wentRed = input.cache.get(key);
    if (wentRed === undefined) {
      try {
        if ("patch" in hunk.aside) {
          writeFileSync(input.scratch, hunk.aside.patch);
          await git.applyPatch(input.scratch, true);
        } else if ("remove" in hunk.aside) rmSync(`${git.cwd}/${hunk.ref.file}`, { force: true });
        else await git.putFiles(input.base, [hunk.ref.file]);
        out.ran += 1;
        wentRed = red(await input.run());
        input.cache.set(key, wentRed);
      } catch {
        // A hunk git cannot set aside alone (a diff cut at its bound): not tried.
        out.untried += 1;
        continue;
      } finally {
        await git.putFiles(input.saved, [hunk.ref.file]);
        rmSync(input.scratch, { force: true });
      }
    }
    if (!wentRed) out.unwitnessed.push(hunk.ref);
  }
  return out;
}
