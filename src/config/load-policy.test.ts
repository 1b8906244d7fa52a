/** reins.config.json as the loader reads it: a "$schema" key, and nothing else unknown. */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ReinsError } from "../core/errors.js";
import { resolvePolicy } from "../core/policy.js";
import { describePolicy, loadPolicy } from "./load-policy.js";

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

  it("still refuses any other unknown field", () => {
    const root = project(JSON.stringify({ $schema: "x", $comment: "typo'd" }));
    expect(() => loadPolicy({ cwd: root })).toThrow(ReinsError);
    expect(() => loadPolicy({ cwd: root })).toThrow(/\$comment/);
  });
});
