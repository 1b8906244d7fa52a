/** Tests of check recognition: which commands are checks, their results, and a project's own checks. */
import { describe, expect, it } from "vitest";
import { DEFAULT_CHECK_PATTERNS } from "../core/check-patterns.js";
import { checkOf, checkResult } from "./check-match.js";
import { detectProjectChecks, type ProjectFiles } from "../config/project-checks.js";
import { failureFingerprint, testSummary } from "./test-summary.js";

const PATTERNS = DEFAULT_CHECK_PATTERNS.map((c) => [new RegExp(c.pattern), c.name] as const);
const check = (command: string) => checkOf(command, PATTERNS);

// Short samples of each runner's real output, trimmed to the lines that matter.
const PYTEST_FAILED = `============================= test session starts ==============================
platform linux -- Python 3.11.4, pytest-7.4.0, pluggy-1.2.0
rootdir: /testbed
collected 13 items

tests/test_x.py ..F.......E..                                            [100%]

=================================== FAILURES ===================================
_______________________________ test_parse_empty _______________________________
    def test_parse_empty():
>       assert parse("") == []
E       AssertionError: assert None == []
tests/test_x.py:12: AssertionError
=========================== short test summary info ============================
FAILED tests/test_x.py::test_parse_empty - AssertionError: assert None == []
ERROR tests/test_x.py::test_fixture - fixture 'db' not found
==================== 1 failed, 11 passed, 1 error in 0.52s =====================`;
const PYTEST_Q = `..F.                                                                     [100%]
=================================== FAILURES ===================================
FAILED tests/test_y.py::test_b - assert 1 == 2
1 failed, 3 passed in 0.12s`;
const PYTEST_PASSED =
  "============================== 5 passed, 1 warning in 0.03s ===============================";
const UNITTEST = `test_add (test_calc.TestCalc) ... ok
test_div (test_calc.TestCalc) ... FAIL
test_mul (test_calc.TestCalc) ... ERROR

======================================================================
ERROR: test_mul (test_calc.TestCalc)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/testbed/test_calc.py", line 12, in test_mul
NameError: name 'mul' is not defined

======================================================================
FAIL: test_div (test_calc.TestCalc)
----------------------------------------------------------------------
AssertionError: 2 != 3

----------------------------------------------------------------------
Ran 3 tests in 0.001s

FAILED (failures=1, errors=1)`;
const DJANGO = `Testing against Django installed in '/testbed/django' with up to 8 processes
Creating test database for alias 'default'...
System check identified no issues (0 silenced).
..........s.
----------------------------------------------------------------------
Ran 12 tests in 0.345s

OK (skipped=1)
Destroying test database for alias 'default'...`;
const GO_VERBOSE = `=== RUN   TestAdd
--- PASS: TestAdd (0.00s)
=== RUN   TestSub
    calc_test.go:14: Sub(3, 1) = 1; want 2
--- FAIL: TestSub (0.00s)
FAIL
FAIL\texample.com/calc\t0.002s
ok  \texample.com/util\t(cached)
FAIL`;
const GO_QUIET =
  "ok  \texample.com/calc\t0.002s\nok  \texample.com/util\t0.003s\n?   \texample.com/cmd\t[no test files]";
const CARGO = `running 3 tests
test tests::adds ... ok
test tests::subtracts ... FAILED
test tests::multiplies ... ok

failures:

---- tests::subtracts stdout ----
thread 'tests::subtracts' panicked at src/lib.rs:20:9:
assertion \`left == right\` failed

test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass \`--lib\``;
const CARGO_SEVERAL = `     Running unittests src/lib.rs (target/debug/deps/calc-1a2b)
test result: ok. 4 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s
     Running tests/api.rs (target/debug/deps/api-3c4d)
test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.02s
   Doc-tests calc
test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.30s`;
const JEST = ` FAIL  src/sum.test.js
  sum
    ✓ adds 1 + 2 to equal 3 (3 ms)
    ✕ adds negatives (4 ms)

  ● sum › adds negatives

    expect(received).toBe(expected) // Object.is equality

Test Suites: 1 failed, 1 total
Tests:       1 failed, 1 passed, 2 total
Snapshots:   0 total
Time:        0.512 s
Ran all test suites.`;
const VITEST = ` ❯ src/sum.test.ts (2 tests | 1 failed) 5ms
   ✓ sum > adds 1 + 2
   × sum > adds negatives 3ms

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  src/sum.test.ts > sum > adds negatives
AssertionError: expected -3 to be -2

 Test Files  1 failed (1)
      Tests  1 failed | 1 passed (2)
   Start at  10:12:01
   Duration  312ms (transform 20ms, setup 0ms, collect 15ms, tests 5ms)`;
