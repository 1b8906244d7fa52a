/** The JSON Schema of reins.config.json, generated from the policy's zod schema. */
import * as z from "zod";
import { policySchema } from "./policy.js";

/** Where the published schema lives in the package, for `$schema` in reins.config.json and for its test. */
export const POLICY_SCHEMA_FILE = "schema/reins.config.schema.json";

/**
 * The JSON Schema (draft 2020-12) of reins.config.json as a person writes it (every field optional, defaults
 * shown), generated from the zod schema reins validates with. scripts/schemas.js writes it to
 * schema/reins.config.schema.json. Refinements zod cannot express (a regular expression that compiles,
 * `warnAt <= askAt <= pauseAt`) are checked only when reins loads the file.
 */
export function policyJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(policySchema, { io: "input", target: "draft-2020-12" });
}
