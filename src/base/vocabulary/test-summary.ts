/** Reads a test run's output across test runners: how many tests failed and passed, and which failure. */
import { outputShape, plainText } from "./shapes.js";

/**
 * What a test run's output says: how many tests failed and passed, and which failure it shows, across test
 * runners.
 */

/** A summary found in the output, with where it ends, so the last one can win. */
interface Found {
  at: number;
  failed: number;
  passed: number;
}

/** The `N word` counts of a summary line, by lower-cased word: `2 failed, 10 passed` → failed 2, passed 10. */
function counts(line: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of line.matchAll(/(\d+) ([A-Za-z]+)/g)) {
    const word = (m[2] ?? "").toLowerCase();
    out[word] = (out[word] ?? 0) + Number(m[1]);
  }
  return out;
}

/** `Key: N` or `key=N` pairs of a summary line: `Tests: 5, Failures: 1` → tests 5, failures 1. */
function pairs(line: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of line.matchAll(/([A-Za-z][A-Za-z ]*?)\s*[:=]\s*(\d+)/g))
    out[(m[1] ?? "").toLowerCase()] = Number(m[2]);
  return out;
}

/** The last match of a line pattern (with the `m` and `g` flags), with where it ends. */
function lastLine(text: string, pattern: RegExp): { line: string; groups: string[]; at: number } | null {
  let found: { line: string; groups: string[]; at: number } | null = null;
  for (const m of text.matchAll(pattern)) {
    found = { line: m[0], groups: m.slice(1).map((g) => g ?? ""), at: m.index + m[0].length };
  }
  return found;
}

/** The summary of one test runner's output format, or null when the output has none of that format. */
type SummaryReader = (text: string) => Found | null;

const n = (value: number | undefined) => value ?? 0;

const PYTEST_WORDS = "failed|passed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun";
const PYTEST = new RegExp(
  `^[= ]*(?:\\d+ (?:${PYTEST_WORDS})(?:, )?)+ in \\d[\\d.]*s\\b.*$|^[= ]*no tests ran in .*$`,
  "gm",
);