const MOCHA = `  Array
    #indexOf()
      ✓ should return -1 when the value is not present
      1) should return the index


  1 passing (9ms)
  1 failing

  1) Array
       #indexOf()
         should return the index:
     AssertionError [ERR_ASSERTION]: -1 == 0`;
const RSPEC = `..F.

Failures:

  1) Calculator adds
     Failure/Error: expect(calc.add(1, 2)).to eq(4)

Finished in 0.01234 seconds (files took 0.1 seconds to load)
4 examples, 1 failure

Failed examples:

rspec ./spec/calculator_spec.rb:5 # Calculator adds`;
const PHPUNIT_FAILED = `PHPUnit 10.5.0 by Sebastian Bergmann and contributors.

..F..                                                               5 / 5 (100%)

Time: 00:00.012, Memory: 8.00 MB

There was 1 failure:

FAILURES!
Tests: 5, Assertions: 9, Failures: 1.`;
const PHPUNIT_OK = "..... 5 / 5 (100%)\n\nTime: 00:00.010, Memory: 8.00 MB\n\nOK (5 tests, 9 assertions)";
const DOTNET =
  "Failed!  - Failed:     1, Passed:     5, Skipped:     0, Total:     6, Duration: 45 ms - Calc.Tests.dll (net8.0)";
const MAVEN = `[INFO] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.05 s <<< FAILURE! - in com.example.CalcTest
[INFO] Tests run: 2, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.01 s - in com.example.UtilTest
[INFO]
[INFO] Results:
[INFO]
[ERROR] Failures:
[ERROR]   CalcTest.testDiv:14 expected:<2> but was:<3>
[INFO]
[ERROR] Tests run: 5, Failures: 1, Errors: 0, Skipped: 0
[INFO] BUILD FAILURE`;
const NODE_TAP = `TAP version 13
# Subtest: adds
ok 1 - adds
# Subtest: subtracts
not ok 2 - subtracts
1..2
# tests 2
# suites 0
# pass 1
# fail 1
# cancelled 0`;

