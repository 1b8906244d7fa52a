/**
 * The files `reins init` writes into a project that hold this machine's paths or a secret (the agents'
 * hook settings, their MCP entries): kept out of git through `.git/info/exclude`, so the tree is as it was,
 * and taken away again by `--uninstall` when reins made them and nothing of the user's is left in them.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { reinsDir } from "./reins-dir.js";

/** What reins remembers of a file it wrote: whether it made it, which folders it made for it, and its exclude line. */
interface Written {
  created: boolean;
  /** Folders made for the file, innermost first. */
  dirs: string[];
  /** The line added to `.git/info/exclude`, and that file, when reins added one. */
  exclude?: { file: string; line: string };
}

type Record_ = Record<string, Written>;

const recordPath = (root: string) => join(root, ".reins", "installed.json");

function readRecord(root: string): Record_ {
  try {
    const data = JSON.parse(readFileSync(recordPath(root), "utf8")) as unknown;
    return typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Record_) : {};
  } catch {
    return {};
  }
}

function writeRecord(root: string, record: Record_): void {
  if (Object.keys(record).length === 0) {
    rmSync(recordPath(root), { force: true });
    return;
  }
  reinsDir(root);
  writeFileSync(recordPath(root), `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
}

/** The folders `mkdir -p` would make for `file`, innermost first; call before writing it. */
export function missingDirs(file: string): string[] {
  const dirs: string[] = [];
  for (let dir = dirname(file); !existsSync(dir); dir = dirname(dir)) {
    dirs.push(dir);
    if (dirname(dir) === dir) break;
  }
  return dirs;
}

function git(root: string, args: string[]): string | null {
  try {
    return execFileSync("git", ["-C", root, ...args], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 10_000,
    }).trim();
  } catch {
    return null;
  }
}

const MARK = "# reins init: holds this machine's paths or a secret (reins init --uninstall removes it)";

/**
 * Keeps `file` (in the project at `root`) out of git: untracked, it is added to `.git/info/exclude`; tracked,
 * it is left as it is and the line returned says so. Null when there is nothing to say (not in a git work
 * tree, or already excluded).
 */
function exclude(root: string, file: string): { said: string | null; exclude?: Written["exclude"] } {
  const top = git(root, ["rev-parse", "--show-toplevel"]);
  if (top === null || top === "") return { said: null };
  const rel = relative(top, resolve(file));
  if (rel.startsWith("..") || isAbsolute(rel)) return { said: null };
  const path = rel.split(sep).join("/");
  if (git(root, ["ls-files", "--error-unmatch", "--", path]) !== null)
    return {
      said: `${path} is tracked by git: reins' hooks in it name this machine's paths, so commit that change only if every machine has reins there (or install with --user)`,
    };
  const gitPath = git(root, ["rev-parse", "--git-path", "info/exclude"]);
  if (gitPath === null || gitPath === "") return { said: null };
  const excludeFile = isAbsolute(gitPath) ? gitPath : join(root, gitPath);
  const line = `/${path}`;
  const text = existsSync(excludeFile) ? readFileSync(excludeFile, "utf8") : "";
  if (text.split("\n").includes(line)) return { said: null };
  mkdirSync(dirname(excludeFile), { recursive: true });
  writeFileSync(excludeFile, `${text}${text === "" || text.endsWith("\n") ? "" : "\n"}${MARK}\n${line}\n`);
  return {
    said: `kept ${path} out of git (.git/info/exclude): it names this machine's paths`,
    exclude: { file: excludeFile, line },
  };
}

/**
 * Notes that reins wrote `file` into the project at `root` (`created`: it was not there before, and reins
 * made the folders `dirs` for it) and keeps it out of git. Returns the lines to print.
 */
export function noteWritten(root: string, file: string, created: boolean, dirs: string[]): string[] {
  const record = readRecord(root);
  const key = resolve(file);
  const known = record[key];
  const { said, exclude: added } = exclude(root, file);
  record[key] = {
    created: known?.created ?? created,
    dirs: known?.dirs ?? dirs,
    ...(added !== undefined
      ? { exclude: added }
      : known?.exclude !== undefined
        ? { exclude: known.exclude }
        : {}),
  };
  writeRecord(root, record);
  return said === null ? [] : [said];
}

