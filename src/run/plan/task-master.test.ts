/** Tests of importing claude-task-master's tasks.json. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { invalidPlan } from "#test/plans.js";
import { importTaskMaster, parsePlan } from "./load-plan.js";

const FIXTURE = "test/fixtures/plans/tasks.json";

/** The one-line message importTaskMaster throws for `text`. */
const errorOf = (text: string, tag?: string) =>
  invalidPlan(() => importTaskMaster(text, "tasks.json", tag === undefined ? {} : { tag }));

/** A legacy (untagged) tasks.json of the given tasks, one JSON line each. */
function legacy(...tasks: object[]): string {
  return `{\n  "tasks": [\n${tasks.map((task) => `    ${JSON.stringify(task)}`).join(",\n")}\n  ]\n}\n`;
}

describe("importTaskMaster on a realistic tagged tasks.json", () => {
  const plan = importTaskMaster(readFileSync(FIXTURE, "utf8"), FIXTURE);
  const node = (id: string) => plan.nodes.find((n) => n.id === id)!;

  it("makes tasks and subtasks, in order, each at its line", () => {
    expect(plan.format).toBe("task-master");
    expect(plan.nodes.map((n) => [n.id, n.kind, n.parent, n.children, n.at])).toEqual([
      ["1", "task", null, [], `${FIXTURE}:4`],
      ["2", "task", null, ["2.1", "2.2", "2.3"], `${FIXTURE}:15`],
      ["2.1", "subtask", "2", [], `${FIXTURE}:25`],
      ["2.2", "subtask", "2", [], `${FIXTURE}:33`],
      ["2.3", "subtask", "2", [], `${FIXTURE}:42`],
      ["3", "task", null, ["3.1", "3.2"], `${FIXTURE}:52`],
      ["3.1", "subtask", "3", [], `${FIXTURE}:62`],
      ["3.2", "subtask", "3", [], `${FIXTURE}:70`],
      ["5", "task", null, [], `${FIXTURE}:91`],
    ]);
  });

  it("reads a subtask's numeric deps as its siblings and dotted ones as any subtask", () => {
    expect(node("2").deps).toEqual(["1"]);
    expect(node("2.2").deps).toEqual(["2.1"]);
    expect(node("2.3").deps).toEqual(["2.1", "2.2"]);
    expect(node("3.1").deps).toEqual(["2.2"]);
    expect(node("3.2").deps).toEqual(["3.1", "2.3"]);
  });

  it("maps priority high/medium/low to 2/1/0, subtasks taking their task's", () => {
    expect(
      [node("1"), node("2"), node("2.1"), node("3"), node("3.2"), node("5")].map((n) => n.priority),
    ).toEqual([2, 2, 2, 1, 1, 0]);
  });

  it("makes the description, details and test strategy the acceptance text", () => {
    expect(node("2.2").acceptance).toEqual([
      "Create, find by email, and delete users.",
      "Test strategy: Round-trip a user through an in-memory database.",
    ]);
    expect(node("1").acceptance).toEqual([
      "Create the Node.js project with TypeScript, ESLint and vitest.",
      'Details: Initialize package.json with "type": "module", add tsconfig.json (strict), eslint.config.js and vitest.config.ts. Add npm scripts for build, lint and test.',
      "Test strategy: npm run lint and npm test pass on the empty project.",
    ]);
  });

  it("keeps done tasks to verify, leaves cancelled ones out with the deps on them, and says so", () => {
    expect(node("1").title).toBe("Set up the project repository");
    expect(plan.nodes.some((n) => n.id === "4")).toBe(false);
    expect(node("5").deps).toEqual(["3"]);
    expect(plan.notes).toEqual([
      `${FIXTURE}:4: task 1 is done in ${FIXTURE}; reins verifies it again`,
      `${FIXTURE}:70: subtask 3.2 is done in ${FIXTURE}; reins verifies it again`,
      `${FIXTURE}:80: task 4 is cancelled in ${FIXTURE}; left out of the plan`,
      `${FIXTURE}:98: 5's dependency on cancelled 4 dropped`,
      `${FIXTURE}: no checks: nothing verifies the tasks; add them with a reins.plan.yaml holding \`import:\` and \`checks:\``,
    ]);
  });

  it("is what parsePlan gives for a .json file of that shape", () => {
    expect(parsePlan(readFileSync(FIXTURE, "utf8"), FIXTURE)).toEqual(plan);
  });
});