describe("DEFAULT_CHECK_PATTERNS", () => {
  it.each([
    ["npm test", "tests"],
    ["npm t", "tests"],
    ["pnpm run test:unit", "tests"],
    ["yarn test --watch=false", "tests"],
    ["bun test", "tests"],
    ["npx vitest run", "tests"],
    ["./node_modules/.bin/jest --ci", "tests"],
    ["mocha", "tests"],
    ["ava", "tests"],
    ["tap test/*.js", "tests"],
    ["node --test", "tests"],
    ["node --import tsx --test src/", "tests"],
    ["deno test -A", "tests"],
    ["pytest -q", "tests"],
    ["py.test tests", "tests"],
    ["python -m pytest tests/test_x.py", "tests"],
    ["python3.11 -m unittest discover", "tests"],
    ["python3 -m nose2", "tests"],
    [".venv/bin/python -m pytest", "tests"],
    ["poetry run pytest", "tests"],
    ["coverage run -m pytest", "tests"],
    ["tox -e py311", "tests"],
    ["nox -s tests", "tests"],
    ["python manage.py test polls", "tests"],
    ["./manage.py test", "tests"],
    ["./tests/runtests.py auth_tests --verbosity 2", "tests"],
    ["python tests/runtests.py", "tests"],
    ["runtests.py", "tests"],
    ["go test ./...", "tests"],
    ["cargo test --all", "tests"],
    ["cargo nextest run", "tests"],
    ["gradle test", "tests"],
    ["./gradlew clean :app:test", "tests"],
    ["./gradlew check", "tests"],
    ["mvn -q test", "tests"],
    ["mvn -Dtest=CalcTest test", "tests"],
    ["./mvnw verify", "tests"],
    ["dotnet test", "tests"],
    ["bundle exec rspec spec/models", "tests"],
    ["rake test", "tests"],
    ["bin/rails test", "tests"],
    ["vendor/bin/phpunit", "tests"],
    ["composer test", "tests"],
    ["mix test", "tests"],
    ["swift test", "tests"],
    ["ctest --output-on-failure", "tests"],
    ["make test", "tests"],
    ["make -C build check", "tests"],
    ["make tests", "tests"],
    ["bin/test", "tests"],
    ["./test.sh", "tests"],
    ["./run_tests.sh", "tests"],
    ["bats test/", "tests"],
    ["npm run lint", "lint"],
    ["yarn lint", "lint"],
    ["npx eslint src", "lint"],
    ["biome check .", "lint"],
    ["ruff check .", "lint"],
    ["ruff .", "lint"],
    ["flake8 src", "lint"],
    ["python -m pylint pkg", "lint"],
    ["pycodestyle x.py", "lint"],
    ["golangci-lint run", "lint"],
    ["go vet ./...", "lint"],
    ["cargo clippy -- -D warnings", "lint"],
    ["rubocop", "lint"],
    ["phpcs src", "lint"],
    ["make lint", "lint"],
    ["shellcheck x.sh", "lint"],
    ["npm run build", "build"],
    ["go build ./...", "build"],
    ["cargo build --release", "build"],
    ["mvn clean install", "build"],
    ["./mvnw package", "build"],
    ["gradle assemble", "build"],
    ["./gradlew build", "build"],
    ["dotnet build", "build"],
    ["make", "build"],
    ["make -j8", "build"],
    ["make all", "build"],
    ["cmake --build build", "build"],
    ["tsc -b", "build"],
    ["npm run typecheck", "typecheck"],
    ["pnpm type-check", "typecheck"],
    ["npx tsc --noEmit", "typecheck"],
    ["tsc -p tsconfig.json --noEmit", "typecheck"],
    ["mypy src", "typecheck"],
    ["pyright", "typecheck"],
    ["cargo check", "typecheck"],
  ])("%s is a %s check", (command, name) => {
    expect(check(command)?.name).toBe(name);
  });

  it.each([
    "python reproduce.py",
    "python -c 'import pytest; print(pytest.__version__)'",
    "pip install pytest",
    "npm install",
    "npm ci",
    "git diff",
    "git commit -m 'make test pass'",
    "cat tests/test_x.py",
    "cat tests/runtests.py",
    "grep -rn pytest .",
    "ls tests",
    "ruff format .",
    "make install",
    "command -v pytest",
    "echo npm test",
    "python -m pip install -e .",
    "npx prettier --check .",
    "make clean",
    "cargo run",
    "go mod tidy",
    "node script.js",
  ])("%s is no check", (command) => {
    expect(check(command)).toBeNull();
  });

  // Commands of 200,000 words that the patterns' repeated groups (`(?: \S+)*?`, `-\S+ `, `\S*/`) could
  // split many ways. A linear pattern reads each in milliseconds; one that backtracks over them would take
  // minutes (quadratic) or forever (exponential), and the test fails by its timeout.
  const WORDS = 200_000;
  it.each<[string, string, string | null]>([
    ["maven options", `mvn ${"-Dx=1 ".repeat(WORDS)}zzz`, null],
    ["gradle options", `./gradlew ${"-Px ".repeat(WORDS)}zzz`, null],
    ["make options and variables", `make ${"-j8 A=1 -C d ".repeat(WORDS)}zzz`, null],
    ["python options", `python3 ${"-X ".repeat(WORDS)}-m zzz`, null],
    ["node loaders", `node ${"--import x -x ".repeat(WORDS)}zzz`, null],
    ["tsc options", `tsc ${"-p x ".repeat(WORDS)}--noEmit`, "typecheck"],
    ["coverage arguments", `coverage run ${"a ".repeat(WORDS)}zzz`, null],
    ["path", `${"a/".repeat(WORDS)}zzz`, null],
    ["cargo toolchain", `cargo +x ${"a:".repeat(WORDS)} zzz`, null],
    ["python version", `python${"1.1".repeat(WORDS)} zzz`, null],
    ["script arguments", `npm run ${"x ".repeat(WORDS)}`, null],
    ["run of spaces", `mvn${" ".repeat(WORDS)}zzz`, null],
  ])("reads a very long command of %s without backtracking", (_, command, expected) => {
    const matching = PATTERNS.filter(([pattern]) => pattern.test(command)).map(([, name]) => name);
    expect(matching).toEqual(expected === null ? [] : [expected]);
    expect(check(command)).toEqual(expected === null ? null : { name: expected, stage: 0 });
  });
});

