/** Tests of the native plan format: parsing, one-line errors and dependency cycles. */
import { describe, expect, it } from "vitest";
import { invalidPlan, planNode } from "#test/plans.js";
import { parsePlan } from "./load-plan.js";

const FILE = "reins.plan.yaml";

/** A plan from its lines, so a test can count them: line n is `lines[n - 1]`. */
function yaml(...lines: string[]): string {
  return lines.join("\n") + "\n";
}

/** The one-line message parsePlan throws for `text`. */
const errorOf = (text: string, file = FILE) => invalidPlan(() => parsePlan(text, file));

const HEAD = ["version: 1", "name: demo"];

describe("parsePlan: the native format", () => {
  it("reads a three-task plan without modules: top-level tasks, defaults filled in", () => {
    const plan = parsePlan(
      yaml(
        ...HEAD,
        "checks:",
        "  unit: { command: npm test, tier: fast }",
        "tasks:",
        "  - id: api",
        "    title: Add the /health endpoint",
        "  - id: ui",
        "    title: Show the health badge",
        "    deps: [api]",
        "    acceptance: The badge is green when /health answers 200",
        "  - id: docs",
        "    title: Document /health",
        "    priority: -1",
      ),
      FILE,
    );
    expect(plan.name).toBe("demo");
    expect(plan.format).toBe("reins");
    expect(plan.source).toBe(FILE);
    expect(plan.notes).toEqual([]);
    expect(plan.checks).toEqual([
      { name: "unit", command: "npm test", tier: "fast", format: "exit", timeoutMs: 600_000 },
    ]);
    expect(plan.settings).toEqual({});
    // Every field not given takes its default: a top-level task of priority 0, no deps, checks or acceptance.
    expect(plan.nodes).toEqual([
      planNode("api", { title: "Add the /health endpoint", at: "reins.plan.yaml:6" }),
      planNode("ui", {
        title: "Show the health badge",
        deps: ["api"],
        acceptance: ["The badge is green when /health answers 200"],
        at: "reins.plan.yaml:8",
      }),
      planNode("docs", { title: "Document /health", priority: -1, at: "reins.plan.yaml:12" }),
    ]);
  });

  it("flattens modules → components → tasks → subtasks depth first, parents and children by id", () => {
    const plan = parsePlan(
      yaml(
        "$schema: ./node_modules/reins/schema/reins.plan.schema.json",
        ...HEAD,
        "checks:",
        "  lint: { command: npx eslint ., tier: fast }",
        "  api: { command: npx vitest run test/api, tier: medium, format: vitest-json, report: .reins/api.json }",
        "  e2e: { command: npx playwright test, tier: slow, format: junit, report: results.xml, timeout: 15m }",
        "settings:",
        "  wip: 2",
        "  maxUnverifiedLines: 800",
        "  maxAttempts: 4",
        "  retries: { checks: 3, transient: 5 }",
        "  backoff: { baseMs: 2s, maxMs: 60000 }",
        "  slowCheckRuns: 3",
        "  boundaries: ['src/api/**', 'migrations/**']",
        "  maxIterations: 40",
        "modules:",
        "  - id: auth",
        "    title: Authentication",
        "    checks: [e2e]",
        "    components:",
        "      - id: auth-api",
        "        title: API",
        "        checks: [api]",
        "        tasks:",
        "          - id: login",
        "            title: Login endpoint",
        "            priority: 2",
        "            type: implement",
        "            spec: { file: docs/spec.md, sections: [Login, Sessions] }",
        "            acceptance:",
        "              - POST /login answers 200 with a session cookie",
        "              - A wrong password answers 401",
        "            subtasks:",
        "              - id: login-route",
        "                title: Route and validation",
        "              - id: login-tests",
        "                title: Tests",
        "                deps: [login-route]",
        "      - id: auth-ui",
        "        title: Login page",
        "        deps: [auth-api]",
        "        tasks:",
        "          - id: form",
        "            title: Login form",
        "            spec: { file: docs/spec.md }",
      ),
      FILE,
    );
    expect(plan.nodes.map((n) => [n.id, n.kind, n.parent, n.children, n.at])).toEqual([
      ["auth", "module", null, ["auth-api", "auth-ui"], "reins.plan.yaml:18"],
      ["auth-api", "component", "auth", ["login"], "reins.plan.yaml:22"],
      ["login", "task", "auth-api", ["login-route", "login-tests"], "reins.plan.yaml:26"],
      ["login-route", "subtask", "login", [], "reins.plan.yaml:35"],
      ["login-tests", "subtask", "login", [], "reins.plan.yaml:37"],
      ["auth-ui", "component", "auth", ["form"], "reins.plan.yaml:40"],
      ["form", "task", "auth-ui", [], "reins.plan.yaml:44"],
    ]);
    const login = plan.nodes.find((n) => n.id === "login")!;
    expect(login).toMatchObject({
      priority: 2,
      type: "implement",
      spec: { file: "docs/spec.md", sections: ["Login", "Sessions"] },
      acceptance: ["POST /login answers 200 with a session cookie", "A wrong password answers 401"],
    });
    expect(plan.nodes.find((n) => n.id === "form")!.spec).toEqual({ file: "docs/spec.md", sections: [] });
    expect(plan.nodes.find((n) => n.id === "auth")!.checks).toEqual(["e2e"]);
    expect(plan.checks).toEqual([
      { name: "lint", command: "npx eslint .", tier: "fast", format: "exit", timeoutMs: 600_000 },
      {
        name: "api",
        command: "npx vitest run test/api",
        tier: "medium",
        format: "vitest-json",
        report: ".reins/api.json",
        timeoutMs: 600_000,
      },
      {
        name: "e2e",
        command: "npx playwright test",
        tier: "slow",
        format: "junit",
        report: "results.xml",
        timeoutMs: 900_000,
      },
    ]);
    expect(plan.settings).toEqual({
      wip: 2,
      maxUnverifiedLines: 800,
      maxAttempts: 4,
      retries: { checks: 3, transient: 5 },
      backoff: { baseMs: 2000, maxMs: 60_000 },
      slowCheckRuns: 3,
      boundaries: ["src/api/**", "migrations/**"],
      maxIterations: 40,
    });
  });

  it("reads the same plan written as JSON, with lines from the JSON text", () => {
    const json = [
      "{",
      '  "version": 1,',
      '  "name": "demo",',
      '  "tasks": [',
      '    { "id": "a", "title": "A" },',
      '    { "id": "b", "title": "B", "deps": ["a"] }',
      "  ]",
      "}",
    ].join("\n");
    const plan = parsePlan(json, "reins.plan.json");
    expect(plan.nodes.map((n) => [n.id, n.deps, n.at])).toEqual([
      ["a", [], "reins.plan.json:5"],
      ["b", ["a"], "reins.plan.json:6"],
    ]);
    expect(errorOf(json.replace('["a"]', '["x"]'), "reins.plan.json")).toBe(
      'reins.plan.json:6: tasks[1].deps[0]: unknown id "x"',
    );
  });

  it("drops repeated deps and checks, and trims texts", () => {
    const plan = parsePlan(
      yaml(
        ...HEAD,
        "checks: { unit: { command: '  npm test  ', tier: fast } }",
        "tasks:",
        "  - { id: a, title: A }",
        "  - id: b",
        "    title: |",
        "      B, written as a block",
        "    deps: [a, a]",
        "    checks: [unit, unit]",
      ),
      FILE,
    );
    expect(plan.nodes[1]).toMatchObject({ title: "B, written as a block", deps: ["a"], checks: ["unit"] });
    expect(plan.checks[0]!.command).toBe("npm test");
  });
});

