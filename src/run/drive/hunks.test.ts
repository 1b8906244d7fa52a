import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HunkCache, parseHunks } from "./hunks.js";

const DIFF = `diff --git a/calc.js b/calc.js
index 1111111..2222222 100644
--- a/calc.js
+++ b/calc.js
@@ -1,4 +1,4 @@
-module.exports.add = (a, b) => a - b;
+module.exports.add = (a, b) => a + b;
 // note 1
 // note 2
 // note 3
@@ -10,6 +10,6 @@ module.exports.add = (a, b) => a - b;
 // note 9
 // note 10
 function mul(a, b) {
-  return a * b;
+  return a * b + 0;
 }
 module.exports.mul = mul;
@@ -20,3 +20,2 @@ function tail() {
 const x = 1;
-const y = 2;
 const z = 3;
`;

describe("the hunks of a diff", () => {
  it("cuts a diff into hunks, each a patch of its own, with the changed lines and the function around them", () => {
    const hunks = parseHunks(DIFF);
    expect(hunks.map((h) => h.ref)).toEqual([
      { file: "calc.js", lines: "1", context: "" },
      { file: "calc.js", lines: "13", context: "function mul(a, b) {" },
      { file: "calc.js", lines: "21 (removed)", context: "const x = 1;" },
    ]);
    const second = hunks[1]?.aside;
    expect(second !== undefined && "patch" in second ? second.patch : "").toBe(
      [
        "diff --git a/calc.js b/calc.js",
        "index 1111111..2222222 100644",
        "--- a/calc.js",
        "+++ b/calc.js",
        ...DIFF.split("\n").slice(10, 18),
        "",
      ].join("\n"),
    );
  });

  it("reads nothing from a diff with no hunk (a binary file)", () => {
    expect(parseHunks("diff --git a/x.png b/x.png\nBinary files a/x.png and b/x.png differ\n")).toEqual([]);
  });
});

describe("the hunk tier's cache", () => {
  it("keeps what a check said of a tree across instances, and starts afresh from a damaged file", () => {
    const path = join(mkdtempSync(join(tmpdir(), "reins-hunk-cache-")), "cache.json");
    const cache = new HunkCache(path);
    expect(cache.get("k")).toBeUndefined();
    cache.set("k", true);
    cache.set("j", false);
    cache.save();
    const again = new HunkCache(path);
    expect([again.get("k"), again.get("j")]).toEqual([true, false]);
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ k: true, j: false });
    writeFileSync(path, "{ damaged");
    expect(new HunkCache(path).get("k")).toBeUndefined();
  });
});