describe("checkOf", () => {
  it.each<[string, { name: string; stage: number } | null]>([
    ["cd /testbed && python -m pytest tests/test_x.py -q 2>&1 | tail -20", { name: "tests", stage: 0 }],
    ["FOO=1 npm test # attempt 2", { name: "tests", stage: 0 }],
    ["sed -i 's/a/b/' src/x.py && python -m pytest", { name: "tests", stage: 0 }],
    ["cat fixtures.json | npx vitest run", { name: "tests", stage: 1 }],
    [`bash -lc "cd /repo && timeout 600 uv run pytest -x | tail -5"`, { name: "tests", stage: 0 }],
    ["if pytest; then echo ok; fi", null],
    ["pytest -q; echo done", null],
    ["pytest || true", null],
    ["npm test && git commit -am wip", null],
    ["cd /testbed", null],
    ["python -m pytest --collect-only -q", null],
    ["cargo test --no-run", null],
    ["npx jest --version", null],
  ])("%s runs %j", (command, expected) => {
    expect(check(command)).toEqual(expected);
  });
});

describe("checkResult", () => {
  const result = (command: string, exitCode: number | undefined, output: string) => {
    const found = check(command);
    if (found === null) throw new Error(`not a check: ${command}`);
    return checkResult(command, exitCode, output, found.stage);
  };
  const PIPED = "cd /testbed && python -m pytest -q 2>&1 | tail -20";

  it.each<[string, string, number | undefined, string, { passed: boolean; failing?: number } | null]>([
    [
      "the exit code decides, with the summary's failing count",
      "pytest",
      1,
      PYTEST_FAILED,
      { passed: false, failing: 2 },
    ],
    ["a zero exit code passes", "python -m pytest", 0, PYTEST_PASSED, { passed: true, failing: 0 }],
    ["an exit code without a summary still decides", "npm run lint", 0, "", { passed: true }],
    [
      "a failing exit code fails a lint",
      "npx eslint src",
      1,
      "src/x.ts\n  3:1  error  ...",
      { passed: false },
    ],
    [
      "tail's exit code is no evidence: a failing summary fails",
      PIPED,
      0,
      PYTEST_Q,
      { passed: false, failing: 1 },
    ],
    [
      "tail's exit code is no evidence: a passing summary passes",
      PIPED,
      0,
      PYTEST_PASSED,
      { passed: true, failing: 0 },
    ],
    ["a pipe without a summary is no evidence", PIPED, 0, "....\n(output cut)", null],
    ["a summary with nothing run is no evidence", PIPED, 0, "no tests ran in 0.01s", null],
    [
      "pipefail makes the exit code the check's",
      "set -o pipefail; pytest | tee log",
      1,
      "",
      { passed: false },
    ],
    [
      "an unknown exit code leaves the summary to decide",
      "go test ./...",
      undefined,
      GO_VERBOSE,
      { passed: false, failing: 1 },
    ],
    ["an unknown exit code without summary is no evidence", "go test ./...", undefined, "", null],
  ])("%s", (_, command, exitCode, output, expected) => {
    expect(result(command, exitCode, output)).toEqual(expected);
  });
});

describe("testSummary", () => {
  it.each<[string, string, { failed: number; passed: number } | null]>([
    ["pytest, errors counting as failures", PYTEST_FAILED, { failed: 2, passed: 11 }],
    ["pytest -q", PYTEST_Q, { failed: 1, passed: 3 }],
    ["pytest, all passed", PYTEST_PASSED, { failed: 0, passed: 5 }],
    ["unittest", UNITTEST, { failed: 2, passed: 1 }],
    ["Django's runner", DJANGO, { failed: 0, passed: 11 }],
    ["go test -v", GO_VERBOSE, { failed: 1, passed: 1 }],
    ["go test by package", GO_QUIET, { failed: 0, passed: 2 }],
    ["cargo", CARGO, { failed: 1, passed: 2 }],
    ["cargo, summed over test binaries", CARGO_SEVERAL, { failed: 0, passed: 7 }],
    ["jest", JEST, { failed: 1, passed: 1 }],
    ["vitest", VITEST, { failed: 1, passed: 1 }],
    ["mocha", MOCHA, { failed: 1, passed: 1 }],
    ["rspec", RSPEC, { failed: 1, passed: 3 }],
    ["PHPUnit failures", PHPUNIT_FAILED, { failed: 1, passed: 4 }],
    ["PHPUnit OK", PHPUNIT_OK, { failed: 0, passed: 5 }],
    ["dotnet test", DOTNET, { failed: 1, passed: 5 }],
    ["maven surefire totals", MAVEN, { failed: 1, passed: 4 }],
    ["TAP from node --test", NODE_TAP, { failed: 1, passed: 1 }],
    [
      "coloured output",
      `\u001b[1m\u001b[31m==== 2 failed, 1 passed in 0.1s ====\u001b[0m`,
      { failed: 2, passed: 1 },
    ],
    [
      "the last of several runs",
      `${PYTEST_FAILED}\n$ pytest again\n${PYTEST_PASSED}`,
      { failed: 0, passed: 5 },
    ],
    ["a script's output", "hello\nresult: 3 items in 0.5s", null],
    ["nothing", "", null],
  ])("reads %s", (_, output, expected) => {
    expect(testSummary(output)).toEqual(expected);
  });
});

