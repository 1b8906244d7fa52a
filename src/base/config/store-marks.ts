/**
 * The store's high-water marks, kept outside `.reins/` in the user's state folder (projectStateDir): per
 * session scope the version (seq) the hooks last saw it at, the identity of the store they saw, and the
 * tampering found so far, which `reins doctor` reports until a person runs `reins init <agent>` again.
 */
import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { projectStateDir, writePrivate } from "./install-record.js";

/** A scope's version as the hooks last saw it: the store's seq, which trimming never lowers. */
export interface Mark {
  scope: string;
  seq: number;
  /** When it was seen, epoch ms. */
  at: number;
}

/** The store the hooks last saw: its identity (see Store.identity) and where it is. */
export interface SeenStore {
  id: string;
  location: string;
}

/**
 * Tampering found at a turn's start, as `reins doctor` reports it: the hooks changed, the store's events
 * lost, or tool calls that ran with no hook answered.
 */
export interface Finding {
  at: number;
  scope: string;
  what: "hooks" | "store" | "calls";
  detail: string;
}

const marksDir = (root: string, env: NodeJS.ProcessEnv) => join(projectStateDir(root, env), "marks");
const markPath = (root: string, env: NodeJS.ProcessEnv, scope: string) =>
  join(marksDir(root, env), `${createHash("sha256").update(scope).digest("hex").slice(0, 24)}.json`);
const storePath = (root: string, env: NodeJS.ProcessEnv) => join(projectStateDir(root, env), "store.json");
const findingsPath = (root: string, env: NodeJS.ProcessEnv) =>
  join(projectStateDir(root, env), "findings.jsonl");

function readJson<T>(path: string): T | null {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as T;
  } catch {
    return null;
  }
}

/** The mark of `scope`, or null when the hooks have not seen it. */
export function readMark(root: string, env: NodeJS.ProcessEnv, scope: string): Mark | null {
  const mark = readJson<Mark>(markPath(root, env, scope));
  return mark !== null && mark.scope === scope && Number.isInteger(mark.seq) ? mark : null;
}

/** Keeps `mark` as its scope's high-water mark. */
export function writeMark(root: string, env: NodeJS.ProcessEnv, mark: Mark): void {
  writePrivate(markPath(root, env, mark.scope), JSON.stringify(mark));
}

/** Forgets the marks of `scopes` (scopes `reins gc` removed whole: their loss is no tampering). */
export function forgetMarks(root: string, env: NodeJS.ProcessEnv, scopes: readonly string[]): void {
  for (const scope of scopes) rmSync(markPath(root, env, scope), { force: true });
}

/** The project's marks, the most recently written first, at most `limit`. */
export function readMarks(root: string, env: NodeJS.ProcessEnv, limit: number): Mark[] {
  const dir = marksDir(root, env);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".json"));
  } catch {
    return [];
  }
  return names
    .map((n) => ({ path: join(dir, n), time: statSync(join(dir, n)).mtimeMs }))
    .sort((a, b) => b.time - a.time)
    .slice(0, limit)
    .flatMap(({ path }) => {
      const mark = readJson<Mark>(path);
      return mark !== null && typeof mark.scope === "string" && Number.isInteger(mark.seq) ? [mark] : [];
    });
}

/** The store the hooks last saw for the project, or null. */
export function readSeenStore(root: string, env: NodeJS.ProcessEnv): SeenStore | null {
  const seen = readJson<SeenStore>(storePath(root, env));
  return seen !== null && typeof seen.id === "string" && typeof seen.location === "string" ? seen : null;
}

/** Keeps the store the hooks see now. */
export function writeSeenStore(root: string, env: NodeJS.ProcessEnv, seen: SeenStore): void {
  writePrivate(storePath(root, env), JSON.stringify(seen));
}

/** Adds a finding to the project's list (one line appended: findings from hooks at once never clash). */
export function addFinding(root: string, env: NodeJS.ProcessEnv, finding: Finding): void {
  const path = findingsPath(root, env);
  mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 });
  appendFileSync(path, `${JSON.stringify(finding)}\n`, { mode: 0o600 });
}

/** The project's findings, oldest first. */
export function readFindings(root: string, env: NodeJS.ProcessEnv): Finding[] {
  let text: string;
  try {
    text = readFileSync(findingsPath(root, env), "utf8");
  } catch {
    return [];
  }
  return text.split("\n").flatMap((line) => {
    try {
      const f = JSON.parse(line) as Finding;
      return typeof f.detail === "string" ? [f] : [];
    } catch {
      return [];
    }
  });
}

/** Forgets the findings: a person set reins up again (`reins init <agent>`). */
export function clearFindings(root: string, env: NodeJS.ProcessEnv): void {
  rmSync(findingsPath(root, env), { force: true });
}