describe("importTaskMaster on other shapes", () => {
  it("reads the legacy untagged format and string ids", () => {
    const plan = importTaskMaster(
      legacy({ id: "1", title: "One" }, { id: 2, title: "Two", dependencies: ["1"], priority: "critical" }),
      "tasks.json",
    );
    expect(plan.nodes.map((n) => [n.id, n.deps, n.priority, n.at])).toEqual([
      ["1", [], 1, "tasks.json:3"],
      ["2", ["1"], 3, "tasks.json:4"],
    ]);
  });

  it("picks the master tag, the only tag, or the tag asked for", () => {
    const tagged = JSON.stringify({
      master: { tasks: [{ id: 1, title: "Main" }] },
      "feature-x": { tasks: [{ id: 1, title: "Feature" }] },
    });
    expect(importTaskMaster(tagged, "tasks.json").nodes[0]!.title).toBe("Main");
    const picked = importTaskMaster(tagged, "tasks.json", { tag: "feature-x" });
    expect([picked.name, picked.nodes[0]!.title]).toEqual(["feature-x", "Feature"]);
    expect(
      importTaskMaster(JSON.stringify({ only: { tasks: [{ id: 1, title: "A" }] } }), "tasks.json").name,
    ).toBe("only");
    expect(errorOf(JSON.stringify({ a: { tasks: [] }, b: { tasks: [] } }))).toBe(
      "tasks.json:1: (top level): several tags, and none is master: pick one with --tag; tags: a, b",
    );
    expect(errorOf(tagged, "nope")).toBe('tasks.json:1: (top level): no tag "nope"; tags: master, feature-x');
  });

  it("says which tags hold tasks when the one picked is empty, and reads tags under `tags`", () => {
    const emptyMaster = JSON.stringify({
      master: { tasks: [] },
      "feature-x": { tasks: [{ id: 1, title: "F" }] },
    });
    expect(errorOf(emptyMaster)).toBe(
      'tasks.json:1: tag "master" holds no tasks; tags with tasks: feature-x (pick one with --tag)',
    );
    // A file with its own version and name beside its tags (seen in the wild).
    const wrapped = JSON.stringify({
      version: "0.25.1",
      name: "app",
      tags: { master: { tasks: [{ id: 1, title: "Wrapped", details: ["Line one", "Line two"] }] } },
    });
    const plan = importTaskMaster(wrapped, "tasks.json");
    expect(plan.nodes.map((n) => [n.id, n.title, n.acceptance])).toEqual([
      ["1", "Wrapped", ["Details: Line one\nLine two"]],
    ]);
  });

  it("reads a tag written beside `tags`, and names it when the tag picked is empty", () => {
    // Seen in the wild: an empty master under `tags`, the work in a tag at the top level.
    const beside = JSON.stringify({
      version: "1",
      name: "app",
      tags: { master: { tasks: [] } },
      desenvolvimento: { tasks: [{ id: 1, title: "Login" }], metadata: {} },
    });
    expect(errorOf(beside)).toBe(
      'tasks.json:1: tag "master" holds no tasks; tags with tasks: desenvolvimento (pick one with --tag)',
    );
    const plan = importTaskMaster(beside, "tasks.json", { tag: "desenvolvimento" });
    expect(plan.nodes.map((n) => [n.id, n.title])).toEqual([["1", "Login"]]);
  });

  it("says so when a tag holds its tasks as a bare list", () => {
    const bare = JSON.stringify({ master: [{ id: 1, title: "A", status: "pending", dependencies: [] }] });
    expect(errorOf(bare)).toBe(
      'tasks.json:1: tag "master" holds a list; task-master writes its tasks as { "master": { "tasks": [...] } }',
    );
  });

  it("reads string ids (92.1, 42-1), a subtask written whole, and a subtask id written twice, as task-master does", () => {
    const plan = importTaskMaster(
      legacy(
        { id: 92, title: "Ninety-two" },
        {
          id: "92.1",
          title: "A task with a dotted id",
          dependencies: [92],
          subtasks: [{ id: 1, title: "Its first part" }],
        },
        { id: "42-1", title: "A task with a dash", dependencies: ["92.1"] },
        {
          id: 7,
          title: "Seven",
          subtasks: [
            { id: "7.1", title: "Written whole" },
            { id: 2, title: "Two", dependencies: [1] },
            { id: 2, title: "Two again", dependencies: [2] },
          ],
        },
      ),
      "tasks.json",
    );
    expect(plan.nodes.map((n) => [n.id, n.deps])).toEqual([
      ["92", []],
      ["92.1", ["92"]],
      ["92.1.1", []],
      ["42-1", ["92.1"]],
      ["7", []],
      ["7.1", []],
      ["7.2", ["7.1"]],
      ["7.2-2", ["7.2"]],
    ]);
    expect(plan.notes).toContainEqual(
      expect.stringMatching(
        /^tasks\.json:\d+: subtask 7\.2 is written twice under task 7; the second is read as 7\.2-2$/,
      ),
    );
  });

  it("treats a subtask's number no sibling has as a top-level task, and drops a dep on its own task", () => {
    const plan = importTaskMaster(
      legacy(
        { id: 1, title: "One" },
        {
          id: 2,
          title: "Two",
          subtasks: [
            { id: 1, title: "Sub", dependencies: [2] },
            { id: 3, title: "Other", dependencies: [1, "1"] },
          ],
        },
      ),
      "tasks.json",
    );
    expect(plan.nodes.map((n) => [n.id, n.deps])).toEqual([
      ["1", []],
      ["2", []],
      ["2.1", []],
      ["2.3", ["2.1"]],
    ]);
    expect(plan.notes[0]).toBe("tasks.json:4: 2.1's dependency on its own task 2 dropped");
  });

  it("names a subtask depending on itself", () => {
    expect(
      errorOf(legacy({ id: 1, title: "One", subtasks: [{ id: 1, title: "Sub", dependencies: [1] }] })),
    ).toBe('tasks.json:3: tasks[0].subtasks[0].dependencies[0]: "1.1" depends on itself');
  });

  it("names a dependency on a task that does not exist, at its line", () => {
    expect(errorOf(legacy({ id: 1, title: "One" }, { id: 2, title: "Two", dependencies: [7] }))).toBe(
      'tasks.json:4: tasks[1].dependencies[0]: unknown id "7"',
    );
  });

  it("names a cycle", () => {
    expect(
      errorOf(
        legacy(
          { id: 1, title: "One", dependencies: [3] },
          { id: 2, title: "Two", dependencies: [1] },
          { id: 3, title: "Three", dependencies: [2] },
        ),
      ),
    ).toBe("tasks.json:3: dependency cycle: 1 → 3 → 2 → 1");
  });

  it("names a field of the wrong type and an unknown priority", () => {
    expect(errorOf(legacy({ id: 1 }))).toBe("tasks.json:3: tasks[0].title: required");
    expect(errorOf(legacy({ id: 1, title: "One", dependencies: "2" }))).toBe(
      'tasks.json:3: tasks[0].dependencies: expected a list, got "2"',
    );
    expect(errorOf(legacy({ id: 1, title: "One", priority: "urgent" }))).toBe(
      'tasks.json:3: tasks[0].priority: got "urgent"; expected one of critical, high, medium, low',
    );
    expect(errorOf(legacy({ id: "a b", title: "One" }))).toBe(
      'tasks.json:3: tasks[0].id: got "a b"; not a task id',
    );
  });

  it("refuses __proto__ keys and duplicate keys", () => {
    expect(errorOf('{"tasks": [{"id": 1, "title": "One", "__proto__": {"polluted": true}}]}')).toBe(
      'tasks.json:1: tasks[0].__proto__: the key "__proto__" is not allowed',
    );
    expect(errorOf('{"tasks": [],\n "tasks": []}')).toBe('tasks.json:2: invalid JSON: duplicate key "tasks"');
  });
});