describe("failureFingerprint", () => {
  it.each([
    ["pytest", PYTEST_FAILED, "tests/test_x.py::test_fixture\ntests/test_x.py::test_parse_empty"],
    ["unittest", UNITTEST, "test_div (test_calc.TestCalc)\ntest_mul (test_calc.TestCalc)"],
    ["go", GO_VERBOSE, "TestSub"],
    ["cargo", CARGO, "tests::subtracts"],
    ["jest", JEST, "adds negatives\nsum › adds negatives"],
    ["vitest", VITEST, "src/sum.test.ts > sum > adds negatives\nsum > adds negatives"],
    ["rspec", RSPEC, "./spec/calculator_spec.rb:5"],
    [
      "jest without describe blocks, leaving out logged output",
      "  ● Console\n\n    console.log\n      hi\n\n  ● adds negatives\n\n    expect(received).toBe(expected)",
      "adds negatives",
    ],
    [
      "pytest with parametrized ids",
      "t.py::test_div[1 - 0] FAILED [ 50%]\nFAILED t.py::test_div[1 - 0] - ZeroDivisionError",
      "t.py::test_div[1 - 0]",
    ],
  ])("names the failing tests of %s", (_, output, expected) => {
    expect(failureFingerprint(output)).toBe(expected);
  });

  it("is the same for the same failures in another order and at another time", () => {
    const a = "FAILED t.py::b - x\nFAILED t.py::a - y\n== 2 failed in 0.1s ==";
    const b = "FAILED t.py::a - z\nFAILED t.py::b - w\n== 2 failed in 3.2s ==";
    expect(failureFingerprint(a)).toBe(failureFingerprint(b));
  });

  it("falls back to the output's last lines with their noise removed", () => {
    const crash = (at: string, ms: number) =>
      `${"noise\n".repeat(30)}\n[${at}] Traceback (most recent call last):\nKeyError: 'name' after ${ms}ms\n`;
    const fingerprint = failureFingerprint(crash("2024-01-02 10:00:00", 12));
    expect(fingerprint).toBe(failureFingerprint(crash("2024-05-06 11:11:11", 340)));
    expect(fingerprint).not.toBe(failureFingerprint(crash("2024-01-02 10:00:00", 12).replace("name", "id")));
    expect(fingerprint.split("\n")).toHaveLength(20);
  });
});

