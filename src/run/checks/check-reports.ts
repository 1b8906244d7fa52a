/** Reads a check run's evidence (exit code, output, JUnit XML or vitest JSON report) into a result. */
import { XMLParser, XMLValidator } from "fast-xml-parser";
import type { CheckDef, CheckResult } from "../control/types.js";
import { failingTestNames, testSummary } from "../../base/vocabulary/test-summary.js";
import { firstLine } from "../../base/text/first-line.js";

/**
 * Reads what one check run proves: from its exit code and output, a JUnit XML report or vitest's JSON
 * report, into a CheckResult. Pure: the caller reads the files. A report that is missing, unreadable or not
 * the expected format makes the check fail with a one-line reason; it never crashes and never passes.
 */

/** Output kept in a CheckResult: the last 8 KB (the reins lines at the head included). */
export const MAX_CHECK_OUTPUT = 8 * 1024;

/** The largest report read; a bigger one fails the check rather than stall the loop parsing it. */
export const MAX_REPORT_BYTES = 16 * 1024 * 1024;

/** Names of failing tests kept in a result (the count in `tests` stays exact), and the length of each. */
const MAX_NAMES = 100;
const MAX_NAME = 300;

/** Failing tests summarized with their message at the head of the output. */
const MAX_LISTED = 20;

/** One run of a check's command, as the shell saw it. */
export interface CheckRun {
  exitCode: number | null;
  output: string;
  /** The report file's text, or null when it was not there to read. */
  report: string | null;
  /** Why the report could not be read (too large, a path outside the tree...), when the shell knows. */
  reportProblem?: string;
  durationMs: number;
}

/** What a report says: the failing tests (with a first line of why), and the counts. */
interface ReportReading {
  failed: { name: string; message: string }[];
  passed: number;
  /** Failures the report counts beyond the listed ones (suite-level counts, a file that failed to load). */
  extraFailed: number;
}

type Parsed = { ok: true; reading: ReportReading } | { ok: false; reason: string };

/** The evidence of one check run, bounded for the state and the fix-only prompt. */
export function readCheckResult(def: CheckDef, run: CheckRun): CheckResult {
  const base = { name: def.name, tier: def.tier, exitCode: run.exitCode, durationMs: run.durationMs };
  const head: string[] = [];
  if (run.exitCode === null) head.push("reins: the command was killed (timeout or abort) before it exited");

  if (def.format === "exit") {
    const summary = testSummary(run.output);
    // Evidence of failing tests turns an exit 0 red (a summary piped through `tail` loses the status).
    const passed = run.exitCode === 0 && (summary === null || summary.failed === 0);
    if (run.exitCode === 0 && !passed)
      head.push(`reins: exit code 0, but the output reports ${summary?.failed} failed`);
    return {
      ...base,
      passed,
      failedTests: passed ? [] : bounded(failingTestNames(run.output)),
      ...(summary === null ? {} : { tests: { passed: summary.passed, failed: summary.failed } }),
      output: withHead(head, run.output),
    };
  }

  const parsed = parseReport(def, run);
  if (!parsed.ok) {
    head.push(`reins: ${parsed.reason}`);
    return {
      ...base,
      passed: false,
      failedTests: bounded(failingTestNames(run.output)),
      output: withHead(head, run.output),
    };
  }
  const { failed, passed: passedCount, extraFailed } = parsed.reading;
  const failedCount = failed.length + extraFailed;
  const passed = run.exitCode === 0 && failedCount === 0;
  if (failedCount > 0) {
    head.push(`reins: ${failedCount} of ${failedCount + passedCount} tests failed (${def.report}):`);
    for (const f of failed.slice(0, MAX_LISTED))
      head.push(`  ✗ ${f.name}${f.message === "" ? "" : ` — ${f.message}`}`);
    if (failed.length > MAX_LISTED) head.push(`  … and ${failed.length - MAX_LISTED} more`);
    if (run.exitCode === 0) head.push("reins: exit code 0, but the report lists failures");
  } else if (run.exitCode !== 0 && run.exitCode !== null) {
    head.push(`reins: the report lists no failure, but the command exited ${run.exitCode}`);
  }
  return {
    ...base,
    passed,
    failedTests: bounded(failed.map((f) => f.name)),
    tests: { passed: passedCount, failed: failedCount },
    output: withHead(head, run.output),
  };
}

