/** Tests of the run settings: their defaults and validation. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ReinsError } from "../../base/core/errors.js";
import { DEFAULT_SETTINGS, DEFAULT_TEST_FILES, resolveSettings } from "./settings.js";
import type { RunSettings } from "./types.js";

describe("run settings", () => {
  it("fills in the documented defaults: the `@default` of each field of RunSettings", () => {
    const declared = /export interface RunSettings \{\n([\s\S]*?)\n\}/.exec(
      readFileSync(new URL("./types.ts", import.meta.url), "utf8"),
    )?.[1];
    // `@default { checks: 4 }` is JSON once its keys are quoted.
    const documented = [...(declared ?? "").matchAll(/@default (.+?)\n?\s*\*\/\n\s+(\w+):/g)].map(
      ([, value, field]) => [
        field,
        // A list too long for one line of a comment is named by its constant.
        value === "DEFAULT_TEST_FILES"
          ? DEFAULT_TEST_FILES
          : (JSON.parse(value!.replace(/(\w+):/g, '"$1":')) as unknown),
      ],
    );
    expect(documented.map(([field]) => field)).toEqual(Object.keys(DEFAULT_SETTINGS));
    expect(resolveSettings()).toEqual(Object.fromEntries(documented));
    expect(resolveSettings()).toEqual(DEFAULT_SETTINGS);
  });

  it("keeps a partial nested value's other defaults", () => {
    expect(resolveSettings({ wip: 3, retries: { agent: 0 } })).toMatchObject({
      wip: 3,
      retries: { checks: 4, agent: 0, transient: 3, conflict: 2 },
    });
  });

  it("takes a Partial<RunSettings>, as the plan loader gives it", () => {
    const partial: Partial<RunSettings> = { maxAttempts: 3, boundaries: ["src/api/**"] };
    expect(resolveSettings(partial)).toMatchObject({ maxAttempts: 3, boundaries: ["src/api/**"], wip: 1 });
  });

  it("gives each resolve its own boundaries list", () => {
    const a = resolveSettings();
    a.boundaries.push("src/api/**");
    expect(resolveSettings().boundaries).toEqual([]);
  });

  it("rejects bad values with a message naming each field and the value given", () => {
    let error: unknown;
    try {
      resolveSettings({ wip: 0, retries: { checks: -1 }, backoff: { baseMs: 5000, maxMs: 100 } });
    } catch (e) {
      error = e;
    }
    expect(ReinsError.is(error) && error.code).toBe("invalid_policy");
    const message = (error as Error).message;
    expect(message).toMatch(/^invalid run settings: /);
    expect(message).toContain("wip: got 0;");
    expect(message).toContain("retries.checks: got -1;");
    expect(message).toContain("backoff.maxMs: ");
    expect(message).toContain("maxMs must be at least baseMs");
  });

  it("rejects a field it does not know", () => {
    expect(() => resolveSettings({ wipp: 2 } as never)).toThrow(/wipp/);
  });
});