describe("detectProjectChecks", () => {
  const project = (files: Record<string, string>, list?: string[]): ProjectFiles => ({
    exists: (path) => path in files,
    read: (path) => files[path] ?? null,
    ...(list !== undefined ? { list: () => list } : {}),
  });
  const pkg = (scripts: Record<string, string>) => JSON.stringify({ name: "app", scripts });
  const ALL_SCRIPTS = pkg({
    test: "vitest run",
    lint: "eslint .",
    build: "tsc -b",
    typecheck: "tsc --noEmit",
  });

  it.each<[string, Record<string, string>, Record<string, string>]>([
    [
      "package.json scripts with npm",
      { "package.json": ALL_SCRIPTS },
      { tests: "npm test", lint: "npm run lint", build: "npm run build", typecheck: "npm run typecheck" },
    ],
    ["pnpm from its lockfile", { "package.json": ALL_SCRIPTS, "pnpm-lock.yaml": "" }, { tests: "pnpm test" }],
    ["yarn from its lockfile", { "package.json": ALL_SCRIPTS, "yarn.lock": "" }, { lint: "yarn run lint" }],
    [
      "bun's script, not its runner",
      { "package.json": ALL_SCRIPTS, "bun.lockb": "" },
      { tests: "bun run test" },
    ],
    [
      "a type-check script",
      { "package.json": pkg({ "type-check": "tsc" }) },
      { typecheck: "npm run type-check" },
    ],
    [
      "Makefile targets",
      { Makefile: ".PHONY: test lint\ntest: deps\n\tpytest\nlint:\n\truff check .\nVAR := 1\n" },
      { tests: "make test", lint: "make lint" },
    ],
    [
      "a Makefile check target",
      { Makefile: "all:\n\tcc x.c\ncheck: all\n\t./run\n" },
      { tests: "make check" },
    ],
    [
      "package.json before a Makefile, which fills the gaps",
      { "package.json": pkg({ test: "jest" }), Makefile: "test:\n\tnpm test\nlint:\n\teslint .\n" },
      { tests: "npm test", lint: "make lint" },
    ],
    [
      "Python tooling configured in pyproject.toml",
      {
        "pyproject.toml":
          "[project]\nname='x'\n[tool.pytest.ini_options]\naddopts='-q'\n[tool.ruff]\n[tool.mypy]\n",
      },
      { tests: "python -m pytest", lint: "ruff check .", typecheck: "mypy ." },
    ],
    [
      "flake8 configured in setup.cfg",
      { "setup.cfg": "[metadata]\n[flake8]\nmax-line-length=100\n" },
      { lint: "flake8" },
    ],
    [
      "a Django project",
      { "manage.py": "", "requirements.txt": "django" },
      { tests: "python manage.py test" },
    ],
    [
      "a Django project on pytest",
      { "manage.py": "", "pytest.ini": "[pytest]\n" },
      { tests: "python -m pytest" },
    ],
    [
      "Django's own test runner",
      { "setup.py": "", "tests/runtests.py": "" },
      { tests: "python tests/runtests.py" },
    ],
    [
      "Go",
      { "go.mod": "module x" },
      { tests: "go test ./...", lint: "go vet ./...", build: "go build ./..." },
    ],
    ["Rust", { "Cargo.toml": "" }, { tests: "cargo test", lint: "cargo clippy", typecheck: "cargo check" }],
    ["Maven", { "pom.xml": "<project/>" }, { tests: "mvn test", build: "mvn package" }],
    ["Gradle with its wrapper", { "build.gradle.kts": "", gradlew: "" }, { tests: "./gradlew test" }],
    ["Gradle without a wrapper", { "build.gradle": "" }, { tests: "gradle test", build: "gradle build" }],
    ["RSpec", { Gemfile: "", ".rspec": "" }, { tests: "bundle exec rspec" }],
    ["Ruby without RSpec", { Gemfile: "" }, { tests: "bundle exec rake test" }],
    [
      "a composer test script",
      { "composer.json": JSON.stringify({ scripts: { test: "phpunit" } }) },
      { tests: "composer test" },
    ],
    ["PHPUnit", { "composer.json": "{}" }, { tests: "vendor/bin/phpunit" }],
    ["bin/test", { "bin/test": "#!/bin/sh" }, { tests: "bin/test" }],
  ])("finds %s", (_, files, expected) => {
    expect(detectProjectChecks(project(files))).toMatchObject(expected);
  });

  it("finds .NET from the root's file names", () => {
    expect(detectProjectChecks(project({}, ["Calc.sln", "README.md"]))).toEqual({
      tests: "dotnet test",
      build: "dotnet build",
    });
  });

  it("never suggests npm test without a package.json test script", () => {
    expect(detectProjectChecks(project({ "go.mod": "" })).tests).toBe("go test ./...");
    expect(detectProjectChecks(project({ "package.json": pkg({ build: "tsc" }) })).tests).toBeUndefined();
    const npmInit = pkg({ test: 'echo "Error: no test specified" && exit 1' });
    expect(detectProjectChecks(project({ "package.json": npmInit }))).toEqual({});
  });

  it("finds nothing in an empty project", () => {
    expect(detectProjectChecks(project({}))).toEqual({});
  });

  it("ignores malformed files and a failing port", () => {
    expect(detectProjectChecks(project({ "package.json": "{ not json", "composer.json": "[1" }))).toEqual({
      tests: "vendor/bin/phpunit",
    });
    const broken: ProjectFiles = {
      exists: () => {
        throw new Error("EACCES");
      },
      read: () => {
        throw new Error("EACCES");
      },
    };
    expect(detectProjectChecks(broken)).toEqual({});
  });
});
