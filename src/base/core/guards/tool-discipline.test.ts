import { describe, expect, it } from "vitest";
import { replay } from "../engine.js";
import { pipeline } from "../pipeline.js";
import type { EventKind } from "../reins-event.js";
import type { GuardVerdict } from "../decision.js";
import { defaultPolicy, resolvePolicy, type Policy } from "../policy.js";
import { timeline, type Timeline } from "../timeline.js";
import { toolDiscipline } from "./tool-discipline.js";

const only = pipeline([toolDiscipline]);

/** The tool-discipline guard's result for every event of `kind`, in order, with no other guard in the way. */
function resultsOf(t: Timeline, kind: EventKind, policy: Policy = defaultPolicy): GuardVerdict[] {
  const decisions = replay(policy, t.events, only);
  return decisions.flatMap((d, i) => {
    if (kind !== t.events[i]?.kind) return [];
    const result = d.results.find((r) => r.guard === "tool-discipline");
    if (result === undefined) throw new Error(`no tool-discipline result for event ${i}`);
    return [result];
  });
}

const requests = (t: Timeline, policy?: Policy) => resultsOf(t, "tool.requested", policy);
const completions = (t: Timeline, policy?: Policy) => resultsOf(t, "tool.completed", policy);
const verdicts = (results: GuardVerdict[]) => results.map((r) => r.verdict);

/** Reads `path` `n` times. */
function reads(n: number, path = "src/config.ts", t = timeline("session:d")): Timeline {
  for (let i = 0; i < n; i++) t.read(path);
  return t;
}

/** `n` edits with no tests run, each a different change. */
function edits(n: number, t = timeline("session:d")): Timeline {
  for (let i = 0; i < n; i++) t.edit(`src/module-${i % 2}.ts`, `change ${t.events.length}`);
  return t;
}

const failing = { ok: false, output: "FAIL src/a.test.ts > adds: expected 3, got 4" };

describe("tool-discipline: reading the same unchanged file", () => {
  it("lets a file be read twice and warns at the third and later reads", () => {
    const results = requests(reads(4));
    expect(verdicts(results)).toEqual(["allow", "allow", "warn", "warn"]);
    expect(results[2]?.message).toBe(
      "You have read `src/config.ts` 3 times without it changing; use what you already read.",
    );
    expect(results[3]?.message).toContain("read `src/config.ts` 4 times");
  });

  it("starts counting again after the file is written", () => {
    const t = reads(2).edit("src/config.ts", "port: 8080");
    reads(3, "src/config.ts", t);
    expect(verdicts(requests(t))).toEqual(["allow", "allow", "allow", "allow", "allow", "warn"]);
  });

  it("keeps counting through writes to other files", () => {
    const t = reads(2).edit("src/server.ts", "listen()").read("src/config.ts");
    expect(requests(t).at(-1)?.verdict).toBe("warn");
  });

  it("counts each file on its own", () => {
    const t = reads(2, "src/a.ts");
    reads(2, "src/b.ts", t);
    expect(verdicts(requests(t))).not.toContain("warn");
  });

  it("follows the policy's number of reads", () => {
    const policy = resolvePolicy({ discipline: { repeatedReads: 5 } });
    expect(verdicts(requests(reads(5), policy))).toEqual(["allow", "allow", "allow", "allow", "warn"]);
  });
});

