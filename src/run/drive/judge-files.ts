/**
 * The files that decide what a task's checks say, recognised by each ecosystem's conventions (Node and
 * Python first), by what the check commands name, and by the plan's `settings.judges`: tests, their
 * fixtures and snapshots, the runners' configuration and harness files. A task's proof runs against them
 * as they were when it started; what its agent changed of them is named, with its diff, for a person.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import picomatch from "picomatch";
import type { RunSettings } from "../control/types.js";
import type { Git } from "../git/git.js";
import { PARTLY_JUDGES, judgePartChange, withJudgePartOf } from "./judge-parts.js";
import { assertionDiff } from "./test-edits.js";

/**
 * Harness files: runner configuration, setup files, files a runtime loads by itself. A new one changes
 * what the checks mean, so it is a change to the judges, never a test.
 */
export const HARNESS_FILES: readonly string[] = [
  "**/conftest.py",
  "**/pytest.ini",
  "**/.pytest.ini",
  "**/tox.ini",
  "**/noxfile.py",
  "**/.coveragerc",
  "**/sitecustomize.py",
  "**/usercustomize.py",
  "**/*.pth",
  "**/.npmrc",
  "**/.yarnrc",
  "**/.yarnrc.yml",
  "**/.pnpmfile.cjs",
  "**/bunfig.toml",
  "**/vitest.config.*",
  "**/vitest.workspace.*",
  "**/vitest.setup.*",
  "**/vite.config.*",
  "**/jest.config.*",
  "**/jest.setup.*",
  "**/.mocharc*",
  "**/ava.config.*",
  "**/playwright.config.*",
  "**/karma.conf.*",
  "**/setupTests.*",
  "**/setup-tests.*",
  "**/test-setup.*",
  "**/.nycrc*",
  "**/.c8rc*",
];

/** Fixtures, snapshots and test data by their folders' and files' conventional names. */
export const FIXTURE_FILES: readonly string[] = [
  "**/fixtures/**",
  "**/__fixtures__/**",
  "**/__snapshots__/**",
  "**/*.snap",
  "**/testdata/**",
  "**/test-data/**",
  "**/golden/**",
];

/** Data files a test may read as its expected answer, when a test or a check names them. */
const DATA_FILE =
  /\.(json|jsonl|txt|csv|tsv|ya?ml|xml|html?|snap|dat|golden|expected|out|in|ndjson|toml|ini|sql|bin)$/i;

/** Programs whose configuration files a check command calling them reads. */
const CALLED: Record<string, readonly string[]> = {
  make: ["Makefile", "makefile", "GNUmakefile"],
  gmake: ["Makefile", "makefile", "GNUmakefile"],
  just: ["justfile", "Justfile", ".justfile"],
  task: ["Taskfile.yml", "Taskfile.yaml"],
};

/** What a task's change does to the judges, and what of it is the behaviour its checks must witness. */
export interface JudgeReview {
  /** Judges at the task's base, used as they were (sorted). */
  kept: string[];
  /** Judges its agent changed, named for a person: `calc.test.js`, `conftest.py (new)`, `package.json scripts.test`. */
  changed: string[];
  /** Whole files put back as they were for the proof (those not there then are removed). */
  putBack: string[];
  /** Files whose judge part is put back as it was, the rest kept: path to the text the proof runs with. */
  rewrite: Record<string, string>;
  /** The task's other changes: set aside for the counterfactual (its new tests are kept). */
  behaviour: string[];
  /** The diff of the judge changes (assertions, scripts, configuration lines), bounded. */
  diff: string;
}

const MAX_ADDED_BYTES = 8_000;

/** Programs that run the file named after them: a script a check runs this way judges it. */
const INTERPRETERS = new Set([
  "sh",
  "bash",
  "dash",
  "zsh",
  "node",
  "python",
  "python3",
  "ruby",
  "perl",
  "php",
  "deno",
  "bun",
  "tsx",
  "ts-node",
]);

/** Words that run the command after them. */
const PREFIXES = new Set(["!", "exec", "env", "command", "nice", "time", "xvfb-run"]);

/** Flags whose value is a configuration file. */
const CONFIG_FLAGS = new Set(["-c", "--config", "--config-file", "--rcfile", "-f", "--file", "--project"]);

/**
 * The files the check commands run or configure themselves with: a script run as a command (`./check.sh`)
 * or by an interpreter (`sh check.sh`), a file given to a configuration flag (`--config ci.json`), and
 * the configuration of the programs they call (`make`'s Makefile). A file a check merely reads (`grep ok
 * a.txt`) is the work it looks at, not a judge.
 */
