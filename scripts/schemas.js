// Writes the published JSON Schemas from the zod schemas reins validates with (through dist/, so run it after
// the TypeScript build: `npm run schema`): schema/reins.plan.schema.json from src/run/plan and
// schema/reins.config.schema.json from src/base/core/policy.ts. The committed files are checked against the
// source by src/run/plan/json-schema.test.ts and src/base/core/policy-json-schema.test.ts.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as prettier from "prettier";
import { POLICY_SCHEMA_FILE, policyJsonSchema } from "../dist/base/core/policy-json-schema.js";
import { PLAN_SCHEMA_FILE, planJsonSchema } from "../dist/run/plan/json-schema.js";

for (const [name, schema] of [
  [PLAN_SCHEMA_FILE, planJsonSchema()],
  [POLICY_SCHEMA_FILE, policyJsonSchema()],
]) {
  const file = join(import.meta.dirname, "..", name);
  const options = (await prettier.resolveConfig(file)) ?? {};
  await writeFile(file, await prettier.format(JSON.stringify(schema), { ...options, parser: "json" }));
  console.log(`wrote ${name}`);
}
