/** Tests of importing spec-kit's tasks.md. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { invalidPlan } from "#test/plans.js";
import { importSpecKit } from "./load-plan.js";

const FIXTURE = "test/fixtures/plans/tasks.md";

function md(...lines: string[]): string {
  return lines.join("\n") + "\n";
}

/** The one-line message importSpecKit throws for `text`. */
const errorOf = (text: string) => invalidPlan(() => importSpecKit(text, "tasks.md"));

describe("importSpecKit on a realistic tasks.md", () => {
  const plan = importSpecKit(readFileSync(FIXTURE, "utf8"), FIXTURE);
  const node = (id: string) => plan.nodes.find((n) => n.id === id)!;

  it("takes the feature's name from the title and makes each phase a component, after the one before", () => {
    expect(plan.name).toBe("Photo Albums");
    expect(plan.format).toBe("spec-kit");
    const phases = plan.nodes.filter((n) => n.kind === "component");
    expect(phases.map((n) => [n.id, n.deps, n.parent, n.at])).toEqual([
      ["phase-1", [], null, `${FIXTURE}:26`],
      ["phase-2", ["phase-1"], null, `${FIXTURE}:37`],
      ["phase-3", ["phase-2"], null, `${FIXTURE}:52`],
      ["phase-4", ["phase-3"], null, `${FIXTURE}:81`],
      ["phase-5", ["phase-4"], null, `${FIXTURE}:97`],
    ]);
    expect(node("phase-3").title).toBe(
      "Phase 3: User Story 1 - Organize photos into albums (Priority: P1) 🎯 MVP",
    );
    expect(node("phase-3").children).toEqual(["T009", "T010", "T011", "T012", "T013", "T014", "T015"]);
  });

  it("keeps every task item in order, with its file paths, without the [P] and [US1] markers", () => {
    expect(plan.nodes.filter((n) => n.kind === "task").map((n) => n.id)).toEqual(
      Array.from({ length: 20 }, (_, i) => `T${String(i + 1).padStart(3, "0")}`),
    );
    expect(node("T011")).toMatchObject({
      title: "Create the Album model in backend/src/models/album.ts",
      parent: "phase-3",
      at: `${FIXTURE}:67`,
      priority: 0,
      checks: [],
    });
  });

  it("makes a task without [P] wait for the one before and for the [P] run just before it", () => {
    expect(node("T001").deps).toEqual([]);
    expect(node("T002").deps).toEqual(["T001"]);
    // A [P] task waits for the sequential task before it (the project it configures must exist first)
    // and runs beside the [P] tasks next to it.
    expect(node("T003").deps).toEqual(["T002"]);
    expect(node("T004").deps).toEqual(["T002"]);
    expect(node("T005").deps).toEqual([]);
    expect(node("T006").deps).toEqual(["T005"]);
    expect(node("T008").deps).toEqual(["T005", "T006", "T007"]);
    // T013 says "(depends on T011, T012)"; the tests T009 and T010 before it are [P] too.
    expect(node("T013").deps).toEqual(["T009", "T010", "T011", "T012"]);
    expect(node("T015").deps).toEqual(["T014"]);
    expect(node("T017").deps).toEqual(["T016"]);
  });

  it("reads nested task items as subtasks and nested plain items as acceptance", () => {
    expect(node("T014").children).toEqual(["T014.1", "T014.2"]);
    expect(node("T014.1")).toMatchObject({
      kind: "subtask",
      parent: "T014",
      deps: [],
      title: "Add request validation with zod schemas",
    });
    expect(node("T014.2").deps).toEqual(["T014.1"]);
    expect(node("T013").acceptance).toEqual([
      "Albums are never nested",
      "Photos are ordered by the date they were taken",
    ]);
  });

  it("takes a phase's Purpose, Goal, Independent Test and Checkpoint as its acceptance", () => {
    expect(node("phase-3").acceptance).toEqual([
      "Goal: A user can create albums and group photos in them by date.",
      "Independent Test: Create two albums, drop photos in each, reload the page: the albums and their photos are still there.",
      "Checkpoint: At this point, User Story 1 should be fully functional and testable independently",
    ]);
    expect(node("phase-5").acceptance).toEqual([]);
  });

  it("ignores task-like lines in code blocks, and plain lists such as the format legend", () => {
    expect(plan.nodes.some((n) => n.id === "T999")).toBe(false);
    expect(plan.nodes).toHaveLength(5 + 20 + 2);
  });

  it("keeps a ticked task as a task to verify, and says so", () => {
    expect(node("T001").kind).toBe("task");
    expect(plan.notes).toEqual([
      `${FIXTURE}:30: T001 is ticked in ${FIXTURE}; reins verifies it again`,
      `${FIXTURE}: no checks: nothing verifies the tasks; add them with a reins.plan.yaml holding \`import:\` and \`checks:\``,
    ]);
  });
});

