import { join } from "node:path";
import madge from "madge";
import { describe, expect, it } from "vitest";

/**
 * The house has no import circles: every module of `src/` (type imports included, as the compiler
 * resolves `./x.js` to `./x.ts`) can be read bottom-up. madge draws the graph.
 */

const root = join(import.meta.dirname, "..");

describe("the import graph of src/", () => {
  it("has no cycles, type imports included", { timeout: 60_000 }, async () => {
    const graph = await madge(join(root, "src"), {
      fileExtensions: ["ts"],
      tsConfig: join(root, "tsconfig.json"),
      excludeRegExp: [/\.test\.ts$/],
    });
    const files = Object.keys(graph.obj());
    // The graph is real: it holds the core and the stores, and the engine's own imports.
    expect(files.length).toBeGreaterThan(150);
    expect(graph.obj()["core/engine.ts"]).toContain("core/state.ts");
    expect(graph.circular()).toEqual([]);
  });
});
