/** The published JSON Schema of the native plan format, generated from its zod schema. */
import * as z from "zod";
import { planSchema } from "./plan-schema.js";

/** Where the published schema lives in the package, for `$schema` in a plan and for the test that keeps it current. */
export const PLAN_SCHEMA_FILE = "schema/reins.plan.schema.json";

/**
 * The JSON Schema (draft 2020-12) of the native plan format, generated from its zod schema as a plan is
 * written (durations as text or milliseconds), plus the rule that one of modules, tasks or import gives
 * the work. scripts/schemas.js writes it to schema/reins.plan.schema.json.
 */
export function planJsonSchema(): Record<string, unknown> {
  const { $schema, title, description, ...generated } = z.toJSONSchema(planSchema, {
    io: "input",
    target: "draft-2020-12",
  });
  return {
    $schema,
    title,
    description,
    ...generated,
    oneOf: [{ required: ["modules"] }, { required: ["tasks"] }, { required: ["import"] }],
  };
}
