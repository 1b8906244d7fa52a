import { readFileSync } from "node:fs";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { describe, expect, it } from "vitest";
import { ReinsError } from "./errors.js";
import { defaultPolicy, resolvePolicy } from "./policy.js";
import { POLICY_SCHEMA_FILE, policyJsonSchema } from "./policy-json-schema.js";

const committed = JSON.parse(readFileSync(POLICY_SCHEMA_FILE, "utf8")) as Record<string, unknown>;
// The MCP SDK's Ajv (a dependency of reins) checks what an editor would: it ignores keywords it does not
// know, so the schema's keywords are held below to those its draft and 2020-12 share.
const validate = new AjvJsonSchemaValidator().getValidator(committed);

/** Keywords of draft-07 that mean the same in draft 2020-12 and that Ajv checks by default. */
const SHARED_KEYWORDS = new Set([
  ...["$schema", "title", "description", "default", "type", "enum", "const", "format", "pattern"],
  ...["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength"],
  ...["properties", "additionalProperties", "propertyNames", "required", "items", "minItems", "maxItems"],
  ...["anyOf", "oneOf", "allOf"],
]);

/** Every keyword used anywhere in a schema, walking into its subschemas. */
function keywords(schema: unknown, into = new Set<string>()): Set<string> {
  if (schema === null || typeof schema !== "object") return into;
  for (const [key, value] of Object.entries(schema)) {
    into.add(key);
    if (key === "properties") for (const sub of Object.values(value as object)) keywords(sub, into);
    else if (key === "anyOf" || key === "oneOf" || key === "allOf")
      for (const sub of value as unknown[]) keywords(sub, into);
    else if (key === "items" || key === "additionalProperties" || key === "propertyNames")
      keywords(value, into);
  }
  return into;
}

/** The pages whose ```json blocks are each an example reins.config.json (moved there from the README). */
const CONFIG_PAGES = ["docs/configuration.md", "docs/teams-and-redis.md", "docs/mcp.md"];

/** The ```json blocks of those pages. */
function docsConfigs(): unknown[] {
  return CONFIG_PAGES.flatMap((page) =>
    [...readFileSync(page, "utf8").matchAll(/^```json\n([\s\S]*?)^```$/gm)].map(
      (m) => JSON.parse(m[1]!) as unknown,
    ),
  );
}

describe("the published JSON Schema of reins.config.json", () => {
  it("is the committed file: regenerate it with `npm run schema` when this fails", () => {
    expect(committed, `${POLICY_SCHEMA_FILE} is out of date: run \`npm run schema\``).toEqual(
      policyJsonSchema(),
    );
  });

  it("uses only keywords that draft-07 and 2020-12 validators read alike", () => {
    expect([...keywords(committed)].filter((k) => !SHARED_KEYWORDS.has(k))).toEqual([]);
  });

  it("accepts the default policy written out, an empty file, `$schema`, and the docs' example configs", () => {
    const examples = docsConfigs();
    expect(examples.length).toBeGreaterThanOrEqual(3);
    for (const config of [
      defaultPolicy,
      {},
      { $schema: "./node_modules/reins/schema/reins.config.schema.json" },
      ...examples,
    ]) {
      expect(validate(config), JSON.stringify(config)).toMatchObject({ valid: true });
      expect(() => resolvePolicy(config)).not.toThrow();
    }
  });

  it.each([
    [
      "a wrong type",
      { circuit: { duplicateThreshold: "5" } },
      "data/circuit/duplicateThreshold must be integer",
    ],
    ["a value outside its enum", { budget: { mode: "both" } }, "data/budget/mode must be equal to one of"],
    ["a misspelt field", { budgte: { mode: "soft" } }, "must NOT have additional properties"],
    ["a misspelt nested field", { loops: { tools: { Bash: { exmpt: true } } } }, "additional properties"],
    ["a number below its minimum", { circuit: { duplicateThreshold: 1 } }, "must be >= 2"],
    ["a negative limit", { budget: { session: { tokens: -1 } } }, "data/budget/session/tokens"],
    ["an endpoint that is no URL", { oracle: { url: "not a url" } }, 'must match format "uri"'],
    ["`$schema` that is no string", { $schema: 1 }, "data/$schema must be string"],
  ])("refuses %s, as reins does", (_what, config, message) => {
    const result = validate(config);
    expect(result.valid).toBe(false);
    expect(result.errorMessage).toContain(message);
    expect(() => resolvePolicy(config)).toThrow(ReinsError);
  });
});
