/** Tests of the hooks' policy cache: used while its sources are unchanged, rebuilt when any changes. */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadPolicy } from "./load-policy.js";
import { loadPolicyCached, loadPolicyChecked, policyCachePath } from "./policy-cache.js";

function project(config: object | null = {}): string {
  const root = mkdtempSync(join(tmpdir(), "reins-policy-cache-"));
  mkdirSync(join(root, ".git"));
  if (config !== null) writeFileSync(join(root, "reins.config.json"), JSON.stringify(config));
  return root;
}

/**
 * Rewrites the cached policy's duplicateThreshold, leaving its key: a call that returns 99 used the cache.
 * With `digest`, the entry's digest is made to match (as reins would have written it).
 */
function plant(root: string, digest = true): void {
  const path = policyCachePath(root);
  const entry = JSON.parse(readFileSync(path, "utf8")) as {
    key: string;
    digest: string;
    problems: string[];
    lastValid: unknown;
    policy: { circuit: { duplicateThreshold: number } };
  };
  entry.policy.circuit.duplicateThreshold = 99;
  if (digest)
    entry.digest = createHash("sha256")
      .update(entry.key)
      .update("\n")
      .update(JSON.stringify([entry.policy, entry.problems, entry.lastValid]))
      .digest("hex");
  writeFileSync(path, JSON.stringify(entry));
}

const threshold = (root: string, env: NodeJS.ProcessEnv = {}) =>
  loadPolicyCached({ cwd: root, env }).circuit.duplicateThreshold;

