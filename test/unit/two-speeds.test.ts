/**
 * The unit project stays fast (docs/development.md, "Tests at two speeds"): its tests (every test colocated
 * in src/, and test/unit/) run in this process and start no agent CLI, no reins bin or daemon, no Redis and
 * no Chromium: the children they may start are git, a shell's small tools and Node on an inline script. And
 * every test reaches the helpers of test/support by their one name, `#test/...`, never by a climb.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { UNIT_TESTS } from "../../vitest.config.js";

const root = join(import.meta.dirname, "..", "..");
const support = join(root, "test", "support");

/** The helpers of test/support that start an agent CLI, reins' bin or daemon, Redis or Chromium. */
const SLOW_HELPERS = [
  "agent-loops",
  "browser",
  "claude-code",
  "codex-cli",
  "copilot-cli",
  "fault-daemon",
  "fault-redis",
  "fault-session",
  "fault-tmpfs",
  "gemini-cli",
  "hook-clients",
  "opencode-cli",
  "qwen-cli",
  "redis-cluster",
  "redis-server",
  "two-projects",
];

/** Helpers that also start reins' bin, through the exports named in BIN_STARTERS; the rest of each runs here. */
const MIXED_HELPERS = ["processes", "run-project"];

/** The helpers' exports that start reins' bin (`node bin/reins.js ...`) as a child. */
const BIN_STARTERS = /\b(reinsBin|runReins|runUntilMarked)\b/;

/** Packages a unit test does not import: a browser driver, the agent CLIs and the SDKs that start them. */
const SLOW_PACKAGES =
  /^(playwright-core|@anthropic-ai\/claude-(code|agent-sdk)|@openai\/codex|@google\/gemini-cli|@github\/copilot(-sdk)?|@qwen-code\/.*|opencode-ai|@kilocode\/.*)$/;

/** The commands a unit test may start: git, a shell's small tools, and Node on a script of its own. */
const CHILD_COMMANDS = new Set([
  '"git"',
  '"sh"',
  '"ln"',
  '"mkfifo"',
  '"mount"',
  '"umount"',
  "process.execPath",
]);

/** Every `.ts` file under `dir`, relative to the root. */
function files(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts") && !file.includes("node_modules"))
    .map((file) => join(dir, file));
}

/** What in `text` (a unit test, or a helper unit tests may import) breaks the unit project's rules. */
function slowParts(text: string): string[] {
  const found: string[] = [];
  const specifiers = [...text.matchAll(/(?:from\s+|import\(\s*)["']([^"']+)["']/g)].map((m) => m[1] ?? "");
  for (const specifier of specifiers) {
    const helper = /^#test\/([\w-]+)\.js$/.exec(specifier)?.[1];
    if (helper !== undefined && SLOW_HELPERS.includes(helper))
      found.push(`imports ${specifier}, which starts slow parts`);
    if (SLOW_PACKAGES.test(specifier)) found.push(`imports ${specifier}`);
  }
  const starter = BIN_STARTERS.exec(text);
  if (starter) found.push(`uses ${starter[1]}, which starts reins' bin`);
  for (const call of text.matchAll(
    /\b(?:spawn|spawnSync|execFile|execFileSync|execSync|fork|runBounded)\(\s*([^,)]+)/g,
  )) {
    const command = (call[1] ?? "").trim();
    if (!CHILD_COMMANDS.has(command)) found.push(`starts ${command}`);
    else if (
      command === "process.execPath" &&
      /REINS_BIN|reinsBin|reins\.js|dist\/cli/.test(text.slice(call.index, call.index + 300))
    )
      found.push("starts reins' bin with Node");
  }
  return found;
}

const isUnit = picomatch(UNIT_TESTS);
const tests = [...files("src"), ...files("test")].filter((file) => file.endsWith(".test.ts"));
const unitTests = tests.filter((file) => isUnit(file));

describe("the unit project", () => {
  it("holds every test colocated in src/ and those of test/unit/, and the integration project the rest", () => {
    expect(unitTests.filter((file) => file.startsWith("test/")).length).toBeGreaterThan(20);
    expect(unitTests.filter((file) => file.startsWith("src/"))).toEqual(
      tests.filter((f) => f.startsWith("src/")),
    );
    expect(unitTests).toContain("test/unit/two-speeds.test.ts");
    expect(unitTests).not.toContain("test/faults.test.ts");
  });

  it("starts no agent CLI, no reins bin or daemon, no Redis and no Chromium", () => {
    // This file aside: its samples below show what the rules catch.
    const slow = unitTests
      .filter((file) => file !== "test/unit/two-speeds.test.ts")
      .flatMap((file) => slowParts(readFileSync(join(root, file), "utf8")).map((part) => `${file} ${part}`));
    // A test that needs one of these belongs in test/ (the integration project), not in src/ or test/unit/.
    expect(slow).toEqual([]);
  });

  it("may import every helper of test/support but the slow ones, and those start nothing slow themselves", () => {
    const helpers = readdirSync(support).filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"));
    const names = helpers.map((file) => file.replace(/\.ts$/, ""));
    // The lists name real helpers, so a helper renamed does not slip out of them.
    for (const name of [...SLOW_HELPERS, ...MIXED_HELPERS]) expect(names).toContain(name);
    const slow = names
      .filter((name) => !SLOW_HELPERS.includes(name) && !MIXED_HELPERS.includes(name))
      .flatMap((name) => {
        // A helper's own imports of its neighbours, read as unit tests read them.
        const text = readFileSync(join(support, `${name}.ts`), "utf8").replace(
          /from "\.\/([\w-]+)\.js"/g,
          'from "#test/$1.js"',
        );
        return slowParts(text).map((part) => `test/support/${name}.ts ${part}`);
      });
    // A helper that starts something slow goes on SLOW_HELPERS (its tests then live in test/).
    expect(slow).toEqual([]);
  });

  it("finds what it looks for: a test that starts reins' bin or Redis is caught", () => {
    expect(slowParts('import { startRedis } from "#test/redis-server.js";')).toHaveLength(1);
    expect(slowParts('spawnSync(process.execPath, [reinsBin, "doctor"]);')).toHaveLength(2);
    expect(slowParts('execFileSync("redis-cli", ["ping"]);')).toEqual(['starts "redis-cli"']);
    expect(slowParts('import { chromium } from "playwright-core";')).toEqual(["imports playwright-core"]);
    expect(slowParts('execFileSync("git", ["init", "-q"], { cwd: dir });')).toEqual([]);
  });
});

describe("the helpers of test/support", () => {
  it("are imported by their one name, #test/<helper>.js, from src/ and test/ alike", () => {
    const climbs = [...files("src"), ...files("test")]
      .filter((file) => !file.startsWith("test/support/"))
      .filter((file) => /["'](\.\.?\/)+(test\/)?support\//.test(readFileSync(join(root, file), "utf8")));
    // package.json's "imports" maps #test/* to ./test/support/*: `import { x } from "#test/processes.js"`.
    expect(climbs).toEqual([]);
  });
});
