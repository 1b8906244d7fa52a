/** reins.config.json as the loader reads it: a "$schema" key, and nothing else unknown. */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolvePolicy } from "../core/policy.js";
import { MAX_POLICY_BYTES, describePolicy, loadPolicy } from "./load-policy.js";
import { MAX_PROBLEMS_SAID } from "./policy-problems.js";

/** A project whose reins.config.json holds `text`. */
function project(text: string): string {
  const root = mkdtempSync(join(tmpdir(), "reins-config-"));
  mkdirSync(join(root, ".git"));
  writeFileSync(join(root, "reins.config.json"), text);
  return root;
}

describe("reins.config.json", () => {
  it('may name its JSON Schema in "$schema", which is no part of the policy', () => {
    const policy = { circuit: { duplicateThreshold: 4 } };
    const root = project(
      JSON.stringify({ $schema: "./node_modules/reins/schema/reins.config.schema.json", ...policy }),
    );
    const loaded = loadPolicy({ cwd: root });
    expect(loaded.file).toBe(join(root, "reins.config.json"));
    expect(loaded.policy.circuit.duplicateThreshold).toBe(4);
    expect(loaded.policy).not.toHaveProperty("$schema");
    expect(loaded.policy.circuit).toEqual(resolvePolicy(policy).circuit);
    expect(describePolicy(loaded).map(([field]) => field)).not.toContain("$schema");
    expect(Object.keys(loaded.sources)).not.toContain("$schema");
  });

  it("says any other unknown field, and guards with the rest", () => {
    const root = project(
      JSON.stringify({ $schema: "x", $comment: "typo'd", circuit: { duplicateThreshold: 4 } }),
    );
    const loaded = loadPolicy({ cwd: root });
    expect(loaded.policy.circuit.duplicateThreshold).toBe(4);
    expect(loaded.problems).toEqual([
      'reins.config.json:1:16: unknown key "$comment"; reins is guarding with the defaults for it',
    ]);
  });
});