describe("tool-discipline: a command that keeps failing", () => {
  it("warns at the third failure in a row of a command whose errors differ", () => {
    const t = timeline("session:d");
    for (let i = 3; i > 0; i--) t.bash("npm test", { ok: false, output: `${i} failed` });
    const results = completions(t);
    expect(verdicts(results)).toEqual(["allow", "allow", "warn"]);
    expect(results[2]?.message).toBe(
      "`npm test` failed 3 times in a row. Stop retrying; read the error and change approach.",
    );
  });

  it("leaves the same error again and again to loop-patterns, so the model is told once", () => {
    const t = timeline("session:d").bash("npm test", failing).bash("npm test", failing);
    t.bash("npm test", failing);
    expect(verdicts(completions(t))).toEqual(["allow", "allow", "allow"]);
  });

  it("starts counting again after the command succeeds", () => {
    const t = timeline("session:d").bash("npm test", failing).bash("npm test", failing);
    t.bash("npm test").bash("npm test", failing).bash("npm test", failing);
    expect(verdicts(completions(t))).not.toContain("warn");
  });

  it("counts each command on its own", () => {
    const t = timeline("session:d").bash("npm test", failing).bash("npm run lint", failing);
    t.bash("npm test", failing).bash("npm run lint", failing);
    expect(verdicts(completions(t))).not.toContain("warn");
  });

  it("leaves failing tools that run no command to other guards", () => {
    const t = timeline("session:d");
    for (let i = 0; i < 4; i++) t.call("WebFetch", { url: "https://example.test" }, {}, { ok: false });
    expect(verdicts(completions(t))).not.toContain("warn");
  });

  it("follows the policy's number of failures", () => {
    const policy = resolvePolicy({ discipline: { repeatedCommandFailures: 2 } });
    const t = timeline("session:d").bash("make", failing).bash("make", failing);
    expect(verdicts(completions(t, policy))).toEqual(["allow", "warn"]);
  });
});

describe("tool-discipline: editing without running the tests", () => {
  it("lets four edits through quietly and warns at the fifth and later ones", () => {
    const results = requests(edits(6));
    expect(verdicts(results)).toEqual(["allow", "allow", "allow", "allow", "warn", "warn"]);
    expect(results[4]?.message).toBe(
      "This is edit 5 without running the tests. Run the project's tests before editing more.",
    );
    expect(results[5]?.message).toContain("This is edit 6 without running the tests.");
  });

  it("starts counting again after the tests run, whether they pass or fail", () => {
    const passed = edits(4).verify("tests", true);
    expect(verdicts(requests(edits(4, passed)))).not.toContain("warn");
    const failed = edits(4).verify("tests", false);
    expect(verdicts(requests(edits(4, failed)))).not.toContain("warn");
  });

  it("does not count another check as running the tests", () => {
    const t = edits(4).verify("lint", true);
    expect(requests(edits(1, t)).at(-1)?.verdict).toBe("warn");
  });

  it("names the command last seen running the tests", () => {
    const t = timeline("session:d").verify("tests", true, { command: "cargo test" });
    expect(requests(edits(5, t)).at(-1)?.message).toContain("Run `cargo test` before editing more.");
  });

  it("gives every piece of advice that applies to one call", () => {
    const t = edits(4).read("src/notes.md").read("src/notes.md");
    t.call(
      "Edit",
      { file_path: "src/notes.md", also: "reads" },
      { reads: ["src/notes.md"], writes: ["src/x.ts"] },
    );
    expect(requests(t).at(-1)?.message).toBe(
      "You have read `src/notes.md` 3 times without it changing; use what you already read. This is edit 5 without running the tests. Run the project's tests before editing more.",
    );
  });
});

describe("tool-discipline: never blocks", () => {
  it("only ever allows or warns, even for a session full of bad habits", () => {
    const t = reads(10);
    for (let i = 0; i < 10; i++) t.bash("npm test", failing);
    edits(20, t);
    const all = replay(defaultPolicy, t.events, only).map((d) => d.results[0]?.verdict);
    expect(new Set(all)).toEqual(new Set(["allow", "warn"]));
    expect(toolDiscipline.shortCircuit).toBe(false);
  });

  it("adds its advice to the full engine's decision as a warning", () => {
    const decision = replay(defaultPolicy, reads(3).events).at(-2); // the third read's request
    expect(decision?.verdict).toBe("warn");
    expect(decision?.instructions).toEqual([
      "You have read `src/config.ts` 3 times without it changing; use what you already read.",
    ]);
  });
});