describe("parsePlan: one line naming file:line and the field", () => {
  const tasks = (...lines: string[]) => yaml(...HEAD, "tasks:", ...lines);

  it("names an unknown dep by its full path in the hierarchy", () => {
    const text = yaml(
      ...HEAD,
      "modules:",
      "  - id: core",
      "    title: Core",
      "    components:",
      "      - id: db",
      "        title: Database",
      "        tasks:",
      "          - { id: schema, title: Schema }",
      "      - id: auth",
      "        title: Auth",
      "        tasks:",
      "          - { id: users, title: Users }",
      "          - { id: tokens, title: Tokens }",
      "          - id: sessions",
      "            title: Sessions",
      "            deps:",
      "              - auth-db",
    );
    expect(errorOf(text)).toBe(
      'reins.plan.yaml:19: modules[0].components[1].tasks[2].deps[0]: unknown id "auth-db"',
    );
  });

  it("names a duplicate id and where it was first declared", () => {
    expect(
      errorOf(tasks("  - id: a", "    title: A", "  - id: b", "    title: B", "  - id: a", "    title: C")),
    ).toBe('reins.plan.yaml:8: tasks[2].id: duplicate id "a" (first at reins.plan.yaml:4)');
  });

  it("names an unknown check and the checks there are", () => {
    const text = yaml(
      ...HEAD,
      "checks:",
      "  lint: { command: npx eslint ., tier: fast }",
      "  unit: { command: npx vitest run, tier: fast }",
      "tasks:",
      "  - id: a",
      "    title: A",
      "    checks: [lint, e2e]",
    );
    expect(errorOf(text)).toBe(
      'reins.plan.yaml:9: tasks[0].checks[1]: unknown check "e2e" (defined: lint, unit)',
    );
    expect(errorOf(tasks("  - { id: a, title: A, checks: [unit] }"))).toBe(
      'reins.plan.yaml:4: tasks[0].checks[0]: unknown check "unit" (the plan defines no checks)',
    );
  });

  it("names a dep on the node itself, on a node containing it and on a node it contains", () => {
    expect(errorOf(tasks("  - id: a", "    title: A", "    deps: [a]"))).toBe(
      'reins.plan.yaml:6: tasks[0].deps[0]: "a" depends on itself',
    );
    const nested = (deps: string, on: string) =>
      yaml(
        ...HEAD,
        "modules:",
        "  - id: m",
        "    title: M",
        on === "m" ? `    deps: [${deps}]` : "    priority: 0",
        "    components:",
        "      - id: c",
        "        title: C",
        "        tasks:",
        "          - id: t",
        "            title: T",
        on === "t" ? `            deps: [${deps}]` : "            priority: 0",
      );
    expect(errorOf(nested("m", "t"))).toBe(
      'reins.plan.yaml:13: modules[0].components[0].tasks[0].deps[0]: "t" depends on "m", which contains it',
    );
    expect(errorOf(nested("t", "m"))).toBe(
      'reins.plan.yaml:6: modules[0].deps[0]: "m" depends on "t", which it contains',
    );
  });

  it("names a misspelt field, with the field it resembles", () => {
    expect(errorOf(tasks("  - id: a", "    title: A", "    dependencies: [b]"))).toBe(
      'reins.plan.yaml:6: tasks[0].dependencies: unknown field "dependencies"',
    );
    expect(errorOf(tasks("  - id: a", "    titel: A"))).toBe(
      'reins.plan.yaml:5: tasks[0].titel: unknown field "titel" (did you mean "title"?)',
    );
  });

  it("explains a level of the hierarchy written in the wrong place, not only the missing one", () => {
    const text = yaml(
      ...HEAD,
      "modules:",
      "  - id: m",
      "    title: M",
      "    tasks:",
      "      - { id: a, title: A }",
    );
    expect(errorOf(text)).toBe(
      'reins.plan.yaml:6: modules[0].tasks: unknown field "tasks" here (a module holds components, a component tasks, a task subtasks)',
    );
  });

  it("names a missing field at the object that lacks it", () => {
    expect(errorOf(tasks("  - id: a", "    deps: []"))).toBe("reins.plan.yaml:4: tasks[0].title: required");
    expect(errorOf(yaml("name: demo", "tasks: [{ id: a, title: A }]"))).toBe(
      "reins.plan.yaml:1: version: required",
    );
  });

  it("names a wrong value and what is allowed", () => {
    expect(errorOf(yaml("version: 2", "name: demo", "tasks: [{ id: a, title: A }]"))).toBe(
      "reins.plan.yaml:1: version: got 2; expected 1",
    );
    expect(
      errorOf(yaml(...HEAD, "checks:", "  e2e: { command: x, tier: quick }", "tasks: [{ id: a, title: A }]")),
    ).toBe('reins.plan.yaml:4: checks.e2e.tier: got "quick"; expected one of "fast", "medium", "slow"');
    expect(errorOf(tasks("  - id: a", "    title: A", "    type: coding"))).toBe(
      'reins.plan.yaml:6: tasks[0].type: got "coding"; expected one of "planning", "implement", "review", "test", "deploy", "design", "docs", "config"',
    );
    expect(errorOf(tasks("  - id: a", "    title: A", "    priority: high"))).toBe(
      'reins.plan.yaml:6: tasks[0].priority: expected a number, got "high"',
    );
    expect(errorOf(tasks("  - id: a", "    title: A", "    priority: 1.5"))).toBe(
      "reins.plan.yaml:6: tasks[0].priority: expected an integer, got 1.5",
    );
    expect(errorOf(tasks("  - id: a", "    title: A", "    acceptance: { text: x }"))).toBe(
      "reins.plan.yaml:6: tasks[0].acceptance: got a map; expected a text or a list of texts",
    );
    expect(errorOf(tasks("  - id: a", "    title: '   '"))).toBe(
      'reins.plan.yaml:5: tasks[0].title: got "   "; must not be empty',
    );
    expect(errorOf(yaml(...HEAD, "settings: { wip: 0 }", "tasks: [{ id: a, title: A }]"))).toBe(
      "reins.plan.yaml:3: settings.wip: got 0; must be at least 1",
    );
    expect(errorOf(yaml(...HEAD, "tasks: []"))).toBe("reins.plan.yaml:3: tasks: must not be empty");
  });

  it("names a bad id, a bad check name and a bad duration", () => {
    expect(errorOf(tasks("  - id: 'login flow'", "    title: A"))).toBe(
      `reins.plan.yaml:4: tasks[0].id: got "login flow"; must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit`,
    );
    expect(errorOf(tasks(`  - id: ${"x".repeat(65)}`, "    title: A"))).toContain(
      "reins.plan.yaml:4: tasks[0].id: got",
    );
    expect(
      errorOf(
        yaml(
          ...HEAD,
          "checks:",
          "  'unit tests': { command: x, tier: fast }",
          "tasks: [{ id: a, title: A }]",
        ),
      ),
    ).toBe(
      `reins.plan.yaml:4: checks["unit tests"]: bad name "unit tests": must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit`,
    );
    expect(
      errorOf(
        yaml(
          ...HEAD,
          "checks:",
          "  e2e: { command: x, tier: slow, timeout: 10 minutes }",
          "tasks: [{ id: a, title: A }]",
        ),
      ),
    ).toBe(
      'reins.plan.yaml:4: checks.e2e.timeout: got "10 minutes"; expected a duration such as "30s", "10m" or "1h"',
    );
    expect(
      errorOf(
        yaml(...HEAD, "settings:", "  backoff: { baseMs: 1m, maxMs: 10s }", "tasks: [{ id: a, title: A }]"),
      ),
    ).toBe("reins.plan.yaml:4: settings.backoff.baseMs: 60000 is more than maxMs (10000)");
  });

  it("asks for exactly one of modules, tasks and import", () => {
    expect(errorOf(yaml(...HEAD))).toBe(
      "reins.plan.yaml:1: (top level): no work: give modules, tasks or import",
    );
    const both = yaml(
      ...HEAD,
      "modules:",
      "  - { id: m, title: M, components: [{ id: c, title: C, tasks: [{ id: a, title: A }] }] }",
      "tasks:",
      "  - { id: b, title: B }",
    );
    expect(errorOf(both)).toBe("reins.plan.yaml:5: tasks: give only one of modules, tasks and import");
  });

  it("reports every problem at once, in one line, the first in the file first", () => {
    expect(errorOf(tasks("  - id: a", "    title: 3", "  - id: b", "    bogus: 1"))).toBe(
      'reins.plan.yaml:5: tasks[0].title: expected a text, got 3; line 7: tasks[1].bogus: unknown field "bogus"',
    );
  });

  it("reports every problem of the graph at once: unknown deps and checks, duplicate ids", () => {
    expect(
      errorOf(
        tasks(
          "  - id: a",
          "    title: A",
          "    deps: [nope]",
          "  - id: a",
          "    title: again",
          "    checks: [lint]",
        ),
      ),
    ).toMatch(
      /^reins\.plan\.yaml:\d+: .*unknown id "nope"; line \d+: .*duplicate id "a".*; line \d+: .*unknown check "lint"/,
    );
  });

  it("gives a YAML syntax error one line with its line number", () => {
    expect(errorOf(yaml(...HEAD, "tasks:", "  - id: a", "    title: [unclosed", "  - id: b"))).toMatch(
      /^reins\.plan\.yaml:6: invalid YAML: /,
    );
    expect(errorOf(yaml(...HEAD, "tasks:", "  - id: a", "    title: A", "    title: B"))).toBe(
      'reins.plan.yaml:6: invalid YAML: duplicate key "title"',
    );
    expect(errorOf(yaml(...HEAD, "---", "name: other"))).toMatch(
      /^reins\.plan\.yaml:3: invalid YAML: Source contains multiple documents/,
    );
    expect(errorOf('{"version": 1, "name": "x",\n"tasks": [}', "reins.plan.json")).toMatch(
      /^reins\.plan\.json:2: invalid JSON: /,
    );
    expect(errorOf("")).toBe("reins.plan.yaml:1: (top level): the plan is empty");
    expect(errorOf("- a\n- b\n")).toBe("reins.plan.yaml:1: (top level): expected a map, got a list");
  });
});

