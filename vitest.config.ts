/**
 * The test suite in two projects (docs/development.md, "Tests at two speeds"): `unit`, the tests that run in
 * this process (every test colocated in src/, and test/unit/), and `integration`, the rest of test/ (real
 * agent CLIs, reins' bin, Redis, Chromium, the fault suite). `npm test` runs both; `npm run test:unit` the first.
 */
import { configDefaults, defineConfig } from "vitest/config";

/** The unit project's files: every test colocated in src/, and the tests of test/ in test/unit/. */
export const UNIT_TESTS = ["src/**/*.test.ts", "test/unit/**/*.test.ts"];

/**
 * What each project sets: an inline project inherits nothing of the root in Vitest 4, so the root's global
 * setup runs once per run, for both projects (inherited, it would run once more for each).
 */
const project = { testTimeout: 30_000 };

export default defineConfig({
  test: {
    reporters: ["default", "json"],
    outputFile: { json: "artifacts/test-results.json" },
    // A runtime and a state folder of the run's own, every hook daemon started in it stopped at the end.
    globalSetup: ["test/support/global-setup.ts"],
    projects: [
      { test: { ...project, name: "unit", include: UNIT_TESTS } },
      {
        test: {
          ...project,
          name: "integration",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...UNIT_TESTS],
        },
      },
    ],
  },
});
