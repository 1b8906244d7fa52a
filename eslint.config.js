import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "artifacts/", ".reins/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: {
        projectService: { allowDefaultProject: ["*.js", "bin/*.js", "bench/*.js"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true }],
    },
  },
  {
    // HTTP tests read JSON answers as loosely typed values; the code under test stays strict.
    files: ["test/**/api*.test.ts", "test/support/api-server.ts"],
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
    },
  },
  {
    // The pure cores (guard engine, run control) and the plain-text helpers below everything: no Node
    // built-ins, no I/O libraries, no clock, no randomness (docs/architecture.md, "The pure cores and the
    // shell").
    files: ["src/base/core/**/*.ts", "src/run/control/**/*.ts", "src/base/text/**/*.ts"],
    ignores: ["src/base/core/**/*.test.ts", "src/run/control/**/*.test.ts", "src/base/text/**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["node:*"], message: "The core is pure: no Node built-ins." },
            {
              group: [
                "fs",
                "fs/*",
                "path",
                "os",
                "child_process",
                "net",
                "http",
                "https",
                "crypto",
                "process",
                "worker_threads",
              ],
              message: "The core is pure: no I/O.",
            },
            {
              group: [
                "better-sqlite3",
                "ioredis",
                "fastify",
                "pino",
                "prom-client",
                "commander",
                "picocolors",
                "undici",
              ],
              message: "The core is pure: I/O libraries belong to the shell.",
            },
          ],
        },
      ],
      "no-restricted-globals": [
        "error",
        { name: "process", message: "The core is pure: configuration comes in as arguments." },
        { name: "setTimeout", message: "The core never waits; time comes in on events." },
        { name: "setInterval", message: "The core never waits; time comes in on events." },
      ],
      "no-restricted-properties": [
        "error",
        { object: "Date", property: "now", message: "The core never reads the clock: use the event's `at`." },
        { object: "Math", property: "random", message: "The core is deterministic: no randomness." },
        { object: "performance", property: "now", message: "The core never reads the clock." },
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector: "NewExpression[callee.name='Date']",
          message: "The core never reads the clock: use the event's `at`.",
        },
      ],
    },
  },
  {
    // Spec sections, normalisation and snapshots are pure; only src/run/spec/read.ts reads files and hashes.
    files: ["src/run/spec/**/*.ts"],
    ignores: ["src/run/spec/read.ts", "src/run/spec/**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [{ group: ["node:*"], message: "Pure spec code: I/O belongs in src/run/spec/read.ts." }],
        },
      ],
    },
  },
  // Plain JavaScript (the bin shim, benchmarks, scripts) is not type-checked.
  { files: ["**/*.js", "**/*.mjs"], ...tseslint.configs.disableTypeChecked },
  {
    // The bin shim is CommonJS (bin/package.json), so hook commands start without the ES module loader.
    files: ["bin/*.js"],
    languageOptions: { sourceType: "commonjs" },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    files: ["**/*.test.ts", "test/**/*.ts", "bench/**"],
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
      "no-control-regex": "off",
    },
  },
);