describe("a bad reins.config.json", () => {
  it('says a misspelt key with its line, column and "did you mean", and keeps every valid part', () => {
    const root = project(
      '{\n  "budget": {\n    "sesion": { "tokens": 50000 },\n    "task": { "tokens": 7000 }\n  },\n  "circuit": { "duplicateThreshhold": 3 }\n}\n',
    );
    const loaded = loadPolicy({ cwd: root });
    expect(loaded.problems).toEqual([
      'reins.config.json:3:5: unknown key "sesion" in budget (did you mean "session"?); reins is guarding with the defaults for it',
      'reins.config.json:6:16: unknown key "duplicateThreshhold" in circuit (did you mean "duplicateThreshold"?); reins is guarding with the defaults for it',
    ]);
    expect(loaded.policy.budget.session.tokens).toBe(500_000);
    expect(loaded.policy.budget.task.tokens).toBe(7000);
    expect(loaded.sources["budget.task.tokens"]).toBe(join(root, "reins.config.json"));
    expect(loaded.sources["budget.session.tokens"]).toBe("default");
    expect(loaded.validText).toBeNull();
  });

  it("offers no key when none is close, and names the keys of a map's entries", () => {
    const root = project(JSON.stringify({ zzzzzz: 1, loops: { tools: { Bash: { exemt: true } } } }));
    expect(loadPolicy({ cwd: root }).problems).toEqual([
      'reins.config.json:1:39: unknown key "exemt" in loops.tools.Bash (did you mean "exempt"?); reins is guarding with the defaults for it',
      'reins.config.json:1:2: unknown key "zzzzzz"; reins is guarding with the defaults for it',
    ]);
  });

  it("says a bad value with the value given and what is allowed, pointing at the value", () => {
    const root = project('{\n  "budget": { "warnAt": "high", "mode": "soft" }\n}');
    const loaded = loadPolicy({ cwd: root });
    expect(loaded.problems).toEqual([
      'reins.config.json:2:25: budget.warnAt: got "high"; Invalid input: expected number, received string; reins is guarding with the defaults for it',
    ]);
    expect(loaded.policy.budget).toMatchObject({ warnAt: 0.8, mode: "soft" });
  });

  it("drops a section's own values when they break its rule, keeping its subsections", () => {
    const root = project(JSON.stringify({ budget: { warnAt: 0.95, session: { tokens: 9 } } }));
    const loaded = loadPolicy({ cwd: root });
    expect(loaded.policy.budget).toMatchObject({ warnAt: 0.8, askAt: 0.9, session: { tokens: 9 } });
    expect(loaded.problems).toEqual([
      "reins.config.json:1:21: budget.warnAt: got 0.95; budget must satisfy warnAt <= askAt <= pauseAt; reins is guarding with the defaults for it",
    ]);
  });

  it("drops a list with a bad element whole: its default stands", () => {
    const root = project(
      JSON.stringify({
        checks: [
          { pattern: "^make check$", name: "tests" },
          { pattern: "(", name: "x" },
        ],
      }),
    );
    const loaded = loadPolicy({ cwd: root });
    expect(loaded.policy.checks).toEqual(resolvePolicy({}).checks);
    expect(loaded.problems).toEqual([
      'reins.config.json:1:65: checks.1.pattern: got "("; must be a valid regular expression; reins is guarding with the defaults for it',
    ]);
  });

  it.each([
    [
      '{ "budget": { "mode": "soft", } }',
      "reins.config.json:1:31: not valid JSON: a key in double quotes expected (a trailing comma?)",
    ],
    [
      '{\n  "budget": {\n    "mode": "soft"\n    "warnAt": 0.5\n  }\n}',
      "reins.config.json:4:5: not valid JSON: a comma expected",
    ],
    ['{ "budget": ', "reins.config.json:1:13: not valid JSON: a value expected"],
    ["// comment\n{}", "reins.config.json:1:1: not valid JSON: a comment, which JSON does not allow"],
    ["", "reins.config.json:1:1: not valid JSON: a value expected"],
    ["[1, 2]", "reins.config.json:1:1: must hold a JSON object, not a list"],
    ['\n  "budget"', "reins.config.json:2:3: must hold a JSON object, not a string"],
    ["null", "reins.config.json:1:1: must hold a JSON object, not null"],
  ])("says where %j stops being a policy, and guards with the defaults", (text, said) => {
    const loaded = loadPolicy({ cwd: project(text) });
    expect(loaded.problems).toEqual([`${said}; reins is guarding with the defaults for all of it`]);
    expect(loaded.policy).toEqual(loadPolicy({ cwd: project("{}") }).policy);
  });

  it("reads a key named __proto__ as a key: said unknown, and no prototype is touched", () => {
    const root = project(
      '{ "__proto__": { "failClosed": true }, "budget": { "__proto__": { "mode": "soft" }, "warnAt": 0.5 }, "constructor": 1 }',
    );
    const loaded = loadPolicy({ cwd: root });
    expect(loaded.problems).toEqual([
      'reins.config.json:1:52: unknown key "__proto__" in budget; reins is guarding with the defaults for it',
      'reins.config.json:1:3: unknown key "__proto__"; reins is guarding with the defaults for it',
      'reins.config.json:1:102: unknown key "constructor"; reins is guarding with the defaults for it',
    ]);
    expect(loaded.policy.failClosed).toBe(false);
    expect(loaded.policy.budget).toMatchObject({ mode: "hard", warnAt: 0.5 });
    expect(Object.getPrototypeOf(loaded.policy)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).failClosed).toBeUndefined();
    expect(({} as Record<string, unknown>).mode).toBeUndefined();
  });

  it("does not read a huge file: it says its size and guards with the defaults", () => {
    const text = JSON.stringify({ circuit: { duplicateThreshold: 4 }, pad: "x".repeat(MAX_POLICY_BYTES) });
    const loaded = loadPolicy({ cwd: project(text) });
    expect(loaded.policy.circuit.duplicateThreshold).toBe(5);
    expect(loaded.problems).toEqual([
      `reins.config.json: ${text.length} bytes, over the ${MAX_POLICY_BYTES} a policy file may hold; reins is guarding with the defaults for all of it`,
    ]);
  });

  it("says a large file's thousands of unknown keys in a bounded number of lines", () => {
    const keys = Object.fromEntries(
      Array.from({ length: 20_000 }, (_, i) => [`k${i}`, { deep: [i, { x: i }] }]),
    );
    const root = project(JSON.stringify({ ...keys, circuit: { duplicateThreshold: 4 } }));
    const loaded = loadPolicy({ cwd: root });
    expect(loaded.policy.circuit.duplicateThreshold).toBe(4);
    expect(loaded.problems).toHaveLength(MAX_PROBLEMS_SAID + 1);
    expect(loaded.problems[0]).toBe(
      'reins.config.json:1:2: unknown key "k0"; reins is guarding with the defaults for it',
    );
    expect(loaded.problems.at(-1)).toBe(
      `and ${20_000 - MAX_PROBLEMS_SAID} more problem(s) like these; reins is guarding with the defaults for each`,
    );
  });

  it("drops a REINS_ variable with a bad value: the file's value, else the default, stands", () => {
    const root = project(JSON.stringify({ circuit: { duplicateThreshold: 4 } }));
    const loaded = loadPolicy({
      cwd: root,
      env: {
        REINS_CIRCUIT_DUPLICATE_THRESHOLD: "1",
        REINS_BUDGET_MODE: "sometimes",
        REINS_STORE: "",
        REINS_CHURN_HALT_AT: "9",
      },
    });
    expect(loaded.policy.circuit.duplicateThreshold).toBe(4);
    expect(loaded.policy.budget.mode).toBe("hard");
    expect(loaded.policy.churn.haltAt).toBe(9);
    expect(loaded.sources["circuit.duplicateThreshold"]).toBe(join(root, "reins.config.json"));
    expect(loaded.sources["churn.haltAt"]).toBe("env REINS_CHURN_HALT_AT");
    expect(loaded.problems).toEqual([
      "env REINS_STORE: store: Too small: expected string to have >=1 characters; reins is guarding with the defaults for it",
      'env REINS_BUDGET_MODE: budget.mode: got "sometimes"; Invalid option: expected one of "hard"|"soft"; reins is guarding with the defaults for it',
      "env REINS_CIRCUIT_DUPLICATE_THRESHOLD: circuit.duplicateThreshold: got 1; Too small: expected number to be >=2; reins is guarding with the value in reins.config.json for it",
    ]);
    // The file held no problem of its own: it is a valid file to fall back on.
    expect(loaded.validText).not.toBeNull();
  });

  it("never shows a store spec's value, which may carry a password", () => {
    const secret = `redis://user:hunter2@db:6379/${"x".repeat(3000)}`;
    const loaded = loadPolicy({ cwd: project("{}"), env: { REINS_STORE: secret } });
    expect(loaded.problems).toHaveLength(1);
    expect(loaded.problems[0]).not.toContain("hunter2");
    expect(loaded.policy.store).toBe("sqlite");
  });
});
