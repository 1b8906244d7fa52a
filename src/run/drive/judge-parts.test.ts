import { describe, expect, it } from "vitest";
import { judgePartChange, withJudgePartOf } from "./judge-parts.js";

const pkg = (value: object) => `${JSON.stringify(value, null, 2)}\n`;

describe("the judge part of package.json", () => {
  it("names each script and test field that changed, with its lines as they were and as they are", () => {
    const before = pkg({ name: "a", scripts: { test: "node --test", build: "tsc" }, dependencies: {} });
    const after = pkg({ name: "a", scripts: { test: "exit 0", build: "tsc" }, dependencies: { x: "1" } });
    expect(judgePartChange("package.json", before, after)).toEqual({
      what: ["scripts.test"],
      lines: [
        '-  "scripts": {',
        '-    "test": "node --test",',
        '-    "build": "tsc"',
        "-  }",
        '+  "scripts": {',
        '+    "test": "exit 0",',
        '+    "build": "tsc"',
        "+  }",
      ],
    });
  });

  it("sees no judge change in a dependency added, and a whole-file change in a package.json that is not JSON", () => {
    const before = pkg({ scripts: { test: "t" }, dependencies: {} });
    expect(
      judgePartChange("pkg/package.json", before, pkg({ scripts: { test: "t" }, dependencies: { x: "1" } })),
    ).toBeNull();
    expect(judgePartChange("package.json", before, "{ not json")).toEqual({
      what: ["(not a JSON object)"],
      lines: [],
    });
  });

  it("puts the scripts back as they were and keeps the rest as the agent left it", () => {
    const before = pkg({ scripts: { test: "node --test" }, dependencies: {} });
    const after = pkg({ scripts: { test: "exit 0" }, jest: { bail: true }, dependencies: { x: "1" } });
    expect(JSON.parse(withJudgePartOf("package.json", before, after) ?? "")).toEqual({
      scripts: { test: "node --test" },
      dependencies: { x: "1" },
    });
    expect(withJudgePartOf("package.json", null, after)).toBeNull();
  });
});

describe("the judge part of pyproject.toml and setup.cfg", () => {
  const before = '[project]\nname = "calc"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n';

  it("names a test runner's section that changed, not the project's", () => {
    const after = before.replace('name = "calc"', 'name = "calc2"') + 'addopts = "-k smoke"\n';
    expect(judgePartChange("pyproject.toml", before, after)).toEqual({
      what: ["[tool.pytest.ini_options]"],
      lines: ['+addopts = "-k smoke"'],
    });
    expect(judgePartChange("pyproject.toml", before, before.replace("calc", "calc2"))).toBeNull();
    expect(
      judgePartChange(
        "setup.cfg",
        "[metadata]\nname = a\n",
        "[metadata]\nname = a\n[tool:pytest]\naddopts = -x\n",
      ),
    ).toMatchObject({
      what: ["[tool:pytest]"],
    });
  });

  it("puts the runner's sections back as they were, keeping the agent's other sections", () => {
    const after = '[project]\nname = "calc2"\n\n[tool.pytest.ini_options]\naddopts = "-k smoke"\n';
    const merged = withJudgePartOf("pyproject.toml", before, after) ?? "";
    expect(merged).toContain('name = "calc2"');
    expect(merged).toContain('testpaths = ["tests"]');
    expect(merged).not.toContain("smoke");
  });
});
