/** Tests of the assertions' diff a person reads before approving tests an agent changed while red. */
import { describe, expect, it } from "vitest";
import { assertionDiff } from "./test-edits.js";

const diffOf = (path: string, lines: string[]) =>
  [
    `diff --git a/${path} b/${path}`,
    "index 1..2 100644",
    `--- a/${path}`,
    `+++ b/${path}`,
    "@@ -1,3 +1,3 @@",
    ...lines,
  ].join("\n");

describe("the assertions' diff of edited tests", () => {
  it("keeps the assertion lines a diff adds or removes, per file, and drops the rest", () => {
    const text = diffOf("test/add.test.js", [
      " import { add } from '../../src/add.js';",
      "-// adds",
      "+// adds two numbers",
      "-  assert.equal(add(2, 3), 5);",
      "+  assert.equal(add(2, 3), -1);",
    ]);
    expect(assertionDiff(text)).toBe(
      "--- test/add.test.js\n-  assert.equal(add(2, 3), 5);\n+  assert.equal(add(2, 3), -1);",
    );
  });

  it("shows every changed line of a file none of whose lines looks like an assertion, and skips tests", () => {
    const text = [
      diffOf("tests/test_x.py", ["-    value = compute()", "+    value = 6"]),
      diffOf("x.spec.ts", ["-  it('adds', () => {", "+  it.skip('adds', () => {"]),
    ].join("\n");
    expect(assertionDiff(text)).toBe(
      "--- tests/test_x.py\n-    value = compute()\n+    value = 6\n--- x.spec.ts\n+  it.skip('adds', () => {",
    );
  });

  it("is bounded per file and in all, saying where it was cut", () => {
    const many = Array.from({ length: 100 }, (_, i) => `+  expect(f(${i})).toBe(${"9".repeat(100)});`);
    const one = assertionDiff(diffOf("a.test.ts", many));
    expect(one.split("\n")).toHaveLength(42);
    expect(one.endsWith("[… 60 more lines]")).toBe(true);
    const all = assertionDiff(Array.from({ length: 10 }, (_, i) => diffOf(`t${i}.test.ts`, many)).join("\n"));
    expect(Buffer.byteLength(all)).toBeLessThan(6_100);
    expect(all.endsWith("[… cut at 6000 bytes]")).toBe(true);
  });
});
