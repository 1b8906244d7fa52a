/** The loop's settings: their defaults, written out once, and the one function that validates a user's. */
import * as z from "zod";
import { invalidPolicy } from "../../base/core/invalid-policy.js";
import type { RunSettings } from "./types.js";

/**
 * The test files of the common ecosystems: test folders, `*.test.*` and `*.spec.*`, Go's `_test`, Python's
 * `test_*.py` and `conftest.py`, the JVM's and .NET's `*Test(s)`, RSpec's `_spec.rb`.
 */
export const DEFAULT_TEST_FILES: readonly string[] = [
  "**/test/**",
  "**/tests/**",
  "**/__tests__/**",
  "**/spec/**",
  "**/specs/**",
  "**/testdata/**",
  "**/*.test.*",
  "**/*.spec.*",
  "**/*_test.*",
  "**/test_*.py",
  "**/conftest.py",
  "**/*Test.java",
  "**/*Tests.java",
  "**/*Test.kt",
  "**/*Tests.cs",
  "**/*_spec.rb",
];

/** Every setting a user may leave out, filled in: see the `@default` of each field of `RunSettings`. */
export const DEFAULT_SETTINGS: RunSettings = {
  wip: 1,
  maxUnverifiedLines: 2000,
  maxAttempts: 5,
  retries: { checks: 4, agent: 2, transient: 3, conflict: 2 },
  backoff: { baseMs: 2000, maxMs: 60_000 },
  slowCheckRuns: 10,
  boundaries: [],
  maxIterations: 100,
  testFiles: [...DEFAULT_TEST_FILES],
  judges: [],
  witness: "change",
  hunkCap: 8,
  hunkRuns: 40,
};

/** Built on first use, like the policy schema: a process that never resolves settings pays nothing. */
function buildSchema() {
  const count = z.number().int().nonnegative();
  const positive = z.number().int().positive();
  const d = DEFAULT_SETTINGS;
  return z
    .object({
      wip: positive.default(d.wip),
      maxUnverifiedLines: positive.default(d.maxUnverifiedLines),
      maxAttempts: positive.default(d.maxAttempts),
      retries: z
        .object({
          checks: count.default(d.retries.checks),
          agent: count.default(d.retries.agent),
          transient: count.default(d.retries.transient),
          conflict: count.default(d.retries.conflict),
        })
        .strict()
        .prefault({}),
      backoff: z
        .object({ baseMs: count.default(d.backoff.baseMs), maxMs: count.default(d.backoff.maxMs) })
        .strict()
        .prefault({})
        .refine((b) => b.maxMs >= b.baseMs, { message: "maxMs must be at least baseMs", path: ["maxMs"] }),
      slowCheckRuns: count.default(d.slowCheckRuns),
      boundaries: z.array(z.string().min(1)).default(() => [...d.boundaries]),
      maxIterations: positive.default(d.maxIterations),
      testFiles: z.array(z.string().min(1)).default(() => [...d.testFiles]),
      judges: z.array(z.string().min(1)).default(() => [...d.judges]),
      witness: z.enum(["change", "hunks"]).default(d.witness),
      hunkCap: count.default(d.hunkCap),
      hunkRuns: count.default(d.hunkRuns),
    })
    .strict();
}

let schema: ReturnType<typeof buildSchema> | undefined;

/** Settings as a user writes them (a plan file's `settings:`): every field optional, at any depth. */
export type RunSettingsInput = z.input<ReturnType<typeof buildSchema>>;

/**
 * Validates settings and fills in every default. A bad value throws ReinsError("invalid_policy") whose
 * message names each bad field and the value given, e.g. `retries.checks: got -1; Too small: ...`.
 */
export function resolveSettings(partial: RunSettingsInput = {}, source = "run settings"): RunSettings {
  schema ??= buildSchema();
  // jitless: settings are parsed once per run, and compiling zod's fast path costs more than the parse.
  const parsed = schema.safeParse(partial, { reportInput: true, jitless: true });
  if (parsed.success) return parsed.data;
  throw invalidPolicy(source, parsed.error);
}
