/** Tests of loading a plan file, whatever its format. */
import { cpSync, mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { invalidPlan } from "#test/plans.js";
import { loadPlan, parsePlan } from "./load-plan.js";

const dir = mkdtempSync(join(tmpdir(), "reins-plan-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes a file under the test folder and returns its path. */
function write(name: string, text: string): string {
  const file = join(dir, name);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, text);
  return file;
}

const SMALL = "version: 1\nname: small\ntasks:\n  - { id: a, title: A }\n";

describe("loadPlan", () => {
  it("reads a native plan as .yaml, .yml or .json, naming nodes by the path it was given", () => {
    for (const name of ["reins.plan.yaml", "plan.yml"]) {
      const file = write(name, SMALL);
      const plan = loadPlan(file);
      expect([plan.format, plan.source, plan.nodes[0]!.at]).toEqual(["reins", file, `${file}:4`]);
    }
    const json = write(
      "reins.plan.json",
      JSON.stringify({ version: 1, name: "j", tasks: [{ id: "a", title: "A" }] }),
    );
    expect(loadPlan(json).name).toBe("j");
  });

  it("picks the importer by the file name and shape", () => {
    cpSync("test/fixtures/plans/tasks.md", join(dir, "specs/001-photo-albums/tasks.md"), { recursive: true });
    cpSync("test/fixtures/plans/tasks.json", join(dir, ".taskmaster/tasks/tasks.json"), { recursive: true });
    expect(loadPlan(join(dir, "specs/001-photo-albums/tasks.md")).format).toBe("spec-kit");
    expect(loadPlan(join(dir, ".taskmaster/tasks/tasks.json")).format).toBe("task-master");
    // A .json file with `version` is a native plan even when it has `tasks`.
    const native = write(
      "tasks.json",
      JSON.stringify({ version: 1, name: "n", tasks: [{ id: "a", title: "A" }] }),
    );
    expect(loadPlan(native).format).toBe("reins");
  });

  it("imports a spec-kit tasks.md into a native plan that adds checks and settings", () => {
    cpSync("test/fixtures/plans/tasks.md", join(dir, "imp/specs/001/tasks.md"));
    const file = write(
      "imp/reins.plan.yaml",
      [
        "version: 1",
        "name: albums",
        "checks:",
        "  unit: { command: npx vitest run, tier: fast }",
        "  e2e: { command: npx playwright test, tier: slow }",
        "settings: { wip: 2 }",
        "import:",
        "  file: specs/001/tasks.md",
        "  checks: [e2e]",
        "",
      ].join("\n"),
    );
    const plan = loadPlan(file);
    const phases = plan.nodes.filter((n) => n.parent === null);
    expect(phases.map((n) => [n.id, n.checks])).toEqual([
      ["phase-1", ["e2e"]],
      ["phase-2", ["e2e"]],
      ["phase-3", ["e2e"]],
      ["phase-4", ["e2e"]],
      ["phase-5", ["e2e"]],
    ]);
    expect([plan.name, plan.format, plan.settings, plan.checks.map((c) => c.name)]).toEqual([
      "albums",
      "reins",
      { wip: 2 },
      ["unit", "e2e"],
    ]);
    expect(plan.nodes.find((n) => n.id === "T001")!.at).toBe(`${join(dir, "imp/specs/001/tasks.md")}:30`);
    expect(plan.notes).toEqual([
      `${join(dir, "imp/specs/001/tasks.md")}:30: T001 is ticked in ${join(dir, "imp/specs/001/tasks.md")}; reins verifies it again`,
    ]);
  });

  it("names an import's unknown check and an import that cannot be read", () => {
    cpSync("test/fixtures/plans/tasks.json", join(dir, "imp2/tasks.json"));
    const plan = (importLines: string[]) =>
      write("imp2/reins.plan.yaml", ["version: 1", "name: x", ...importLines, ""].join("\n"));
    expect(invalidPlan(() => loadPlan(plan(["import: { file: tasks.json, checks: [e2e] }"])))).toBe(
      `${join(dir, "imp2/reins.plan.yaml")}:3: import.checks[0]: unknown check "e2e" (the plan defines no checks)`,
    );
    expect(invalidPlan(() => loadPlan(plan(["import: missing.md"])))).toBe(
      `${join(dir, "imp2/reins.plan.yaml")}:3: import: ${join(dir, "imp2/missing.md")}: cannot read it: no such file`,
    );
    write("imp2/other.yaml", SMALL);
    expect(invalidPlan(() => loadPlan(plan(["import:", "  file: other.yaml"])))).toBe(
      `${join(dir, "imp2/reins.plan.yaml")}:4: import.file: ${join(dir, "imp2/other.yaml")} is neither a spec-kit tasks.md nor a task-master tasks.json`,
    );
    expect(invalidPlan(() => parsePlan("version: 1\nname: x\nimport: tasks.md\n", "reins.plan.yaml"))).toBe(
      "reins.plan.yaml:3: import: imports are read by loadPlan",
    );
  });

  it("says when the file is missing or a folder", () => {
    expect(invalidPlan(() => loadPlan(join(dir, "nope.yaml")))).toBe(
      `${join(dir, "nope.yaml")}: cannot read it: no such file`,
    );
    expect(invalidPlan(() => loadPlan(dir))).toBe(`${dir}: cannot read it: it is a folder`);
  });

  it("refuses control characters in ids, titles and criteria, in every format, before anything runs", () => {
    // A NUL in a title failed every commit of the task and left the run running for good.
    expect(
      invalidPlan(() => parsePlan('version: 1\nname: x\ntasks:\n  - { id: a, title: "A\\0B" }\n', "p.yaml")),
    ).toBe(
      'p.yaml:4: tasks[0].id: the title of "a" holds a control character (U+0000): titles go into commit messages; remove it',
    );
    // A newline would put a line of the plan's choosing into reins' commit message: a forged trailer.
    expect(
      invalidPlan(() =>
        parsePlan('version: 1\nname: x\ntasks:\n  - { id: a, title: "A\\nReins-Task: r/b" }\n', "p.yaml"),
      ),
    ).toContain("(U+000A)");
    const taskMaster = JSON.stringify({
      tasks: [{ id: "1", title: "Bell\u0007", status: "pending", dependencies: [], description: "d" }],
    });
    expect(invalidPlan(() => parsePlan(taskMaster, "tasks.json"))).toContain(
      'the title of "1" holds a control character (U+0007)',
    );
    expect(
      invalidPlan(() => parsePlan("## Phase 1\n- [ ] T001 Escape \u001b[31m red\n", "tasks.md")),
    ).toContain("(U+001B)");
    // A tab is text, and a criterion may run over lines.
    const fine = parsePlan(
      'version: 1\nname: x\ntasks:\n  - { id: a, title: "A\\tB", acceptance: ["one\\ntwo"] }\n',
      "p.yaml",
    );
    expect(fine.nodes[0]?.title).toBe("A\tB");
  });

  it("refuses a 10 MB file from its size, without reading it", () => {
    const file = write("huge.yaml", "");
    truncateSync(file, 10 * 1024 * 1024);
    expect(invalidPlan(() => loadPlan(file))).toBe(`${file}: 10.0 MB is too large for a plan (at most 4 MB)`);
  });
});
