/**
 * `reins plan check`: a plan or an imported file read as `reins run` would read it, without running
 * anything: the tree with deps, the checks per task, the notes and the first actions; exit 0 when it would
 * run, 1 when no check verifies a task, 2 when it is invalid.
 */
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reinsIn } from "#test/run-project.js";

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "reins-plan-check-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const NATIVE = `version: 1
name: calc
checks:
  syntax: { command: "node --check src/add.js", tier: fast }
  add: { command: "node --test test/add.test.js", tier: medium }
tasks:
  - id: m
    title: Module
    checks: [add]
    subtasks:
      - id: sum
        title: Implement sum with add
        deps: [add]
      - id: add
        title: Implement add
`;

describe("reins plan check", () => {
  it("prints the task tree with deps and checks, and what the run would do first, touching nothing", async () => {
    const dir = project({ "reins.plan.yaml": NATIVE });
    const ran = await reinsIn(dir, ["plan", "check"]);
    expect(ran.err).toBe("");
    expect(ran.code).toBe(0);
    expect(ran.out).toContain(
      `reins.plan.yaml: reins plan "calc", 2 tasks to run in 3 nodes, 1 dependency edge, 2 checks`,
    );
    expect(ran.out).toContain(
      [
        "tasks:",
        "  m  Module  ·  checks: add",
        "    sum  Implement sum with add  ·  after: add  ·  checks: add (inherited)",
        "    add  Implement add  ·  checks: add (inherited)",
      ].join("\n"),
    );
    expect(ran.out).toContain("  syntax (fast, after every iteration): node --check src/add.js");
    // The dependency decides the order: add comes first although sum is written first.
    expect(ran.out).toMatch(
      /reins run would start with:\n {2}run add's checks \(syntax, add\) before calling the agent: all green closes it without the agent\n$/,
    );
    // Nothing was written: no .reins, no git.
    expect(ran.out).not.toContain("note:");
    const json = await reinsIn(dir, ["plan", "check", "--json"]);
    const check = JSON.parse(json.out) as {
      leaves: number;
      deps: number;
      unchecked: string[];
      first: string[];
    };
    expect(check).toMatchObject({ leaves: 2, deps: 1, unchecked: [] });
    expect(check.first).toHaveLength(1);
  });

  it("reads an imported spec-kit file, prints its notes, and exits 1 naming how to add checks", async () => {
    const dir = project({});
    cpSync("test/fixtures/plans/tasks.md", join(dir, "specs", "001", "tasks.md"));
    const ran = await reinsIn(dir, ["plan", "check", "specs/001/tasks.md"]);
    expect(ran.code).toBe(1);
    expect(ran.out).toMatch(/^\S*specs\/001\/tasks\.md: spec-kit plan /);
    expect(ran.out).toMatch(/\nnotes:\n .*T001.*\n/);
    expect(ran.out).toContain(
      "no checks: nothing verifies the tasks; add them with a reins.plan.yaml holding `import:` and `checks:`",
    );
    expect(ran.out.trimEnd().split("\n").at(-1)).toMatch(
      /^reins run would refuse it: no check verifies any task \(give them checks, or run with --unverified; such a run ends unverified\)$/,
    );
  });

  it("picks a task-master tag with --tag, and refuses an unknown one in one line (exit 2)", async () => {
    const tagged = {
      master: { tasks: [{ id: 1, title: "Master work", status: "pending", dependencies: [], subtasks: [] }] },
      "feature-x": {
        tasks: [
          { id: 1, title: "X one", status: "pending", dependencies: [], subtasks: [] },
          { id: 2, title: "X two", status: "pending", dependencies: [1], subtasks: [] },
        ],
      },
    };
    const dir = project({ "tasks.json": JSON.stringify(tagged) });
    const master = JSON.parse((await reinsIn(dir, ["plan", "check", "tasks.json", "--json"])).out) as {
      nodes: { title: string }[];
    };
    expect(master.nodes.map((n) => n.title)).toEqual(["Master work"]);
    const x = await reinsIn(dir, ["plan", "check", "tasks.json", "--tag", "feature-x"]);
    expect(x.out).toContain("after: 1");
    expect(x.out).toContain("X two");
    const unknown = await reinsIn(dir, ["plan", "check", "tasks.json", "--tag", "nope"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/^reins: .*tasks\.json.*nope[^\n]*\n$/);
  });

  it("refuses an invalid plan with the line and field, exit 2", async () => {
    const dir = project({ "reins.plan.yaml": NATIVE.replace("deps: [add]", "deps: [nothing]") });
    const ran = await reinsIn(dir, ["plan", "check"]);
    expect(ran.code).toBe(2);
    expect(ran.err).toMatch(/^reins: .*reins\.plan\.yaml:\d+: .*nothing.*\n$/);
  });
});
