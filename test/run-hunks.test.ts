/**
 * The hunk tier of the witness: each hunk of a task's change set aside alone and its checks run again. A
 * hunk no check goes red without is reported (file, lines, the enclosing function); under the plan's
 * `settings: { witness: hunks }` it keeps the task from proven.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reinsIn, runProject } from "#test/run-project.js";

const filler = Array.from({ length: 10 }, (_, i) => `// note ${i + 1}`).join("\n");

/** `add` is broken; `mul` is right, and no test looks at it. */
const CALC = {
  "calc.js": `module.exports.add = (a, b) => a - b;\n${filler}\nfunction mul(a, b) {\n  return a * b;\n}\nmodule.exports.mul = mul;\n`,
  "calc.test.js":
    "const { add } = require('./calc');\nif (add(2, 3) !== 5) { console.error('add(2, 3) is ' + add(2, 3)); process.exit(1); }\n",
};

const plan = (settings = "") => `version: 1
name: hunks
${settings}checks:
  unit: { command: "node calc.test.js", tier: medium }
tasks:
  - id: fix
    title: Fix add
    checks: [unit]
`;

const FIX = "sed -i 's/a - b/a + b/' calc.js";
/** The fix, and an extra hunk in mul no check sees. */
const FIX_AND_EXTRA = `${FIX}; sed -i 's/return a \\* b;/return a * b + 0;/' calc.js`;

interface Report {
  status: string;
  tasks: {
    evidence: string;
    why: string;
    hunks: {
      total: number;
      unwitnessed: { file: string; lines: string; context: string }[];
      untried: number;
      ran: number;
    } | null;
  }[];
}

const runIdOf = (out: string) => /run (\S+):/.exec(out)?.[1] ?? "";
/** The outcome line: the last before the `next:` lines that say what a person does next. */
const lastLine = (out: string) =>
  out
    .trimEnd()
    .split("\n")
    .filter((line) => !line.startsWith("next: "))
    .at(-1) ?? "";

async function drive(files: Record<string, string>, script: string) {
  const { dir, agent } = runProject(files, script);
  const ran = await reinsIn(dir, ["run", "--agent", agent]);
  expect(ran.err).toBe("");
  const id = runIdOf(ran.out);
  const read = (name: string) => readFileSync(join(dir, ".reins", "runs", id, name), "utf8");
  return { dir, ran, report: JSON.parse(read("report.json")) as Report, md: read("report.md") };
}

const EXTRA = { file: "calc.js", lines: "13", context: "function mul(a, b) {" };

describe("the hunk tier of the witness", () => {
  it("by default proves a witnessed fix and reports the extra hunk no check sees, with its file, lines and function", async () => {
    const { ran, report, md } = await drive({ ...CALC, "reins.plan.yaml": plan() }, FIX_AND_EXTRA);
    expect(ran.code).toBe(0);
    expect(lastLine(ran.out)).toMatch(
      /^proven: .*\(1 witnessed.*\); 1 hunk\(s\) no check witnesses on its own \(see the report\)$/,
    );
    expect(report.tasks[0]).toMatchObject({
      evidence: "witnessed",
      hunks: { total: 2, unwitnessed: [EXTRA], untried: 0, ran: 2 },
    });
    expect(report.tasks[0]?.why).toMatch(/^proven: witnessed; 1 hunk\(s\) no check witnesses on its own/);
    expect(md).toContain("  - `calc.js` lines 13 (in `function mul(a, b) {`)");
  });

  it("under witness: hunks keeps the same task from proven, naming the hunk", async () => {
    const { ran, report } = await drive(
      { ...CALC, "reins.plan.yaml": plan("settings:\n  witness: hunks\n") },
      FIX_AND_EXTRA,
    );
    expect(ran.code).toBe(1);
    expect(report.status).toBe("unwitnessed");
    expect(lastLine(ran.out)).toBe(
      "unwitnessed: task fix: 1 of the 2 hunks of its change no check witnesses on its own (witness: hunks): calc.js:13 (function mul(a, b) {)",
    );
  });

  it("under witness: hunks proves an honest one-hunk fix, with no check run beyond the counterfactual", async () => {
    const { ran, report } = await drive(
      { ...CALC, "reins.plan.yaml": plan("settings:\n  witness: hunks\n") },
      FIX,
    );
    expect(ran.code).toBe(0);
    expect(lastLine(ran.out)).toMatch(/^proven: .*\(1 witnessed, 0 already done, 0 changing no behaviour\)$/);
    expect(report.tasks[0]?.hunks).toEqual({ total: 1, unwitnessed: [], untried: 0, ran: 0, allowed: 8 });
  });

  it("under witness: hunks with no hunk runs left in the budget counts the untried hunks against the proof", async () => {
    const { ran, report } = await drive(
      { ...CALC, "reins.plan.yaml": plan("settings:\n  witness: hunks\n  hunkRuns: 0\n") },
      FIX_AND_EXTRA,
    );
    expect(ran.code).toBe(1);
    expect(report.tasks[0]?.hunks).toMatchObject({ total: 2, untried: 2, ran: 0 });
    expect(lastLine(ran.out)).toMatch(/2 not tried \(the cap per task or the run's hunk budget\)$/);
  });
});
