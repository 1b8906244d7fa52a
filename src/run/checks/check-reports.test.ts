/** Tests of reading a check's evidence: its exit code, a JUnit report or vitest's JSON report. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CheckDef } from "../control/types.js";
import { MAX_CHECK_OUTPUT, readCheckResult, tailBytes, type CheckRun } from "./check-reports.js";

const fixture = (name: string) =>
  readFileSync(join(import.meta.dirname, "../../../test/fixtures/checks", name), "utf8");

const def = (format: CheckDef["format"], report?: string): CheckDef => ({
  name: "unit",
  command: "npm test",
  tier: "fast",
  format,
  ...(report === undefined ? {} : { report }),
  timeoutMs: 60_000,
});

const run = (over: Partial<CheckRun>): CheckRun => ({
  exitCode: 0,
  output: "",
  report: null,
  durationMs: 12,
  ...over,
});

describe("exit format", () => {
  it("passes on exit 0 and carries name, tier, exit code and duration", () => {
    const result = readCheckResult(def("exit"), run({ output: "all good\n" }));
    expect(result).toEqual({
      name: "unit",
      tier: "fast",
      passed: true,
      exitCode: 0,
      failedTests: [],
      output: "all good\n",
      durationMs: 12,
    });
  });

  it("names pytest's failing tests and counts from its summary", () => {
    const result = readCheckResult(def("exit"), run({ exitCode: 1, output: fixture("pytest-output.txt") }));
    expect(result.passed).toBe(false);
    expect(result.failedTests).toEqual([
      "tests/test_math.py::test_add_negative",
      "tests/test_math.py::test_pairs[2-3]",
      "tests/test_math.py::TestBroken::test_raises",
      "tests/test_errors.py::test_uses_db",
    ]);
    expect(result.tests).toEqual({ passed: 2, failed: 4 });
  });

  it("names vitest's failing tests from its colored default output", () => {
    const result = readCheckResult(def("exit"), run({ exitCode: 1, output: fixture("vitest-output.txt") }));
    expect(result.passed).toBe(false);
    expect(result.failedTests).toEqual(
      expect.arrayContaining([
        "src/math.test.ts > math > negatives > adds two negatives",
        "src/strings.test.ts > upper <case> & more",
      ]),
    );
    expect(result.tests).toEqual({ passed: 2, failed: 2 });
  });

  it("names go and cargo failures", () => {
    const go =
      "=== RUN   TestAdd\n--- FAIL: TestAdd (0.00s)\n    add_test.go:9: got 2\nFAIL\nFAIL\texample.com/m\t0.002s\n";
    expect(readCheckResult(def("exit"), run({ exitCode: 1, output: go })).failedTests).toEqual(["TestAdd"]);
    const cargo = "test tests::adds ... FAILED\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored\n";
    const result = readCheckResult(def("exit"), run({ exitCode: 101, output: cargo }));
    expect(result.failedTests).toEqual(["tests::adds"]);
    expect(result.tests).toEqual({ passed: 1, failed: 1 });
  });

  it("is red on exit 0 when the output's summary reports failures (status lost in a pipe)", () => {
    const result = readCheckResult(def("exit"), run({ exitCode: 0, output: fixture("pytest-output.txt") }));
    expect(result.passed).toBe(false);
    expect(result.output.split("\n")[0]).toBe("reins: exit code 0, but the output reports 4 failed");
  });

  it("fails a killed command and says so", () => {
    const result = readCheckResult(def("exit"), run({ exitCode: null, output: "working...\n" }));
    expect(result.passed).toBe(false);
    expect(result.exitCode).toBeNull();
    expect(result.output).toMatch(/^reins: the command was killed/);
  });

  it("keeps only the last 8 KB of the output, saying how much was cut", () => {
    const output = `${"x".repeat(20_000)}\nthe end\n`;
    const result = readCheckResult(def("exit"), run({ exitCode: 1, output }));
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(MAX_CHECK_OUTPUT);
    expect(result.output).toMatch(/^\[… \d+ bytes cut\]\n/);
    expect(result.output.endsWith("the end\n")).toBe(true);
  });
});

describe("junit format", () => {
  it("reads pytest's JUnit XML: classname.name, errors as failures, skips not counted", () => {
    const result = readCheckResult(
      def("junit", "junit.xml"),
      run({ exitCode: 1, report: fixture("pytest-junit.xml"), output: "" }),
    );
    expect(result.passed).toBe(false);
    expect(result.failedTests).toEqual([
      "tests.test_errors.test_uses_db",
      "tests.test_math.test_add_negative",
      "tests.test_math.test_pairs[2-3]",
      "tests.test_math.TestBroken.test_raises",
    ]);
    expect(result.tests).toEqual({ passed: 2, failed: 4 });
    // The failures' messages head the output for the fix-only prompt, entities decoded.
    expect(result.output).toContain("reins: 4 of 6 tests failed (junit.xml):");
    expect(result.output).toContain(
      "✗ tests.test_math.test_add_negative — AssertionError: negatives & <signs>",
    );
  });

  it("reads vitest's JUnit XML as `file > name`, a file that failed to load included", () => {
    const result = readCheckResult(
      def("junit", "junit.xml"),
      run({ exitCode: 1, report: fixture("vitest-junit.xml") }),
    );
    expect(result.failedTests).toEqual([
      "src/broken.test.ts",
      "src/math.test.ts > math > negatives > adds two negatives",
      "src/strings.test.ts > upper <case> & more",
    ]);
    expect(result.tests).toEqual({ passed: 2, failed: 3 });
  });

  it("reads jest-junit's XML, whose name repeats the class", () => {
    const result = readCheckResult(
      def("junit", "junit.xml"),
      run({ exitCode: 1, report: fixture("jest-junit.xml") }),
    );
    expect(result.failedTests).toEqual(["cart applies a discount code"]);
    expect(result.tests).toEqual({ passed: 2, failed: 1 });
    expect(result.output).toContain(
      "✗ cart applies a discount code — Error: expect(received).toBe(expected)",
    );
  });

  it("reads a maven surefire report with a root <testsuite>, CDATA and captured output", () => {
    const result = readCheckResult(
      def("junit", "r.xml"),
      run({ exitCode: 1, report: fixture("maven-surefire.xml") }),
    );
    expect(result.failedTests).toEqual(["com.example.OrderServiceTest.persistsOrder"]);
    expect(result.tests).toEqual({ passed: 2, failed: 1 });
  });

  it("is red when the report lists failures although the command exited 0", () => {
    const result = readCheckResult(
      def("junit", "junit.xml"),
      run({ exitCode: 0, report: fixture("jest-junit.xml") }),
    );
    expect(result.passed).toBe(false);
    expect(result.output).toContain("reins: exit code 0, but the report lists failures");
  });

  it("is red when the report is green but the command failed", () => {
    const report =
      '<testsuites><testsuite name="s"><testcase classname="a" name="b"/></testsuite></testsuites>';
    const result = readCheckResult(def("junit", "junit.xml"), run({ exitCode: 2, report }));
    expect(result.passed).toBe(false);
    expect(result.tests).toEqual({ passed: 1, failed: 0 });
    expect(result.output).toContain("the report lists no failure, but the command exited 2");
  });

  it("passes a green report with exit 0", () => {
    const report =
      '<?xml version="1.0"?><testsuites><testsuite name="s" tests="2" failures="0"><testcase classname="a" name="b"/>' +
      '<testcase classname="a" name="c"><skipped/></testcase></testsuite></testsuites>';
    const result = readCheckResult(def("junit", "junit.xml"), run({ exitCode: 0, report }));
    expect(result).toMatchObject({ passed: true, failedTests: [], tests: { passed: 1, failed: 0 } });
  });

  it("counts suite-level failures the testcases do not show", () => {
    const report =
      '<testsuite name="s" tests="1" failures="0" errors="1"><testcase classname="a" name="b"/></testsuite>';
    const result = readCheckResult(def("junit", "junit.xml"), run({ exitCode: 0, report }));
    expect(result.passed).toBe(false);
    expect(result.tests).toEqual({ passed: 1, failed: 1 });
  });

  it("walks nested suites", () => {
    const report =
      '<testsuites><testsuite name="outer"><testsuite name="inner"><testcase classname="A" name="x"><failure/></testcase>' +
      '</testsuite><testcase classname="A" name="y"/></testsuite></testsuites>';
    const result = readCheckResult(def("junit", "junit.xml"), run({ exitCode: 1, report }));
    expect(result.failedTests).toEqual(["A.x"]);
    expect(result.tests).toEqual({ passed: 1, failed: 1 });
  });
});

describe("vitest-json format", () => {
  it("reads a real failing vitest JSON report: fullName per failed test, a file that did not load by path", () => {
    const result = readCheckResult(
      def("vitest-json", "report.json"),
      run({ exitCode: 1, report: fixture("vitest-report-failed.json") }),
    );
    expect(result.passed).toBe(false);
    expect(result.failedTests).toEqual([
      "/home/dev/app/src/broken.test.ts",
      "math negatives adds two negatives",
      "upper <case> & more",
    ]);
    expect(result.tests).toEqual({ passed: 2, failed: 3 });
    expect(result.output).toContain(
      "✗ /home/dev/app/src/broken.test.ts — Cannot find module './does-not-exist.js' imported from",
    );
    expect(result.output).toContain(
      "✗ math negatives adds two negatives — AssertionError: expected -2 to be -3",
    );
  });

  it("passes a real green vitest JSON report with exit 0", () => {
    const result = readCheckResult(
      def("vitest-json", "report.json"),
      run({ exitCode: 0, report: fixture("vitest-report-passed.json") }),
    );
    expect(result).toMatchObject({ passed: true, failedTests: [], tests: { passed: 2, failed: 0 } });
  });

  it("is red when vitest reports success false without a failed test (unhandled errors)", () => {
    const report = JSON.stringify({ success: false, testResults: [] });
    const result = readCheckResult(def("vitest-json", "report.json"), run({ exitCode: 0, report }));
    expect(result.passed).toBe(false);
    expect(result.tests).toEqual({ passed: 0, failed: 1 });
  });
});

describe("unusable reports fail the check with one clear line", () => {
  const cases: [string, CheckDef, Partial<CheckRun>, RegExp][] = [
    [
      "missing",
      def("junit", "junit.xml"),
      { report: null },
      /^reins: junit report junit\.xml was not written/,
    ],
    ["empty", def("junit", "junit.xml"), { report: "  \n" }, /^reins: junit report junit\.xml is empty/],
    [
      "not XML",
      def("junit", "junit.xml"),
      { report: "Segmentation fault" },
      /is not well-formed XML \(line 1: /,
    ],
    [
      "truncated",
      def("junit", "junit.xml"),
      { report: '<testsuites><testsuite name="a">' },
      /is not well-formed XML/,
    ],
    [
      "not JUnit",
      def("junit", "junit.xml"),
      { report: "<html><body>502</body></html>" },
      /is not JUnit XML \(root element <html>/,
    ],
    [
      "bad JSON",
      def("vitest-json", "r.json"),
      { report: '{"testResults": [' },
      /^reins: vitest-json report r\.json is not valid JSON/,
    ],
    ["not vitest", def("vitest-json", "r.json"), { report: "[1,2]" }, /no testResults array/],
    [
      "unconfigured",
      def("junit"),
      { report: null },
      /^reins: format junit needs a report file; none is configured/,
    ],
    [
      "shell's problem",
      def("junit", "big.xml"),
      { reportProblem: "is 99999999 bytes" },
      /^reins: junit report big\.xml: is 99999999 bytes/,
    ],
  ];
  it.each(cases)("%s", (_label, checkDef, over, reason) => {
    const result = readCheckResult(checkDef, run({ exitCode: 0, output: "tests ran\n", ...over }));
    expect(result.passed).toBe(false);
    expect(result.output).toMatch(reason);
    expect(result.output.split("\n")[0]).not.toMatch(/\n/);
    expect(result.output).toContain("tests ran");
  });

  it("still names failing tests from the output when the report is unusable", () => {
    const result = readCheckResult(
      def("junit", "junit.xml"),
      run({ exitCode: 1, report: null, output: fixture("pytest-output.txt") }),
    );
    expect(result.failedTests).toContain("tests/test_math.py::test_add_negative");
  });
});

describe("hostile XML", () => {
  const junit = def("junit", "junit.xml");

  it("does not expand entities (billion laughs)", () => {
    const entities = Array.from(
      { length: 9 },
      (_, i) => `<!ENTITY l${i + 1} "${`&l${i};`.repeat(10)}">`,
    ).join("");
    const report =
      `<?xml version="1.0"?><!DOCTYPE t [<!ENTITY l0 "lol">${entities}]>` +
      '<testsuite><testcase classname="a" name="&l9;"><failure message="&l9;">&l9;</failure></testcase></testsuite>';
    const started = performance.now();
    const result = readCheckResult(junit, run({ exitCode: 1, report }));
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(result.passed).toBe(false);
    expect(result.failedTests).toEqual(["a.&l9;"]);
    expect(result.output.length).toBeLessThan(2_000);
  });

  it("refuses external entities without reading them", () => {
    const report =
      '<?xml version="1.0"?><!DOCTYPE t [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>' +
      '<testsuite><testcase classname="a" name="&xxe;"/></testsuite>';
    const result = readCheckResult(junit, run({ exitCode: 0, report }));
    expect(result.passed).toBe(false);
    expect(result.output).not.toContain("root:");
    expect(result.output.split("\n")[0]).toMatch(/^reins: junit report junit\.xml /);
  });

  it("refuses deep nesting without overflowing the stack", () => {
    const report = `<testsuites>${"<testsuite>".repeat(20_000)}${"</testsuite>".repeat(20_000)}</testsuites>`;
    const result = readCheckResult(junit, run({ exitCode: 0, report }));
    expect(result.passed).toBe(false);
    expect(result.output).toMatch(
      /^reins: junit report junit\.xml cannot be read as JUnit XML \(Maximum nested tags/,
    );
  });

  it("refuses a report past the size limit without parsing it", () => {
    const report = `<testsuite>${" ".repeat(17 * 1024 * 1024)}</testsuite>`;
    const result = readCheckResult(junit, run({ exitCode: 0, report }));
    expect(result.passed).toBe(false);
    expect(result.output).toMatch(/is larger than \d+ bytes/);
  });

  it("bounds the names of thousands of failing tests", () => {
    const cases = Array.from(
      { length: 5_000 },
      (_, i) => `<testcase classname="c" name="${"n".repeat(1_000)}${i}"><failure/></testcase>`,
    );
    const report = `<testsuite>${cases.join("")}</testsuite>`;
    const result = readCheckResult(junit, run({ exitCode: 1, report }));
    expect(result.tests).toEqual({ passed: 0, failed: 5_000 });
    expect(result.failedTests).toHaveLength(100);
    expect(Math.max(...result.failedTests.map((n) => n.length))).toBeLessThanOrEqual(300);
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(MAX_CHECK_OUTPUT);
  });

  it("refuses names like __proto__ without touching prototypes", () => {
    const report =
      '<testsuite><testcase __proto__="x" classname="a" name="b"><failure/></testcase></testsuite>';
    const result = readCheckResult(junit, run({ exitCode: 0, report }));
    expect(result.passed).toBe(false);
    expect(result.output).toMatch(
      /^reins: junit report junit\.xml cannot be read as JUnit XML \(\[SECURITY\]/,
    );
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe("tailBytes", () => {
  it("cuts on a character boundary", () => {
    const text = "é".repeat(100);
    const cut = tailBytes(text, 60);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(60);
    expect(cut).not.toContain("\uFFFD");
    expect(cut).toMatch(/^\[… \d+ bytes cut\]\né+$/);
  });
});