/** Whether a settings file holds nothing any more: no file, an empty one, or `{}`. */
function isEmpty(file: string): boolean {
  let text: string;
  try {
    text = readFileSync(file, "utf8").trim();
  } catch {
    return true;
  }
  if (text === "") return true;
  try {
    const data = JSON.parse(text) as unknown;
    return typeof data === "object" && data !== null && Object.keys(data).length === 0;
  } catch {
    return false;
  }
}

/** Whether a file still holds anything of reins' (a hook or a server entry naming reins' scripts). */
function holdsReins(file: string): boolean {
  try {
    const text = readFileSync(file, "utf8");
    return text.includes("reins.js") || text.includes("reins-hook");
  } catch {
    return false;
  }
}

/**
 * After `--uninstall` took reins' entries out of `file`: once nothing of reins' is left in it, its exclude line
 * goes (it was untracked and not excluded before reins), and when reins made the file and nothing at all is
 * left in it, the file goes too, with the folders reins made for it (when empty). Returns the lines to print.
 */
export function releaseWritten(root: string, file: string): string[] {
  const record = readRecord(root);
  const key = resolve(file);
  const written = record[key];
  if (written === undefined || holdsReins(file)) return [];
  const said: string[] = [];
  if (written.exclude !== undefined && existsSync(written.exclude.file)) {
    const lines = readFileSync(written.exclude.file, "utf8").split("\n");
    const at = lines.indexOf(written.exclude.line);
    if (at >= 0) {
      lines.splice(at, 1);
      if (lines[at - 1] === MARK) lines.splice(at - 1, 1);
      writeFileSync(written.exclude.file, lines.join("\n"));
    }
  }
  if (written.created && isEmpty(file)) {
    rmSync(file, { force: true });
    for (const dir of written.dirs) {
      try {
        if (readdirSync(dir).length > 0) break;
        rmdirSync(dir);
      } catch {
        break;
      }
    }
    said.push(`removed ${relative(root, file)}, which reins had made and which held nothing else`);
  }
  delete record[key];
  writeRecord(root, record);
  return said;
}

/** The files `reins init` writes into a project, relative to its root. */
const INIT_FILES = new Set([
  ".claude/settings.local.json",
  ".claude/settings.json",
  ".codex/hooks.json",
  ".codex/config.toml",
  ".gemini/settings.json",
  ".qwen/settings.json",
  ".github/hooks/reins.json",
  ".mcp.json",
]);

/**
 * The changed files among `dirty` (relative to `root`) that hold reins' hooks or server entries: this
 * machine's paths, or a secret. They are never to be committed.
 */
export function reinsLocalFiles(root: string, dirty: readonly string[]): string[] {
  return dirty.filter((file) => INIT_FILES.has(file) && holdsReins(join(root, file)));
}

/**
 * The one line that refuses a dirty tree before `what` (`reins run`): the user's own changes to commit or
 * stash, and reins' own files never to commit but to keep out of git.
 */
export function dirtyTreeLine(root: string, dirty: readonly string[], what: string): string {
  const local = reinsLocalFiles(root, dirty);
  const own = dirty.filter((file) => !local.includes(file));
  const list = (files: readonly string[]) =>
    `${files.slice(0, 5).join(", ")}${files.length > 5 ? `, and ${files.length - 5} more` : ""}`;
  const parts: string[] = [];
  if (own.length > 0)
    parts.push(
      `the working tree has uncommitted changes (${list(own)}): commit or stash them before ${what}, so reins can tell the agent's changes from yours and roll back safely`,
    );
  if (local.length > 0)
    parts.push(
      `${list(local)} ${local.length === 1 ? "holds" : "hold"} reins' hooks with this machine's paths (or a secret): never commit them; \`reins init <agent>\` again keeps them out of git (.git/info/exclude)`,
    );
  return parts.join("; ");
}
