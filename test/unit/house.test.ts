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

const root = join(import.meta.dirname, "..", "..");

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
    expect(graph.obj()["base/core/engine.ts"]).toContain("base/core/state.ts");
    expect(graph.circular()).toEqual([]);
  });
});

/** A floor: its units (an entry of src/, or of a wing's folder) and what they hold. */
interface Floor {
  units: string[];
  why: string;
}

/** scripts/floors.json: the floors of src/, and each wing's own floors and the doors it enters by. */
const TABLE = JSON.parse(readFileSync(join(root, "scripts", "floors.json"), "utf8")) as {
  floors: Floor[];
  wings: Record<string, { floors: Floor[]; enters?: Record<string, string[]> }>;
};
const WINGS = TABLE.wings;

/**
 * The unit a path under src/ belongs to: its first folder (or the file itself at the top of src/); inside
 * a wing, the wing and the entry of the wing's folder (`guard/hooks`, `guard/governor.ts`).
 */
function unitOf(file: string): string {
  const [top = "", inner] = file.split("/");
  return top in WINGS && inner !== undefined ? `${top}/${inner}` : top;
}

/**
 * Every unit with its floor, top to bottom, a wing's floors standing in for the wing's: `run/drive` is
 * below every entry and above every unit of the guard wing.
 */
const FLOORS: string[][] = TABLE.floors.flatMap((floor) =>
  floor.units.length === 1 && floor.units[0]! in WINGS
    ? WINGS[floor.units[0]!]!.floors.map((f) => f.units.map((u) => `${floor.units[0]}/${u}`))
    : [floor.units],
);
const floorOfUnit = new Map(FLOORS.flatMap((units, i) => units.map((unit) => [unit, i] as const)));

/** The imports of src/ that leave their unit, as `file -> dep`, for the rules below. */
async function crossings(): Promise<[string, string][]> {
  const graph = await importGraph();
  return Object.entries(graph).flatMap(([file, deps]) =>
    deps.filter((dep) => unitOf(dep) !== unitOf(file)).map((dep) => [file, dep] as [string, string]),
  );
}

describe("the floors of src/ (scripts/floors.json)", () => {
  it("name every unit once, a wing alone on its floor", () => {
    const units = FLOORS.flat();
    expect(units.length).toBe(new Set(units).size);
    for (const floor of TABLE.floors)
      if (floor.units.some((u) => u in WINGS)) expect(floor.units, floor.why).toHaveLength(1);
  });

  it("leave at most 10 entries at the top of src/: the entries and the wings", () => {
    const top = readdirSync(join(root, "src"));
    expect(top.length).toBeLessThanOrEqual(10);
    expect(top.filter((entry) => !TABLE.floors.some((f) => f.units.includes(entry)))).toEqual(
      // the C hook client: compiled by `reins init`, imported by no module
      ["client"],
    );
  });

  it("are each described in docs/architecture.md", () => {
    const doc = readFileSync(join(root, "docs", "architecture.md"), "utf8");
    const missing = FLOORS.flat().filter((unit) => !doc.includes(`| \`${unit}\``));
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
      const against = (await crossings()).filter(([file, dep]) => {
        const from = floorOfUnit.get(unitOf(file));
        const to = floorOfUnit.get(unitOf(dep));
        return from !== undefined && to !== undefined && to <= from;
      });
      expect(
        against.map((e) => e.join(" -> ")),
        "imports against the floors",
      ).toEqual([]);
    },
  );

  it(
    "keep the wings apart: the guard wing never imports the run wing, which enters it only by its doors",
    { timeout: 60_000 },
    async () => {
      const edges = await crossings();
      const wing = (file: string) => file.split("/")[0]!;
      const guardToRun = edges.filter(([file, dep]) => wing(file) === "guard" && wing(dep) === "run");
      expect(guardToRun.map((e) => e.join(" -> "))).toEqual([]);
      const doors = (WINGS.run?.enters?.guard ?? []).map((door) => `guard/${door}`);
      const runToGuard = edges.filter(([file, dep]) => wing(file) === "run" && wing(dep) === "guard");
      // The rule is real: the run wing does enter the guard wing, by every door it names and no other.
      expect(new Set(runToGuard.map(([, dep]) => dep))).toEqual(new Set(doors));
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
