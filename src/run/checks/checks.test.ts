/** Tests of running a task's checks in its working tree and reading their reports. */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CheckDef } from "../control/types.js";
import { runChecks } from "./checks.js";

const fixtures = resolve(import.meta.dirname, "../../../test/fixtures/checks");

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "reins-checks-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const check = (name: string, command: string, over: Partial<CheckDef> = {}): CheckDef => ({
  name,
  command,
  tier: "fast",
  format: "exit",
  timeoutMs: 10_000,
  ...over,
});

describe("runChecks", () => {
  it("runs the checks one after another in order and returns results in the same order", async () => {
    const results = await runChecks(
      [
        check("build", "sleep 0.1; echo built > out.txt"),
        check("lint", "cat out.txt; exit 1", { tier: "medium" }),
        check("unit", "test -f out.txt && echo ok"),
      ],
      { cwd: dir },
    );
    expect(results.map((r) => [r.name, r.tier, r.passed, r.exitCode])).toEqual([
      ["build", "fast", true, 0],
      ["lint", "medium", false, 1],
      ["unit", "fast", true, 0],
    ]);
    expect(results[1]?.output).toBe("built\n");
  });

  it("reads a JUnit report the command writes", async () => {
    const results = await runChecks(
      [
        check("pytest", `mkdir -p reports && cp ${fixtures}/pytest-junit.xml reports/junit.xml; exit 1`, {
          format: "junit",
          report: "reports/junit.xml",
        }),
      ],
      { cwd: dir },
    );
    expect(results[0]).toMatchObject({ passed: false, exitCode: 1, tests: { passed: 2, failed: 4 } });
    expect(results[0]?.failedTests).toContain("tests.test_math.test_add_negative");
  });

  it("reads a vitest JSON report the command writes", async () => {
    const results = await runChecks(
      [
        check("unit", `cp ${fixtures}/vitest-report-passed.json report.json`, {
          format: "vitest-json",
          report: "report.json",
        }),
      ],
      { cwd: dir },
    );
    expect(results[0]).toMatchObject({ passed: true, failedTests: [], tests: { passed: 2, failed: 0 } });
  });

  it("deletes a stale report before running, so an old green report never counts", async () => {
    writeFileSync(join(dir, "report.json"), JSON.stringify({ success: true, testResults: [] }));
    const results = await runChecks(
      [check("unit", "echo crashed before writing", { format: "vitest-json", report: "report.json" })],
      {
        cwd: dir,
      },
    );
    expect(results[0]?.passed).toBe(false);
    expect(results[0]?.output).toMatch(
      /^reins: vitest-json report report\.json was not written by the command\n/,
    );
    expect(existsSync(join(dir, "report.json"))).toBe(false);
  });

  it("refuses a report path outside the working tree without running or deleting anything", async () => {
    const outside = join(dir, "..", `${dir.split("/").pop()}-victim.xml`);
    writeFileSync(outside, "<keep/>");
    try {
      const results = await runChecks(
        [check("unit", "touch ran", { format: "junit", report: `../${outside.split("/").pop()}` })],
        {
          cwd: dir,
        },
      );
      expect(results[0]?.passed).toBe(false);
      expect(results[0]?.output).toMatch(/is outside the working tree/);
      expect(existsSync(outside)).toBe(true);
      expect(existsSync(join(dir, "ran"))).toBe(false);
    } finally {
      rmSync(outside, { force: true });
    }
  });

  it("fails a check whose report is too large to read", async () => {
    const results = await runChecks(
      [check("unit", "truncate -s 20M big.xml", { format: "junit", report: "big.xml" })],
      {
        cwd: dir,
      },
    );
    expect(results[0]?.passed).toBe(false);
    expect(results[0]?.output).toMatch(
      /^reins: junit report big\.xml: is 20971520 bytes, more than the \d+ read/,
    );
  });

  it("fails a check whose report is a directory", async () => {
    const results = await runChecks([check("unit", "mkdir r.xml", { format: "junit", report: "r.xml" })], {
      cwd: dir,
    });
    expect(results[0]?.output).toMatch(/^reins: junit report r\.xml: is not a regular file/);
  });

  it("fails a check that times out and notes the kill in its output", async () => {
    const results = await runChecks([check("slow", "echo begin; sleep 30", { timeoutMs: 200 })], {
      cwd: dir,
    });
    expect(results[0]).toMatchObject({ passed: false, exitCode: null });
    expect(results[0]?.output).toContain("begin\n");
    expect(results[0]?.output).toContain("[reins: timed out after 200 ms; its process group was killed]");
  });

  it("stops on abort: the running check is killed and the rest are not run", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const results = await runChecks([check("a", "sleep 30"), check("b", "touch b-ran")], {
      cwd: dir,
      signal: controller.signal,
    });
    expect(results.map((r) => r.passed)).toEqual([false, false]);
    expect(results[0]?.output).toContain("interrupted");
    expect(results[1]?.output).toBe("reins: not run: the run was interrupted");
    expect(existsSync(join(dir, "b-ran"))).toBe(false);
  });

  it("passes env and uses the clock given", async () => {
    let t = 0;
    const results = await runChecks([check("env", 'test "$CI" = 1')], {
      cwd: dir,
      env: { CI: "1" },
      clock: () => (t += 40),
    });
    expect(results[0]).toMatchObject({ passed: true, durationMs: 40 });
  });
});