describe("parsePlan: dependency cycles name the cycle", () => {
  /** Tasks t0..t(n-1) in a ring: each depends on the next, the last on the first. */
  function ring(n: number): string {
    const lines = [...HEAD, "tasks:"];
    for (let i = 0; i < n; i++)
      lines.push(`  - id: t${i}`, `    title: Task ${i}`, `    deps: [t${(i + 1) % n}]`);
    return yaml(...lines);
  }

  it("of length 1: a task depending on itself", () => {
    expect(errorOf(ring(1))).toBe('reins.plan.yaml:6: tasks[0].deps[0]: "t0" depends on itself');
  });

  it("of length 2, 3 and 4, from the first task in plan order, at its dep's line", () => {
    expect(errorOf(ring(2))).toBe("reins.plan.yaml:6: dependency cycle: t0 → t1 → t0");
    expect(errorOf(ring(3))).toBe("reins.plan.yaml:6: dependency cycle: t0 → t1 → t2 → t0");
    expect(errorOf(ring(4))).toBe("reins.plan.yaml:6: dependency cycle: t0 → t1 → t2 → t3 → t0");
  });

  it("starts at the earliest node of the cycle even when the search enters it elsewhere", () => {
    const text = yaml(
      ...HEAD,
      "tasks:",
      "  - { id: x, title: X, deps: [c] }",
      "  - { id: a, title: A, deps: [b] }",
      "  - { id: b, title: B, deps: [c] }",
      "  - { id: c, title: C, deps: [a] }",
    );
    expect(errorOf(text)).toBe("reins.plan.yaml:5: dependency cycle: a → b → c → a");
  });

  it("through the hierarchy: a group waits for everything inside it", () => {
    const text = yaml(
      ...HEAD,
      "modules:",
      "  - id: m",
      "    title: M",
      "    components:",
      "      - id: c1",
      "        title: C1",
      "        tasks:",
      "          - { id: a, title: A, deps: [c2] }",
      "      - id: c2",
      "        title: C2",
      "        deps: [c1]",
      "        tasks:",
      "          - { id: b, title: B }",
    );
    expect(errorOf(text)).toBe("reins.plan.yaml:10: dependency cycle: a → c2 → c1/a");
  });

  it("through a parent's deps, which hold for its subtasks (z needs y1, which is in y, and y needs z)", () => {
    const text = yaml(
      ...HEAD,
      "tasks:",
      "  - { id: z, title: Z, deps: [y1] }",
      "  - id: y",
      "    title: Y",
      "    deps: [z]",
      "    subtasks:",
      "      - { id: y1, title: Y1 }",
    );
    expect(errorOf(text)).toBe("reins.plan.yaml:4: dependency cycle: z → y/y1 → z");
  });

  it("finds a cycle of thousands of tasks without overflowing the stack", () => {
    expect(errorOf(ring(3000))).toBe(
      "reins.plan.yaml:6: dependency cycle: t0 → t1 → t2 → t3 → t4 → t5 → … 2990 more … → t2996 → t2997 → t2998 → t2999 → t0",
    );
  });

  it("accepts a long chain and a diamond", () => {
    const lines = [...HEAD, "tasks:"];
    for (let i = 0; i < 3000; i++)
      lines.push(`  - { id: t${i}, title: T${i}${i > 0 ? `, deps: [t${i - 1}]` : ""} }`);
    expect(parsePlan(yaml(...lines), FILE).nodes).toHaveLength(3000);
    const diamond = yaml(
      ...HEAD,
      "tasks:",
      "  - { id: a, title: A }",
      "  - { id: b, title: B, deps: [a] }",
      "  - { id: c, title: C, deps: [a] }",
      "  - { id: d, title: D, deps: [b, c] }",
    );
    expect(parsePlan(diamond, FILE).nodes.map((n) => n.deps)).toEqual([[], ["a"], ["a"], ["b", "c"]]);
  });
});