/** Reads the report a check's format names, or says in one line why it cannot. */
function parseReport(def: CheckDef, run: CheckRun): Parsed {
  const what = `${def.format} report ${def.report ?? "(none configured)"}`;
  if (def.report === undefined || def.report === "")
    return fail(`format ${def.format} needs a report file; none is configured`);
  if (run.reportProblem !== undefined) return fail(`${what}: ${run.reportProblem}`);
  if (run.report === null) return fail(`${what} was not written by the command`);
  if (run.report.length > MAX_REPORT_BYTES) return fail(`${what} is larger than ${MAX_REPORT_BYTES} bytes`);
  if (run.report.trim() === "") return fail(`${what} is empty`);
  const parsed = def.format === "junit" ? parseJunit(run.report) : parseVitestJson(run.report);
  return parsed.ok ? parsed : fail(`${what} ${parsed.reason}`);
}

const fail = (reason: string): Parsed => ({ ok: false, reason: firstLine(reason) });

// ---- JUnit XML ----

const JUNIT_LISTS = new Set(["testsuite", "testcase", "failure", "error", "skipped"]);

/**
 * Entities stay unexpanded (no billion laughs, no external entities), nesting is capped, and the
 * captured stdout/stderr of tests is kept as raw text rather than parsed.
 */
const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "",
  parseAttributeValue: false,
  parseTagValue: false,
  processEntities: false,
  htmlEntities: false,
  maxNestedTags: 64,
  ignoreDeclaration: true,
  ignorePiTags: true,
  stopNodes: ["*.system-out", "*.system-err"],
  isArray: (name) => JUNIT_LISTS.has(name),
});

type XmlNode = Record<string, unknown>;

const isNode = (v: unknown): v is XmlNode => typeof v === "object" && v !== null && !Array.isArray(v);
/** The elements under a key: `<failure>text</failure>` comes as a bare string, `<failure/>` as "". */
const nodes = (v: unknown): XmlNode[] =>
  (Array.isArray(v) ? v : v === undefined ? [] : [v]).map((x) =>
    isNode(x) ? x : typeof x === "string" ? { "#text": x } : {},
  );
const attr = (node: XmlNode, name: string): string => {
  const v = node[name];
  return typeof v === "string" ? decodeXml(v) : "";
};

