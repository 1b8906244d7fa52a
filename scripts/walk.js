#!/usr/bin/env node
// Prints a walk through src/ (the files a call crosses, in call order) with each file's floor and the turns back up.
//
//   node scripts/walk.js                    every walk of docs/walks.json
//   node scripts/walk.js run hook-daemon    the walks named
//   node scripts/walk.js a.ts b.ts c.ts     a chain of files, each called by the one before
//
// A walk in docs/walks.json is a list of steps, one file each, indented two spaces per call depth: a step is
// called by the nearest step above it with one indent less; what follows the file on its line is a note.
// A turn back up is a call from a file on a lower floor to a file on a higher one (scripts/floors.json, the
// table test/unit/house.test.ts checks the imports against). Paths are relative to src/.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const table = JSON.parse(readFileSync(join(root, "scripts", "floors.json"), "utf8"));

const wings = table.wings ?? {};

/**
 * The floor of each unit, 1 the highest: an entry of src/, or inside a wing (`guard/hooks`) an entry of the
 * wing's folder, whose floors stand in for the wing's own.
 */
const floorOfUnit = new Map(
  table.floors
    .flatMap((floor) =>
      floor.units.length === 1 && floor.units[0] in wings
        ? wings[floor.units[0]].floors.map((f) => f.units.map((u) => `${floor.units[0]}/${u}`))
        : [floor.units],
    )
    .flatMap((units, i) => units.map((unit) => [unit, i + 1])),
);

/** The unit a path under src/ belongs to: its first folder (or file); inside a wing, the wing's entry too. */
export function unitOf(file) {
  const [top, inner] = file.replace(/^(\.\/)?src\//, "").split("/");
  return top in wings && inner !== undefined ? `${top}/${inner}` : top;
}

/** The floor of a path under src/ (1 the highest), or undefined for a file no floor holds. */
export function floorOf(file) {
  return floorOfUnit.get(unitOf(file));
}

/** Reads a walk's steps ("  file  note") into { depth, file, note, caller, floor }. */
export function parseSteps(lines) {
  const steps = [];
  for (const line of lines) {
    const depth = Math.floor((line.length - line.trimStart().length) / 2);
    const [file, ...note] = line.trim().split(/\s+/);
    let caller;
    for (let i = steps.length - 1; i >= 0; i--)
      if (steps[i].depth < depth) {
        caller = steps[i];
        break;
      }
    steps.push({ depth, file, note: note.join(" "), caller, floor: floorOf(file) });
  }
  return steps;
}

/** The figures of a walk: its steps with floors, the files it crosses, and the turns back up. */
export function measure(lines) {
  const steps = parseSteps(lines);
  const up = [];
  for (const step of steps) {
    const from = step.caller;
    if (from === undefined || from.floor === undefined || step.floor === undefined) continue;
    if (step.floor < from.floor) up.push({ from: from.file, to: step.file, step });
  }
  const unknown = steps.filter((s) => s.floor === undefined).map((s) => s.file);
  return { steps, files: new Set(steps.map((s) => s.file)).size, calls: steps.length - 1, up, unknown };
}

function print(name, title, lines) {
  const { steps, files, calls, up, unknown } = measure(lines);
  console.log(`${name}: ${title}`);
  for (const step of steps) {
    const turn = up.find((u) => u.step === step);
    const mark = turn !== undefined ? `  ^ back up: floor ${step.caller.floor} -> ${step.floor}` : "";
    const floor = step.floor === undefined ? " ?" : String(step.floor).padStart(2);
    console.log(
      `  ${floor}  ${"  ".repeat(step.depth)}${step.file}${step.note ? `  (${step.note})` : ""}${mark}`,
    );
  }
  console.log(`  ${steps.length} steps, ${files} files, ${up.length} turn(s) back up`);
  for (const u of up) console.log(`    ${u.from} -> ${u.to}`);
  if (unknown.length > 0) console.log(`  not on any floor: ${[...new Set(unknown)].join(", ")}`);
  console.log("");
  return { files, calls, up: up.length, unknown: unknown.length };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (args.length > 0 && args.every((a) => a.endsWith(".ts"))) {
    print(
      "chain",
      "each file called by the one before",
      args.map((file, i) => `${"  ".repeat(i)}${file}`),
    );
  } else {
    const walks = JSON.parse(readFileSync(join(root, "docs", "walks.json"), "utf8")).walks;
    const names = args.length > 0 ? args : Object.keys(walks);
    for (const name of names) {
      const walk = walks[name];
      if (walk === undefined) {
        console.error(`walk.js: no walk "${name}" in docs/walks.json (${Object.keys(walks).join(", ")})`);
        process.exitCode = 2;
        continue;
      }
      const figures = print(name, walk.title, walk.steps);
      if (figures.unknown > 0) process.exitCode = 1;
    }
  }
}