describe("parsePlan: hostile input", () => {
  it("rejects __proto__ keys by name and pollutes nothing", () => {
    const cases: [string, string][] = [
      [
        yaml(...HEAD, "__proto__: { polluted: true }", "tasks: [{ id: a, title: A }]"),
        'reins.plan.yaml:3: __proto__: the key "__proto__" is not allowed',
      ],
      [
        yaml(...HEAD, "tasks:", "  - id: a", "    title: A", "    __proto__: { polluted: true }"),
        'reins.plan.yaml:6: tasks[0].__proto__: the key "__proto__" is not allowed',
      ],
      [
        yaml(...HEAD, "checks:", "  __proto__: { command: x, tier: fast }", "tasks: [{ id: a, title: A }]"),
        'reins.plan.yaml:4: checks.__proto__: the key "__proto__" is not allowed',
      ],
      [
        yaml(
          ...HEAD,
          "settings:",
          "  retries: { __proto__: { checks: 99 } }",
          "tasks: [{ id: a, title: A }]",
        ),
        'reins.plan.yaml:4: settings.retries.__proto__: the key "__proto__" is not allowed',
      ],
      [
        '{"version": 1, "name": "x", "tasks": [{"id": "a", "title": "A", "__proto__": {"polluted": true}}]}',
        'reins.plan.json:1: tasks[0].__proto__: the key "__proto__" is not allowed',
      ],
      [
        '{"version": 1, "name": "x", "tasks": [{"id": "a", "title": "A", "constructor": {"prototype": {"polluted": true}}}]}',
        'reins.plan.json:1: tasks[0].constructor: unknown field "constructor"',
      ],
    ];
    for (const [text, message] of cases) expect(errorOf(text, message.split(":")[0])).toBe(message);
    expect(errorOf(yaml(...HEAD, "tasks: [{ id: __proto__, title: A }]"))).toContain(
      'tasks[0].id: got "__proto__"',
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty("polluted");
  });

  it("refuses a 10 MB plan without parsing it", () => {
    const big = yaml(...HEAD, "tasks:", `  - { id: a, title: "${"x".repeat(10 * 1024 * 1024)}" }`);
    expect(errorOf(big)).toBe("reins.plan.yaml: 10.0 MB is too large for a plan (at most 4 MB)");
  });

  it("refuses nesting too deep for the parser, and a deep value in a text field is only a wrong type", () => {
    expect(errorOf(yaml(...HEAD, `title: ${"[".repeat(100_000)}${"]".repeat(100_000)}`))).toBe(
      "reins.plan.yaml:3: nesting too deep",
    );
    expect(errorOf(yaml(...HEAD, `tasks: [{ id: a, title: ${"[".repeat(500)}${"]".repeat(500)} }]`))).toBe(
      "reins.plan.yaml:3: tasks[0].title: expected a text, got a list",
    );
  });

  it("refuses an alias bomb before it expands", () => {
    const bomb = yaml(
      ...HEAD,
      'a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]',
      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]",
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]",
      "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]",
      "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]",
      "tasks: [{ id: a, title: A, acceptance: *e }]",
    );
    expect(errorOf(bomb)).toMatch(/^reins\.plan\.yaml:1: too many aliases \(at most 64 expansions\)/);
  });

  it("reads a map of 50,000 keys, finding a repeated key without comparing every pair", () => {
    const keys = Array.from({ length: 50_000 }, (_, i) => `k${i}: v`);
    expect(errorOf(yaml(...HEAD, ...keys))).toBe('reins.plan.yaml:3: k0: unknown field "k0"');
    expect(errorOf(yaml(...HEAD, ...keys, "k7: again"))).toBe(
      'reins.plan.yaml:50003: invalid YAML: duplicate key "k7"',
    );
  });

  it("cuts a huge key short in the message", () => {
    expect(errorOf(yaml(...HEAD, `? ${"a".repeat(100_000)}`, ": 1"))).toBe(
      `reins.plan.yaml:3: ["${"a".repeat(57)}..."]: unknown field "${"a".repeat(57)}..."`,
    );
  });

  it("still allows a few aliases, say for shared acceptance criteria", () => {
    const plan = parsePlan(
      yaml(
        ...HEAD,
        "tasks:",
        "  - { id: a, title: A, acceptance: &done [tests pass, docs updated] }",
        "  - { id: b, title: B, acceptance: *done }",
      ),
      FILE,
    );
    expect(plan.nodes[1]!.acceptance).toEqual(["tests pass", "docs updated"]);
  });

  it("refuses YAML tags, which a plan has no use for", () => {
    expect(errorOf(yaml(...HEAD, "tasks: [{ id: a, title: !!js/function 'function () {}' }]"))).toBe(
      "reins.plan.yaml:3: invalid YAML: Unresolved tag: tag:yaml.org,2002:js/function",
    );
  });
});