/** The five predefined XML entities and character references, decoded once (never recursively). */
function decodeXml(text: string): string {
  return text.replace(/&(lt|gt|amp|quot|apos|#\d{1,7}|#x[\da-fA-F]{1,6});/g, (whole, ref: string) => {
    const named: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };
    if (named[ref] !== undefined) return named[ref];
    const code = ref.startsWith("#x") ? parseInt(ref.slice(2), 16) : Number(ref.slice(1));
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

/** JUnit as pytest, jest-junit, vitest, maven surefire and gradle write it: testcases with failure/error children. */
function parseJunit(text: string): Parsed {
  let doc: unknown;
  try {
    const valid = XMLValidator.validate(text);
    if (valid !== true)
      return { ok: false, reason: `is not well-formed XML (line ${valid.err.line}: ${valid.err.msg})` };
    doc = xml.parse(text);
  } catch (error) {
    return { ok: false, reason: `cannot be read as JUnit XML (${(error as Error).message})` };
  }
  if (!isNode(doc) || (doc.testsuites === undefined && doc.testsuite === undefined)) {
    const root = isNode(doc) ? Object.keys(doc)[0] : undefined;
    return {
      ok: false,
      reason: `is not JUnit XML (root element <${root ?? "?"}>, not <testsuites> or <testsuite>)`,
    };
  }
  const reading: ReportReading = { failed: [], passed: 0, extraFailed: 0 };
  // Suites nest (surefire, phpunit); the parser caps the depth, so recursion is bounded.
  const walk = (suite: XmlNode): void => {
    for (const testcase of nodes(suite.testcase)) {
      if (testcase.failure !== undefined || testcase.error !== undefined) {
        const problem = nodes(testcase.failure)[0] ?? nodes(testcase.error)[0];
        reading.failed.push({ name: junitName(testcase), message: failureLine(problem) });
      } else if (testcase.skipped === undefined) reading.passed++;
    }
    nodes(suite.testsuite).forEach(walk);
  };
  const roots = [...nodes(doc.testsuites), ...nodes(doc.testsuite)];
  roots.forEach(walk);
  // A root that counts more failures than its testcases show still failed (a suite-level error).
  const declared = roots.reduce(
    (sum, r) => sum + Number(attr(r, "failures") || 0) + Number(attr(r, "errors") || 0),
    0,
  );
  if (Number.isFinite(declared)) reading.extraFailed = Math.max(0, declared - reading.failed.length);
  return { ok: true, reading };
}

/** A JUnit testcase's name: `file > name` when the class is a file path, else `classname.name`. */
function junitName(testcase: XmlNode): string {
  const name = attr(testcase, "name");
  const classname = attr(testcase, "classname");
  const file = attr(testcase, "file");
  if (classname === "") return file === "" ? name : `${file} > ${name}`;
  if (name === classname || name.startsWith(`${classname} `)) return name; // jest-junit repeats the class
  if (/[\\/]|\.(?:[cm]?[jt]sx?|py|rb|go|rs)$/.test(classname)) return `${classname} > ${name}`;
  return `${classname}.${name}`;
}

/** The first line of a failure's message attribute, or of its text. */
function failureLine(problem: XmlNode | undefined): string {
  if (problem === undefined) return "";
  const text = attr(problem, "message") || attr(problem, "#text");
  return firstLine(text).slice(0, MAX_NAME);
}

// ---- vitest JSON ----

/** vitest's `--reporter=json` report (jest's shape): files with their assertion results. */
function parseVitestJson(text: string): Parsed {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `is not valid JSON (${(error as Error).message})` };
  }
  if (!isNode(doc) || !Array.isArray(doc.testResults))
    return { ok: false, reason: "is not a vitest JSON report (no testResults array)" };
  const reading: ReportReading = { failed: [], passed: 0, extraFailed: 0 };
  for (const file of nodes(doc.testResults)) {
    const assertions = nodes(file.assertionResults);
    let failedHere = 0;
    for (const a of assertions) {
      const name = str(a.fullName) || [...strings(a.ancestorTitles), str(a.title)].join(" ");
      if (a.status === "passed") reading.passed++;
      else if (a.status === "failed") {
        failedHere++;
        reading.failed.push({
          name,
          message: firstLine(strings(a.failureMessages)[0] ?? "").slice(0, MAX_NAME),
        });
      }
    }
    // A file that failed with no failed test did not load (syntax error, missing import): name the file.
    if (file.status === "failed" && failedHere === 0)
      reading.failed.push({ name: str(file.name) || "(a test file)", message: firstLine(str(file.message)) });
  }
  if (doc.success === false && reading.failed.length === 0) reading.extraFailed = 1; // unhandled errors
  return { ok: true, reading };
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x) => typeof x === "string") : []);

// ---- output ----

/** Names bounded in count and length, each once. */
function bounded(names: string[]): string[] {
  // Cut in the middle: parametrized names differ at their end.
  const half = Math.floor((MAX_NAME - 1) / 2);
  const cut = (n: string) => (n.length > MAX_NAME ? `${n.slice(0, half)}…${n.slice(-half)}` : n);
  return [...new Set(names)].slice(0, MAX_NAMES).map(cut);
}

/** reins' own lines, then the tail of the output, within MAX_CHECK_OUTPUT bytes (the head has at most half). */
function withHead(head: string[], output: string): string {
  const top = head.length === 0 ? "" : `${tailBytes(head.join("\n"), MAX_CHECK_OUTPUT / 2, true)}\n`;
  return top + tailBytes(output, MAX_CHECK_OUTPUT - Buffer.byteLength(top), false);
}

/**
 * The last `max` bytes of a text (or the first, with `fromHead`) on character boundaries, saying at the cut
 * how many bytes went.
 */
export function tailBytes(text: string, max: number, fromHead = false): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= max) return text;
  const note = (n: number) => `[… ${n} bytes cut]`;
  const room = Math.max(0, max - Buffer.byteLength(note(bytes.length)) - 1);
  if (fromHead) {
    let end = room;
    while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
    return `${bytes.subarray(0, end).toString("utf8")}\n${note(bytes.length - end)}`;
  }
  let start = bytes.length - room;
  while (start < bytes.length && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++;
  return `${note(start)}\n${bytes.subarray(start).toString("utf8")}`;
}
