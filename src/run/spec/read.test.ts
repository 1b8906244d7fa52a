/** Tests of reading specs from disk and caching their sections. */
import { mkdirSync, mkdtempSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PlanNode } from "../control/types.js";
import { hashSection, readSectionHashes, readSpecFile, SectionCache, specPath } from "./read.js";

describe("reading specs", () => {
  it("reads only specs inside the project, symbolic links followed", async () => {
    const outside = mkdtempSync(join(tmpdir(), "reins-spec-outside-"));
    writeFileSync(join(outside, "secrets.md"), "# Keys\n\nsk-live\n");
    const root = mkdtempSync(join(tmpdir(), "reins-spec-root-"));
    mkdirSync(join(root, "docs"));
    writeFileSync(join(root, "docs", "spec.md"), "# Spec\n");
    symlinkSync(join(outside, "secrets.md"), join(root, "docs", "link.md"));
    symlinkSync(outside, join(root, "elsewhere"));
    expect(specPath(root, "docs/spec.md")).toBe(join(root, "docs", "spec.md"));
    expect(specPath(root, "docs/not-yet.md")).toBe(join(root, "docs", "not-yet.md"));
    expect(specPath(root, "..spec.md")).toBe(join(root, "..spec.md"));
    for (const file of [
      "../secrets.md",
      join(outside, "secrets.md"),
      "docs/link.md",
      "elsewhere/secrets.md",
      ".",
    ])
      expect(() => specPath(root, file), file).toThrow(
        `the spec ${file} is outside the project; reins reads specs inside it only`,
      );
    await expect(readSpecFile(root, "docs/link.md")).rejects.toThrow("is outside the project");
  });

  it("hashes a section's normalised text with sha256", () => {
    expect(hashSection("# A\r\n\r\n\r\ntext  \n")).toBe(hashSection("# A\n\ntext"));
    expect(hashSection("# A\n\ntext")).toMatch(/^[0-9a-f]{64}$/);
    expect(hashSection("# A\n\ntext")).not.toBe(hashSection("# A\n\ntext."));
  });

  it("caches a file's sections by path and modification time: unchanged, it is not read again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reins-spec-cache-"));
    const path = join(dir, "spec.md");
    writeFileSync(path, "# A\n\none\n");
    const cache = new SectionCache();
    const first = await cache.file(path);
    expect(await cache.file(path)).toBe(first);
    // Same size, same mtime: taken for unchanged (what the key promises, and all it promises).
    const t = new Date("2026-01-01T00:00:00Z");
    utimesSync(path, t, t);
    const stamped = await cache.file(path);
    writeFileSync(path, "# A\n\ntwo\n");
    utimesSync(path, t, t);
    expect(await cache.file(path)).toBe(stamped);
    // A new mtime: read again.
    utimesSync(path, new Date(), new Date());
    const again = await cache.file(path);
    expect(again).not.toBe(stamped);
    expect(again.sections[0]?.own).toContain("two");
  });

  it("names a spec it cannot read, and its section hashes count its sections as gone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "reins-spec-read-"));
    await expect(readSpecFile(dir, "nope.md")).rejects.toThrow("cannot read the spec nope.md: ENOENT");
    const node: PlanNode = {
      id: "t",
      kind: "task",
      title: "t",
      deps: [],
      priority: 0,
      acceptance: [],
      checks: [],
      parent: null,
      children: [],
      spec: { file: "nope.md", sections: ["A"] },
    };
    expect(await readSectionHashes(dir, [node])).toEqual({});
  });
});
