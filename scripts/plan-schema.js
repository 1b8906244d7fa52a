// Writes schema/reins.plan.schema.json, the published JSON Schema of reins.plan.yaml, from the zod schema
// in src/plan (through dist/, so run it after the TypeScript build: `npm run schema`). The committed file
// is checked against the source by src/plan/json-schema.test.ts.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as prettier from "prettier";
import { PLAN_SCHEMA_FILE, planJsonSchema } from "../dist/plan/json-schema.js";

const file = join(import.meta.dirname, "..", PLAN_SCHEMA_FILE);
const options = (await prettier.resolveConfig(file)) ?? {};
await writeFile(
  file,
  await prettier.format(JSON.stringify(planJsonSchema()), { ...options, parser: "json" }),
);
console.log(`wrote ${PLAN_SCHEMA_FILE}`);