const READERS: SummaryReader[] = [
  // pytest: `=== 2 failed, 10 passed, 1 error in 0.52s ===`, or the same without the bars under `-q`.
  (text) => {
    const m = lastLine(text, PYTEST);
    const c = m === null ? null : counts(m.line);
    return m === null || c === null
      ? null
      : { at: m.at, failed: n(c.failed) + n(c.error) + n(c.errors), passed: n(c.passed) };
  },
  // unittest and Django: `Ran 12 tests in 0.1s`, then `OK (skipped=1)` or `FAILED (failures=2, errors=1)`.
  (text) => {
    const m = lastLine(text, /^Ran (\d+) tests? in [^\n]*(?:\n[^\n]*){0,4}?\n(OK|FAILED)\b([^\n]*)/gm);
    if (m === null) return null;
    const p = pairs(m.groups[2] ?? "");
    const failed = n(p.failures) + n(p.errors) + n(p["unexpected successes"]);
    return { at: m.at, failed, passed: Math.max(Number(m.groups[0]) - failed - n(p.skipped), 0) };
  },
  // go test: `--- FAIL: TestX` per test, `ok  pkg 0.01s` and `FAIL pkg 0.01s` per package.
  (text) => {
    const fails = [...text.matchAll(/^--- FAIL: /gm)];
    const passes = [...text.matchAll(/^--- PASS: /gm)];
    const ok = [...text.matchAll(/^ok[ \t]+\S+[ \t]+(?:\(cached\)|[\d.]+s)/gm)];
    const failedPackages = [
      ...text.matchAll(/^FAIL[ \t]+\S+[ \t]+(?:\(cached\)|[\d.]+s|\[[^\]\n]*\])[ \t]*$/gm),
    ];
    const all = [...fails, ...passes, ...ok, ...failedPackages];
    if (all.length === 0) return null;
    return {
      at: Math.max(...all.map((m) => m.index + m[0].length)),
      failed: Math.max(fails.length, failedPackages.length),
      passed: passes.length > 0 ? passes.length : ok.length,
    };
  },
  // cargo: one `test result: FAILED. 3 passed; 1 failed;` per test binary, summed.
  (text) => summed(text, /test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed;/g, 2, 1),
  // jest `Tests:       1 failed, 2 passed, 3 total`; vitest `Tests  1 failed | 2 passed (3)`.
  (text) => {
    const m = lastLine(text, /^[ \t]*Tests:?[ \t]+(?=\d+ (?:failed|passed|skipped|todo|pending|total)).*$/gm);
    const c = m === null ? null : counts(m.line);
    return m === null || c === null ? null : { at: m.at, failed: n(c.failed), passed: n(c.passed) };
  },
  // mocha: `2 passing (15ms)`, then `1 failing` if any failed.
  (text) => {
    const m = lastLine(
      text,
      /^[ \t]*(\d+) passing\b.*(?:\n[ \t]*\d+ pending.*)?(?:\n\s*?[ \t]*(\d+) failing\b.*)?/gm,
    );
    return m === null ? null : { at: m.at, failed: Number(m.groups[1] || 0), passed: Number(m.groups[0]) };
  },
  // rspec: `12 examples, 2 failures, 1 pending`; bats: `3 tests, 1 failure`.
  (text) => {
    const m = lastLine(text, /^\d+ (?:examples?|tests?), \d+ failures?.*$/gm);
    const c = m === null ? null : counts(m.line);
    if (m === null || c === null) return null;
    const total = n(c.examples) + n(c.example) + n(c.tests) + n(c.test);
    const failed = n(c.failures) + n(c.failure) + n(c.errors) + n(c.error);
    return { at: m.at, failed, passed: Math.max(total - failed - n(c.pending) - n(c.skipped), 0) };
  },
  // PHPUnit: `OK (5 tests, 9 assertions)`, or `Tests: 5, Assertions: 9, Failures: 1, Errors: 1.`.
  (text) => {
    const m = lastLine(text, /^OK \((\d+) tests?, \d+ assertions?\)|^Tests: \d+, Assertions: \d+.*$/gm);
    if (m === null) return null;
    if (m.line.startsWith("OK")) return { at: m.at, failed: 0, passed: Number(m.groups[0]) };
    const p = pairs(m.line);
    const failed = n(p.failures) + n(p.errors);
    return { at: m.at, failed, passed: Math.max(n(p.tests) - failed - n(p.skipped) - n(p.incomplete), 0) };
  },
  // dotnet test: `Failed!  - Failed:     1, Passed:     5, Skipped: 0, Total: 6` per test project, summed.
  (text) => summed(text, /\bFailed:\s+(\d+),\s+Passed:\s+(\d+)/g, 1, 2),
  // maven surefire: `Tests run: 5, Failures: 1, Errors: 0, Skipped: 0`; the totals line has no `Time elapsed`.
  (text) => {
    const pattern = /^(?:\[\w+\] )?Tests run: \d+, Failures: \d+, Errors: \d+, Skipped: \d+(.*)$/gm;
    const lines = [...text.matchAll(pattern)];
    const m = lines.filter((l) => !(l[1] ?? "").includes("Time elapsed")).pop() ?? lines.pop();
    if (m === undefined) return null;
    const p = pairs(m[0]);
    const failed = n(p.failures) + n(p.errors);
    return {
      at: m.index + m[0].length,
      failed,
      passed: Math.max(n(p["tests run"]) - failed - n(p.skipped), 0),
    };
  },
  // TAP (node --test, tape): `# pass 3` / `# fail 1` (node's spec reporter: `ℹ pass 3`).
  (text) => {
    const pass = lastLine(text, /^[#ℹ] pass\s+(\d+)/gm);
    const fail = lastLine(text, /^[#ℹ] fail\s+(\d+)/gm);
    if (pass === null && fail === null) return null;
    const at = Math.max(pass?.at ?? 0, fail?.at ?? 0);
    return { at, failed: Number(fail?.groups[0] ?? 0), passed: Number(pass?.groups[0] ?? 0) };
  },
];

/** Sums the counts of every match of a per-binary or per-project summary; `at` is where the last ends. */
function summed(text: string, pattern: RegExp, failedGroup: number, passedGroup: number): Found | null {
  const found: Found = { at: -1, failed: 0, passed: 0 };
  for (const m of text.matchAll(pattern)) {
    found.at = m.index + m[0].length;
    found.failed += Number(m[failedGroup]);
    found.passed += Number(m[passedGroup]);
  }
  return found.at === -1 ? null : found;
}

/**
 * The failed and passed counts of the test run in an output, from the summary lines of pytest, unittest and
 * Django, go test, cargo, jest, vitest, mocha, rspec, PHPUnit, dotnet, maven surefire and TAP. Errors count
 * as failures. When several summaries appear, the last one counts; none gives null.
 */
export function testSummary(output: string): { failed: number; passed: number } | null {
  const text = plainText(output);
  let best: Found | null = null;
  for (const read of READERS) {
    const found = read(text);
    if (found !== null && (best === null || found.at > best.at)) best = found;
  }
  return best === null ? null : { failed: best.failed, passed: best.passed };
}

/** Lines that name a failing test, each with the part that names it. */
const FAILING_TESTS: RegExp[] = [
  /^(?:FAILED|ERROR) (\S+::[^\s[]+(?:\[[^\]\n]*\])?|\S+\.py)(?: - .*)?$/gm, // pytest short summary
  /^(\S+::[^\s[]+(?:\[[^\]\n]*\])?) (?:FAILED|ERROR)\b/gm, // pytest -v
  /^(?:FAIL|ERROR): (\S+ \([^)\n]+\))/gm, // unittest, Django
  /^\s*--- FAIL: (\S+)/gm, // go
  /^test (\S+) \.\.\. FAILED$/gm, // cargo
  /^[ \t]*[✕×✗] (.+?)(?: \(?\d+(?:\.\d+)? ?m?s\)?)?$/gm, // jest, vitest
  /^[ \t]*● (?!Console$)(.+)$/gm, // jest failure headers (`● Console` heads logged output)
  /^[ \t]*FAIL[ \t]+(\S+ > .+?)(?: \d+(?:\.\d+)?m?s)?$/gm, // vitest failure headers
  /^rspec (\S+)/gm, // rspec's rerun list
];

/**
 * The names of the failing tests an output lists (pytest, unittest, go, cargo, jest, vitest, rspec), each
 * once, in the order the runner's patterns find them; empty when it lists none.
 */
export function failingTestNames(output: string): string[] {
  return namesIn(plainText(output));
}

function namesIn(text: string): string[] {
  const names = new Set<string>();
  for (const pattern of FAILING_TESTS) for (const m of text.matchAll(pattern)) names.add((m[1] ?? "").trim());
  names.delete("");
  return [...names];
}

/**
 * Text that identifies which failure an output shows, for the caller to hash: the sorted names of the
 * failing tests when the output lists them, else its last 20 non-empty lines with `outputShape` applied.
 */
export function failureFingerprint(output: string): string {
  const text = plainText(output);
  const names = namesIn(text);
  if (names.length > 0) return names.sort().join("\n");
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  return outputShape(lines.slice(-20).join("\n"));
}
