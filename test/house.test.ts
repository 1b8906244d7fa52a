import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import madge from "madge";
import { describe, expect, it } from "vitest";

/**
 * The house has no import circles: every module of `src/` (type imports included, as the compiler
 * resolves `./x.js` to `./x.ts`) can be read bottom-up. madge draws the graph.
 *
 * The house keeps its floors: every folder of `src/` (and every file at its top) stands on a floor of
 * scripts/floors.json, and a file imports only from its own folder or from a folder on a lower floor.
 * docs/architecture.md says what each floor holds.
 */

const root = join(import.meta.dirname, "..");

/** madge's graph of src/ without its tests, drawn once for every test here. */
let drawn: ReturnType<typeof madge> | undefined;
function madgeGraph(): ReturnType<typeof madge> {
  drawn ??= madge(join(root, "src"), {
    fileExtensions: ["ts"],
    tsConfig: join(root, "tsconfig.json"),
    excludeRegExp: [/\.test\.ts$/],
  });
  return drawn;
}

/** The import graph of src/, file → the files it imports, paths relative to src/. */
async function importGraph(): Promise<Record<string, string[]>> {
  // Tests' helpers in test/support reach madge's graph through the tests that import them: not src/'s.
  const files = Object.entries((await madgeGraph()).obj()).filter(([file]) => !file.startsWith("../"));
  return Object.fromEntries(files.map(([file, deps]) => [file, deps.filter((d) => !d.startsWith("../"))]));
}

describe("the import graph of src/", () => {
  it("has no cycles, type imports included", { timeout: 60_000 }, async () => {
    const graph = await madgeGraph();
    const files = Object.keys(graph.obj());
    // The graph is real: it holds the core and the stores, and the engine's own imports.
    expect(files.length).toBeGreaterThan(150);
    expect(graph.obj()["core/engine.ts"]).toContain("core/state.ts");
    expect(graph.circular()).toEqual([]);
  });
});

/** The floors, top to bottom: each a list of units (a folder under src/, or a file at its top). */
const FLOORS = (
  JSON.parse(readFileSync(join(root, "scripts", "floors.json"), "utf8")) as { floors: { units: string[] }[] }
).floors;

/** The unit a path under src/ belongs to: its first folder, or the file itself at the top of src/. */
function unitOf(file: string): string {
  const slash = file.indexOf("/");
  return slash === -1 ? file : file.slice(0, slash);
}

const floorOfUnit = new Map(FLOORS.flatMap((floor, i) => floor.units.map((unit) => [unit, i] as const)));

describe("the floors of src/ (scripts/floors.json)", () => {
  it("name every unit once", () => {
    const units = FLOORS.flatMap((floor) => floor.units);
    expect(units.length).toBe(new Set(units).size);
  });

  it("are each described in docs/architecture.md", () => {
    const doc = readFileSync(join(root, "docs", "architecture.md"), "utf8");
    const missing = FLOORS.flatMap((floor) => floor.units).filter((unit) => !doc.includes(`| \`${unit}\``));
    expect(missing, `units with no row in docs/architecture.md: ${missing.join(", ")}`).toEqual([]);
  });

  it("hold every file of src/", { timeout: 60_000 }, async () => {
    const graph = await importGraph();
    const homeless = Object.keys(graph).filter((file) => !floorOfUnit.has(unitOf(file)));
    expect(homeless, `files on no floor of scripts/floors.json: ${homeless.join(", ")}`).toEqual([]);
  });

  it(
    "are kept: no import from a lower floor to a higher one or across one floor",
    { timeout: 60_000 },
    async () => {
      const graph = await importGraph();
      const against: string[] = [];
      for (const [file, deps] of Object.entries(graph))
        for (const dep of deps) {
          const from = floorOfUnit.get(unitOf(file));
          const to = floorOfUnit.get(unitOf(dep));
          if (from === undefined || to === undefined || unitOf(file) === unitOf(dep)) continue;
          if (to <= from) against.push(`${file} -> ${dep}`);
        }
      expect(against, `imports against the floors: ${against.join(", ")}`).toEqual([]);
    },
  );
});

/** Every source file of src/ (tests aside), relative to src/. */
function sourceFiles(): string[] {
  return readdirSync(join(root, "src"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".test.ts"))
    .map((file) => file.split("\\").join("/"))
    .sort();
}

describe("every source file of src/", () => {
  it("opens with its line: a doc comment saying what the file is for", () => {
    const files = sourceFiles();
    expect(files.length).toBeGreaterThan(150);
    // A one-line `/** ... */`, or the first line of a longer `/**` block that describes the file.
    const opens = (first: string) => /^\/\*\*\s+\S.*\*\/$/.test(first) || first === "/**";
    const without = files.filter(
      (file) => !opens(readFileSync(join(root, "src", file), "utf8").split("\n")[0] ?? ""),
    );
    expect(without, `files without their opening line: ${without.join(", ")}`).toEqual([]);
  });
});