describe("loadPolicyCached", () => {
  it("gives what loadPolicy gives, from the policy file and REINS_ variables", () => {
    const root = project({ budget: { mode: "soft" }, circuit: { duplicateThreshold: 7 } });
    const env = { REINS_CHURN_HALT_AT: "9" };
    const expected = loadPolicy({ cwd: root, env }).policy;
    expect(loadPolicyCached({ cwd: root, env })).toStrictEqual(expected);
    expect(loadPolicyCached({ cwd: root, env })).toStrictEqual(expected);
  });

  it("validates once and serves the next calls from .reins/cache/policy.json", () => {
    const root = project();
    expect(threshold(root)).toBe(5);
    expect(existsSync(policyCachePath(root))).toBe(true);
    plant(root);
    expect(threshold(root)).toBe(99);
  });

  it("never trusts an entry edited after it was written: it validates the policy afresh", () => {
    const root = project();
    expect(threshold(root)).toBe(5);
    plant(root, false);
    expect(threshold(root)).toBe(5);
  });

  it("finds the project root from a folder inside it", () => {
    const root = project({ circuit: { duplicateThreshold: 7 } });
    mkdirSync(join(root, "src"));
    expect(threshold(join(root, "src"))).toBe(7);
    expect(existsSync(policyCachePath(root))).toBe(true);
  });

  it("revalidates when the policy file changes, even to the same size and mtime", () => {
    const root = project({ circuit: { duplicateThreshold: 7 } });
    const file = join(root, "reins.config.json");
    expect(threshold(root)).toBe(7);
    plant(root);
    const { atime, mtime } = statSync(file);
    writeFileSync(file, JSON.stringify({ circuit: { duplicateThreshold: 8 } }));
    utimesSync(file, atime, mtime);
    expect(threshold(root)).toBe(8);
  });

  it("revalidates when a REINS_ variable is set, changed or removed", () => {
    const root = project();
    expect(threshold(root)).toBe(5);
    plant(root);
    expect(threshold(root, { REINS_CIRCUIT_DUPLICATE_THRESHOLD: "6" })).toBe(6);
    plant(root);
    expect(threshold(root, { REINS_CIRCUIT_DUPLICATE_THRESHOLD: "7" })).toBe(7);
    plant(root);
    expect(threshold(root, { OTHER: "x" })).toBe(5);
  });

  it("revalidates when a policy file of higher precedence appears", () => {
    const root = project(null);
    mkdirSync(join(root, ".reins"));
    writeFileSync(
      join(root, ".reins", "config.json"),
      JSON.stringify({ circuit: { duplicateThreshold: 7 } }),
    );
    expect(threshold(root)).toBe(7);
    plant(root);
    writeFileSync(join(root, "reins.config.json"), JSON.stringify({ circuit: { duplicateThreshold: 8 } }));
    expect(threshold(root)).toBe(8);
  });

  it("never throws for an invalid policy: the defaults stand for the bad value, and its problem is cached", () => {
    const root = project({ circuit: { duplicateThreshold: 7 } });
    expect(threshold(root)).toBe(7);
    writeFileSync(
      join(root, "reins.config.json"),
      JSON.stringify({ circuit: { duplicateThreshold: 0, maxCallsPerTask: 9 } }),
    );
    for (let i = 0; i < 2; i++) {
      const checked = loadPolicyChecked({ cwd: root });
      expect(checked.policy.circuit).toMatchObject({ duplicateThreshold: 5, maxCallsPerTask: 9 });
      expect(checked.problems).toEqual([
        "reins.config.json:1:34: circuit.duplicateThreshold: got 0; Too small: expected number to be >=2; reins is guarding with the defaults for it",
      ]);
    }
    // The second answer came from the cache: planting a value there shows through.
    plant(root);
    expect(threshold(root)).toBe(99);
  });

  it("answers a policy file that no longer parses with the last valid one, and says so", () => {
    const root = project({ circuit: { duplicateThreshold: 7 } });
    expect(threshold(root)).toBe(7);
    // A file with a problem is not valid: the last valid one stays the one before it.
    writeFileSync(join(root, "reins.config.json"), JSON.stringify({ circuit: { duplicateThreshold: 1 } }));
    expect(threshold(root)).toBe(5);
    writeFileSync(join(root, "reins.config.json"), '{ "circuit": { "duplicateThreshold": 8 ');
    const checked = loadPolicyChecked({ cwd: root, env: { REINS_CHURN_HALT_AT: "9" } });
    expect(checked.policy.circuit.duplicateThreshold).toBe(7);
    // The variables still apply over the last valid file.
    expect(checked.policy.churn.haltAt).toBe(9);
    expect(checked.problems).toEqual([
      "reins.config.json:1:40: not valid JSON: a closing } expected; reins is guarding with the last valid reins.config.json for all of it",
    ]);
    // The CLI's loader (reins config, reins doctor) says and uses the same.
    expect(loadPolicy({ cwd: root, env: { REINS_CHURN_HALT_AT: "9" } })).toMatchObject({
      problems: checked.problems,
      policy: { circuit: { duplicateThreshold: 7 } },
    });
    // Without a cache, the defaults.
    rmSync(policyCachePath(root));
    expect(loadPolicyChecked({ cwd: root }).policy.circuit.duplicateThreshold).toBe(5);
    expect(loadPolicyChecked({ cwd: root }).problems[0]).toMatch(/defaults for all of it$/);
  });

  it("keeps the last valid file across a file that does not parse, and drops it for another file", () => {
    const root = project({ circuit: { duplicateThreshold: 7 } });
    expect(threshold(root)).toBe(7);
    writeFileSync(join(root, "reins.config.json"), "{ nope");
    expect(threshold(root)).toBe(7);
    writeFileSync(join(root, "reins.config.json"), "[1]");
    expect(threshold(root)).toBe(7);
    rmSync(join(root, "reins.config.json"));
    mkdirSync(join(root, ".reins"), { recursive: true });
    writeFileSync(join(root, ".reins", "config.json"), "{ nope");
    expect(threshold(root)).toBe(5);
  });

  it("ignores a damaged cache file and writes a good one", () => {
    const root = project({ circuit: { duplicateThreshold: 7 } });
    mkdirSync(join(root, ".reins", "cache"), { recursive: true });
    for (const damaged of ["{ half", "null", JSON.stringify({ key: "x", policy: {} })]) {
      writeFileSync(policyCachePath(root), damaged);
      expect(threshold(root)).toBe(7);
      expect(JSON.parse(readFileSync(policyCachePath(root), "utf8"))).toMatchObject({
        policy: { circuit: { duplicateThreshold: 7 } },
      });
    }
  });

  it("still answers when the cache cannot be written", () => {
    const root = project({ circuit: { duplicateThreshold: 7 } });
    writeFileSync(join(root, ".reins"), "a file where the folder would be");
    expect(threshold(root)).toBe(7);
  });
});

describe("the project's own check commands", () => {
  it("are suggested from the project's files, and follow them when they change", () => {
    const root = project();
    expect(loadPolicyCached({ cwd: root }).completion.commands).toEqual({});
    writeFileSync(join(root, "pyproject.toml"), "[tool.pytest.ini_options]\n");
    expect(loadPolicyCached({ cwd: root }).completion.commands).toMatchObject({ tests: "python -m pytest" });
    writeFileSync(
      join(root, "package.json"),
      JSON.stringify({ scripts: { test: "vitest run", lint: "eslint ." } }),
    );
    writeFileSync(join(root, "pnpm-lock.yaml"), "");
    expect(loadPolicyCached({ cwd: root }).completion.commands).toMatchObject({
      tests: "pnpm test",
      lint: "pnpm run lint",
    });
  });

  it("never override the commands the policy names", () => {
    const root = project({ completion: { commands: { tests: "make check" } } });
    writeFileSync(join(root, "go.mod"), "module x\n");
    const loaded = loadPolicy({ cwd: root });
    expect(loaded.policy.completion.commands).toMatchObject({ tests: "make check", lint: "go vet ./..." });
    expect(loaded.sources["completion.commands.lint"]).toBe("the project's files");
  });
});
