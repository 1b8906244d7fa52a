/** The CLI loads only the command it runs: every command has its row, and what each path loads is bounded. */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { COMMANDS, commandName, commandsFor, registerCommands } from "../src/cli/command-table.js";
import { memoryIo } from "../src/cli/io.js";
import { run } from "../src/cli/run.js";
import { REINS_BIN } from "../src/base/config/package-info.js";

describe("the command table", () => {
  it("has a row for every command the program registers, so none is loaded by the slow path", async () => {
    const root = new Command("reins");
    const io = memoryIo();
    const ctx = { io, loaded: () => ({}) as never, result: { code: 0 }, run: () => Promise.resolve(0) };
    await registerCommands(root, ctx, COMMANDS);
    const registered = root.commands.map((c) => c.name());
    expect(registered).toEqual(COMMANDS.flatMap((e) => [...e.names]));
  });

  it("lists in reins --help exactly the table's commands: none is registered past the table", async () => {
    const io = memoryIo({ cwd: "/project" });
    expect(await run(["--help"], io)).toBe(0);
    const listed = (io.out.join("").split("\nCommands:\n")[1] ?? "")
      .split("\n")
      .map((line) => /^ {2}(\S+)/.exec(line)?.[1])
      .filter((name): name is string => name !== undefined && name !== "help");
    expect(listed).toEqual(COMMANDS.flatMap((e) => [...e.names]));
  });

  it("finds the command after the program's own options and their values", () => {
    expect(commandName(["status"])).toBe("status");
    expect(commandName(["-C", "/p", "--store", "memory", "doctor", "--json"])).toBe("doctor");
    expect(commandName(["--cwd=/p", "--policy", "x.json", "circuit", "ack", "s"])).toBe("circuit");
    expect(commandName(["--version"])).toBeUndefined();
  });

  it("loads one row for a named command, none for --version alone, and all for help or an unknown name", () => {
    expect(commandsFor(["status"]).map((e) => e.names)).toEqual([["status"]]);
    expect(commandsFor(["evaluate", "x"]).map((e) => e.names)).toEqual([["replay", "evaluate"]]);
    expect(commandsFor(["--version"])).toEqual([]);
    expect(commandsFor(["--help"])).toBe(COMMANDS);
    expect(commandsFor([])).toBe(COMMANDS);
    expect(commandsFor(["statu"])).toBe(COMMANDS);
  });
});

/** The module URLs a `reins` process loads (ES modules, and CommonJS packages they import), from dist/. */
function loadedBy(args: string[], cwd: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), "reins-lazy-"));
  const out = join(dir, "loaded.txt");
  writeFileSync(
    join(dir, "hooks.mjs"),
    `import { appendFileSync } from "node:fs";\nexport async function load(url, context, next) { appendFileSync(${JSON.stringify(out)}, url + "\\n"); return next(url, context); }\n`,
  );
  writeFileSync(
    join(dir, "register.mjs"),
    `import { register } from "node:module";\nregister(${JSON.stringify(`file://${join(dir, "hooks.mjs")}`)});\n`,
  );
  writeFileSync(out, "");
  const ran = spawnSync(process.execPath, ["--import", join(dir, "register.mjs"), REINS_BIN, ...args], {
    cwd,
    env: { ...process.env, REINS_RUNTIME_DIR: dir, REINS_STATE_DIR: dir },
    encoding: "utf8",
  });
  expect(ran.status, ran.stderr).toBe(0);
  return readFileSync(out, "utf8").split("\n").filter(Boolean);
}

describe("what a command line loads (built dist/)", () => {
  const project = mkdtempSync(join(tmpdir(), "reins-lazy-project-"));
  writeFileSync(join(project, "reins.config.json"), "{}");

  it("reins --version loads no command module and not the policy's schema", () => {
    const loaded = loadedBy(["--version"], project);
    expect(loaded.some((u) => u.endsWith("/dist/cli/run.js"))).toBe(true);
    expect(loaded.filter((u) => u.includes("/dist/cli/commands/"))).toEqual([]);
    expect(loaded.filter((u) => u.includes("/node_modules/zod/"))).toEqual([]);
    expect(loaded.length).toBeLessThan(30);
  });

  // `reins status` as typed runs from the quick bundle (test/cli-quick.test.ts); with an option of the
  // program first it takes the module path, which must stay as lazy.
  it("reins -C <dir> status loads its own command and none of the server, the driver, MCP or the markdown parser", () => {
    const loaded = loadedBy(["-C", project, "status"], project);
    const commands = loaded.filter((u) => u.includes("/dist/cli/commands/")).map((u) => u.split("/").at(-1));
    expect(commands).toContain("status-command.js");
    expect(loaded.some((u) => u.endsWith("/dist/base/store/sqlite.js"))).toBe(true);
    expect(commands).not.toContain("run-command.js");
    for (const heavy of [
      "/fastify/",
      "/@modelcontextprotocol/",
      "/mdast-util-",
      "/dist/server/server.js",
      "/dist/run/drive/run.js",
    ])
      expect(
        loaded.filter((u) => u.includes(heavy)),
        heavy,
      ).toEqual([]);
  });
});
