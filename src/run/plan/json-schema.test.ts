/** Tests that the published JSON Schema of reins.plan.yaml is current and describes the format as written. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { planJsonSchema, PLAN_SCHEMA_FILE } from "./json-schema.js";
import { loadPlan } from "./load-plan.js";

describe("the published JSON Schema of reins.plan.yaml", () => {
  it("is the committed file: regenerate it with `npm run schema` when this fails", () => {
    const committed: unknown = JSON.parse(readFileSync(PLAN_SCHEMA_FILE, "utf8"));
    expect(committed, `${PLAN_SCHEMA_FILE} is out of date: run \`npm run schema\``).toEqual(planJsonSchema());
  });

  it("describes the format as written: strict objects, durations as text or milliseconds, one source of work", () => {
    const schema = planJsonSchema() as {
      properties: Record<string, unknown>;
      required: string[];
      additionalProperties: boolean;
      oneOf: unknown[];
      $defs: Record<string, { properties: Record<string, unknown>; additionalProperties: boolean }>;
    };
    expect(Object.keys(schema.properties)).toEqual([
      "$schema",
      "version",
      "name",
      "checks",
      "settings",
      "modules",
      "tasks",
      "import",
    ]);
    expect(schema.required).toEqual(["version", "name"]);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.oneOf).toHaveLength(3);
    expect(Object.keys(schema.$defs).sort()).toEqual([
      "check",
      "component",
      "module",
      "settings",
      "subtask",
      "task",
    ]);
    for (const def of Object.values(schema.$defs)) expect(def.additionalProperties).toBe(false);
    expect(schema.$defs.check!.properties.timeout).toMatchObject({
      anyOf: [{ type: "integer" }, { type: "string" }],
    });
  });

  it("accepts the README's example plan, which names the schema in `$schema`", () => {
    const plan = loadPlan("test/fixtures/plans/reins.plan.yaml");
    expect(plan.nodes.length).toBeGreaterThan(5);
    expect(readFileSync("test/fixtures/plans/reins.plan.yaml", "utf8")).toContain(
      "# yaml-language-server: $schema=./node_modules/reins/schema/reins.plan.schema.json",
    );
  });
});
