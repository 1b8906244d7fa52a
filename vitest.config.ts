import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    reporters: ["default", "json"],
    outputFile: { json: "artifacts/test-results.json" },
    testTimeout: 30_000,
    globalSetup: ["test/support/global-setup.ts"],
  },
});