describe("importSpecKit on small files", () => {
  it("reads tasks outside any phase, ids it makes up, and the folder as the name", () => {
    const plan = importSpecKit(
      md("- [ ] Write the README", "- [x] Add a LICENSE"),
      "specs/002-docs/tasks.md",
    );
    expect(plan.name).toBe("002-docs");
    expect(plan.nodes.map((n) => [n.id, n.title, n.deps, n.parent])).toEqual([
      ["task-1", "Write the README", [], null],
      ["task-2", "Add a LICENSE", ["task-1"], null],
    ]);
  });

  it("accepts headings that are not phases, and tasks written with lower-case [x]", () => {
    const plan = importSpecKit(
      md("# Tasks: Docs", "", "## Backend work", "", "- [x] T001 Add the route"),
      "tasks.md",
    );
    expect(plan.nodes.map((n) => [n.id, n.kind])).toEqual([
      ["backend-work", "component"],
      ["T001", "task"],
    ]);
  });

  it("reads ids with a letter (T049a, T037A), and leaves review items of a checklist out with a note", () => {
    const plan = importSpecKit(
      md(
        "# Tasks: Parser",
        "## Phase 3.3: Core Implementation",
        "- [ ] T049 Build the parser in src/parser.py",
        "- [ ] T049a Handle empty input in src/parser.py (depends on T049)",
        "- [ ] T037A [P] Document the grammar in docs/grammar.md",
        "## Validation Checklist",
        "*GATE: Checked by main() before returning*",
        "- [ ] All contracts have corresponding tests",
        "- [ ] All entities have model tasks",
        "- [x] Parallel tasks truly independent",
      ),
      "specs/002-parser/tasks.md",
    );
    expect(plan.nodes.map((n) => [n.id, n.deps])).toEqual([
      ["phase-3.3", []],
      ["T049", []],
      ["T049a", ["T049"]],
      ["T037A", ["T049a"]],
    ]);
    expect(plan.notes).toContain(
      'specs/002-parser/tasks.md:8: 3 checklist item(s) under "Validation Checklist" without a task id are review items, not tasks: left out',
    );
  });

  it("reads task ids written in bold, and their deps in the text", () => {
    const plan = importSpecKit(
      md(
        "## Phase 4a: tests",
        "- [ ] **T001** [P] [US1] Write the test",
        "- [ ] **T011** Run it. Depends on T001.",
      ),
      "tasks.md",
    );
    expect(plan.nodes.map((n) => [n.id, n.title, n.deps])).toEqual([
      ["phase-4a", "Phase 4a: tests", []],
      ["T001", "Write the test", []],
      ["T011", "Run it. Depends on T001.", ["T001"]],
    ]);
  });

  it("takes checkbox items as tasks when no item of the file carries a task id", () => {
    const plan = importSpecKit(md("## Work", "- [ ] Write the parser", "- [ ] Test it"), "todo/tasks.md");
    expect(plan.nodes.map((n) => n.id)).toEqual(["work", "work-1", "work-2"]);
  });

  it("names an explicit dependency on a task that does not exist", () => {
    expect(
      errorOf(
        md("## Phase 1: Setup", "", "- [ ] T001 Create the app", "- [ ] T002 Wire it (depends on T009)"),
      ),
    ).toBe('tasks.md:4: T002: unknown id "T009"');
  });

  it("keeps both tasks of an id written twice, the second under a suffixed id, and says so", () => {
    const plan = importSpecKit(
      md(
        "## Phase 1: Setup",
        "",
        "- [ ] T001 Create the app",
        "- [ ] T001 Wire it",
        "- [ ] T002 Run it (depends on T001)",
      ),
      "tasks.md",
    );
    expect(plan.nodes.map((n) => [n.id, n.title, n.deps])).toEqual([
      ["phase-1", "Phase 1: Setup", []],
      ["T001", "Create the app", []],
      ["T001-2", "Wire it", ["T001"]],
      ["T002", "Run it (depends on T001)", ["T001-2", "T001"]],
    ]);
    expect(plan.notes).toContain("tasks.md:4: task id T001 is written twice; this one is read as T001-2");
  });

  it("leaves out a section that only repeats tasks written earlier (parallel execution examples)", () => {
    const plan = importSpecKit(
      md(
        "## Phase 1: Setup",
        "- [X] T001 Create the app",
        "- [X] T002 [P] Create the page",
        "## Phase 2: Polish",
        "- [ ] T003 Tidy up (depends on: T001)",
        "## Parallel Execution Examples",
        "- [ ] T001 Create the app first",
        "- [ ] T002 Create the page",
      ),
      "tasks.md",
    );
    expect(plan.nodes.filter((n) => n.kind === "task").map((n) => n.id)).toEqual(["T001", "T002", "T003"]);
    expect(plan.nodes.map((n) => n.id)).not.toContain("parallel-execution-examples");
    expect(plan.notes.join("\n")).toMatch(
      /tasks\.md:6: "Parallel Execution Examples" only repeats tasks written earlier \(T001, T002\): left out/,
    );
    expect(plan.nodes.find((n) => n.id === "T003")?.deps).toContain("T001");
  });

  it("tells phases with a letter apart (Phase 4a, Phase 4b), and made-up ids from written ones", () => {
    const plan = importSpecKit(
      md(
        "## Phase 4a: tests first",
        "- [ ] Write the tests",
        "## Phase 4b: production",
        "- [ ] Make them pass",
      ),
      "tasks.md",
    );
    expect(plan.nodes.map((n) => n.id)).toEqual(["phase-4a", "phase-4a-1", "phase-4b", "phase-4b-1"]);
  });

  it("names a cycle made by an earlier task depending on a later phase", () => {
    const text = md(
      "## Phase 1: Setup",
      "",
      "- [ ] T001 Create the app (depends on T002)",
      "",
      "## Phase 2: Core",
      "",
      "- [ ] T002 Add the core",
    );
    expect(errorOf(text)).toBe("tasks.md:3: dependency cycle: T001 → phase-2/T002 → phase-1/T001");
  });

  it("refuses a file with no task items", () => {
    expect(errorOf(md("# Tasks: nothing yet", "", "- a plain item"))).toBe("tasks.md: no tasks found");
  });

  it("refuses what would keep the markdown parser busy for minutes: deep nesting, thousands of lists", () => {
    expect(errorOf(">".repeat(100_000) + " - [ ] T001 Go\n")).toBe("tasks.md:1: nesting too deep");
    expect(errorOf("- ".repeat(1000) + "[ ] T001 Go\n")).toBe("tasks.md:1: nesting too deep");
    const phases = Array.from({ length: 1001 }, (_, i) => `## Phase ${i + 1}: P\n\n- [ ] T${i + 1} Go\n`);
    expect(errorOf(phases.join("\n"))).toBe("tasks.md:4003: more than 1000 list items: too many for a plan");
    expect(errorOf(`- [ ] T001 ${"x".repeat(300 * 1024)}\n`)).toBe(
      "tasks.md: 301 KB is too large for a tasks.md (at most 256 KB)",
    );
  });

  it("keeps front matter out of the tasks and keeps line numbers", () => {
    const plan = importSpecKit(
      md("---", "description: x", "---", "", "## Phase 1: Setup", "", "- [ ] T001 Go"),
      "tasks.md",
    );
    expect(plan.nodes.map((n) => n.at)).toEqual(["tasks.md:5", "tasks.md:7"]);
  });
});
