// Writes the published JSON Schemas from the zod schemas reins validates with (through dist/, so run it after
// the TypeScript build: `npm run schema`): schema/reins.plan.schema.json from src/plan and
// schema/reins.config.schema.json from src/core/policy.ts. The committed files are checked against the
// source by src/plan/json-schema.test.ts and src/core/policy-json-schema.test.ts.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as prettier from "prettier";
import { POLICY_SCHEMA_FILE, policyJsonSchema } from "../dist/core/policy-json-schema.js";
import { PLAN_SCHEMA_FILE, planJsonSchema } from "../dist/plan/json-schema.js";

for (const [name, schema] of [
  [PLAN_SCHEMA_FILE, planJsonSchema()],
  [POLICY_SCHEMA_FILE, policyJsonSchema()],
]) {
  const file = join(import.meta.dirname, "..", name);
  const options = (await prettier.resolveConfig(file)) ?? {};
  await writeFile(file, await prettier.format(JSON.stringify(schema), { ...options, parser: "json" }));
  console.log(`wrote ${name}`);
}