function namedBy(commands: readonly string[], files: ReadonlySet<string>): Set<string> {
  const named = new Set<string>();
  const file = (word: string | undefined) => {
    const path = (word ?? "").replace(/^\.\//, "");
    if (files.has(path)) named.add(path);
  };
  for (const command of commands)
    for (const simple of command.split(/&&|\|\||[;&|()\n`]/)) {
      const words = simple
        .split(/\s+/)
        .map((w) => w.replace(/^['"]|['"]$/g, ""))
        .filter((w) => w !== "");
      let at = 0;
      while (at < words.length && (PREFIXES.has(words[at]!) || /^[A-Za-z_]\w*=/.test(words[at]!))) at++;
      if (words[at] === "timeout") at += 2;
      const program = words[at];
      if (program === undefined) continue;
      file(program);
      for (const config of CALLED[program] ?? []) if (files.has(config)) named.add(config);
      if (INTERPRETERS.has(program)) file(words.slice(at + 1).find((w) => !w.startsWith("-")));
      for (let i = at + 1; i < words.length; i++) {
        const [flag, value] = words[i]!.split("=", 2) as [string, string | undefined];
        if (CONFIG_FLAGS.has(flag)) file(value ?? words[i + 1]);
      }
    }
  return named;
}

/** Data files that a test (as it was) names by their file name: its expected answers. */
async function fixturesNamed(
  git: Git,
  base: string,
  files: readonly string[],
  tests: readonly string[],
): Promise<Set<string>> {
  const data = files.filter((f) => DATA_FILE.test(f)).slice(0, 2_000);
  const nameOf = (f: string) => f.slice(f.lastIndexOf("/") + 1);
  const names = [...new Set(data.map(nameOf))];
  const found = await git.occurring(base, names, tests.slice(0, 500));
  return new Set(data.filter((f) => found.has(nameOf(f))));
}

async function readNow(cwd: string, path: string): Promise<string | null> {
  return readFile(join(cwd, path), "utf8").catch(() => null);
}

/** A diff of a file the agent added, as `git diff` would show it, bounded. */
function addedDiff(path: string, text: string): string {
  const body = text.length > MAX_ADDED_BYTES ? `${text.slice(0, MAX_ADDED_BYTES)}\n[… cut]` : text;
  return [
    `diff --git a/${path} b/${path}`,
    "--- /dev/null",
    `+++ b/${path}`,
    ...body
      .replace(/\n$/, "")
      .split("\n")
      .map((l) => `+${l}`),
    "",
  ].join("\n");
}

/**
 * Sorts a task's change (its files against `base`, as `git.changes` lists them) into judge changes and
 * behaviour, and reads what the proof needs: the judges as they were, the diff of their changes. `git`
 * works in the task's tree; `commands` are the commands of the checks that judge the task.
 */
export async function reviewJudges(
  git: Git,
  base: string,
  changes: readonly { path: string; gone: boolean; added: boolean }[],
  settings: Pick<RunSettings, "testFiles" | "judges">,
  commands: readonly string[],
): Promise<JudgeReview> {
  const files = await git.filesAt(base);
  const fileSet = new Set(files);
  const opts = { dot: true };
  const isTest = picomatch(settings.testFiles, opts);
  const isHarness = picomatch([...HARNESS_FILES], opts);
  const isFixture = picomatch([...FIXTURE_FILES], opts);
  const isUsers = settings.judges.length > 0 ? picomatch(settings.judges, opts) : () => false;
  const isPartly = (f: string) => PARTLY_JUDGES.includes(f.slice(f.lastIndexOf("/") + 1));
  const named = namedBy(commands, fileSet);
  const tests = files.filter((f) => isTest(f));
  const fixtures = await fixturesNamed(git, base, files, tests);
  const wholly = (f: string) =>
    isTest(f) || isHarness(f) || isFixture(f) || isUsers(f) || named.has(f) || fixtures.has(f);

  const review: JudgeReview = {
    kept: [],
    changed: [],
    putBack: [],
    rewrite: {},
    behaviour: [],
    diff: "",
  };
  const whole: string[] = [];
  const added: string[] = [];
  const parts: string[] = [];
  for (const { path, gone, added: isNew } of changes) {
    if (!isNew && wholly(path)) {
      review.changed.push(gone ? `${path} (deleted)` : path);
      review.putBack.push(path);
      whole.push(path);
    } else if (isNew && (isHarness(path) || isUsers(path) || isFixture(path))) {
      review.changed.push(`${path} (new)`);
      review.putBack.push(path);
      added.push(path);
    } else if (isNew && isTest(path)) {
      // A new test is kept: it is what witnesses the change.
    } else if (isPartly(path)) {
      const was = await git.fileAt(base, path);
      const now = await readNow(git.cwd, path);
      const part = judgePartChange(path, was, now);
      const merged = part === null || now === null ? null : withJudgePartOf(path, was, now);
      if (part !== null) {
        review.changed.push(`${path} ${part.what.join(", ")}`);
        parts.push(
          `diff --git a/${path} b/${path}\n--- a/${path}\n+++ b/${path}\n${part.lines.join("\n")}\n`,
        );
        if (merged === null) review.putBack.push(path);
        else review.rewrite[path] = merged;
      }
      if (part === null || (merged !== null && merged !== was)) review.behaviour.push(path);
    } else review.behaviour.push(path);
  }
  const changedPaths = new Set(changes.map((c) => c.path));
  review.kept = files
    .filter((f) => (wholly(f) || isPartly(f)) && !(changedPaths.has(f) && review.putBack.includes(f)))
    .sort();
  const texts = await Promise.all(added.map(async (f) => addedDiff(f, (await readNow(git.cwd, f)) ?? "")));
  const wholeDiff = whole.length > 0 ? await git.diffFiles(base, whole) : "";
  review.diff = assertionDiff([wholeDiff, ...texts, ...parts].join(""));
  return review;
}

/** Puts the judges of `review` as they were at `base` into `git`'s tree: what the proof runs against. */
export async function judgesAsTheyWere(git: Git, base: string, review: JudgeReview): Promise<void> {
  if (review.putBack.length > 0) await git.putFiles(base, review.putBack);
  for (const [path, text] of Object.entries(review.rewrite)) await writeFile(join(git.cwd, path), text);
}
