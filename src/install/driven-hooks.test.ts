/** Tests of the hooks and tools a run gives the agents it drives, without writing the user's or the project's files. */
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hookEventsOf } from "../guard/hooks/hook-events.js";
import { initAgent, isReinsHook, readSettings } from "./agent-hooks.js";
import { MCP_NAME } from "./mcp.js";
import { claudeRunArgs, geminiRunEnv } from "./driven-hooks.js";

const BIN = "/opt/reins/bin/reins.js";

let dir: string;
let root: string;
let userHome: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "reins-run-hooks-")));
  root = join(dir, "project");
  userHome = join(dir, "home");
  mkdirSync(root);
  mkdirSync(join(userHome, ".gemini", "tmp"), { recursive: true });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The user's Gemini folder: settings with a hook and an MCP server of their own, trust, chats. */
function userGemini(): void {
  const settings = {
    security: { auth: { selectedType: "gemini-api-key" } },
    mcpServers: { mine: { command: "my-server" } },
    hooks: { BeforeTool: [{ matcher: "*", hooks: [{ type: "command", command: "./audit.sh" }] }] },
  };
  writeFileSync(join(userHome, ".gemini", "settings.json"), JSON.stringify(settings));
  writeFileSync(join(userHome, ".gemini", "trustedFolders.json"), "{}");
}

/** Every file under `at` with its content (links not followed). */
function files(at: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(at, { recursive: true, withFileTypes: true }))
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name);
      out[path] = readFileSync(path, "utf8");
    }
  return out;
}

/** The events (sorted) for which the settings file at `path` has a reins hook, and how many it has in all. */
function reinsHooksOf(path: string, agent: string): { events: string[]; count: number } {
  const hooks = readSettings(path).hooks ?? {};
  const events = Object.keys(hooks)
    .filter((event) => (hooks[event] ?? []).some((g) => g.hooks.some((h) => isReinsHook(h, agent))))
    .sort();
  const count = Object.values(hooks)
    .flat()
    .flatMap((g) => g.hooks)
    .filter((h) => isReinsHook(h, agent)).length;
  return { events, count };
}

describe("geminiRunEnv", () => {
  it("gives the run's Gemini home the user's settings with reins' MCP server and hooks, the user's files untouched", () => {
    userGemini();
    const before = files(userHome);
    const { GEMINI_CLI_HOME: home = "" } = geminiRunEnv(root, BIN, undefined, userHome);

    expect(home).toBe(join(root, ".reins", "run-hooks", "gemini-home"));
    expect(files(userHome)).toEqual(before);
    const dot = join(home, ".gemini");
    expect(readdirSync(dot).sort()).toEqual(["settings.json", "tmp", "trustedFolders.json"]);
    for (const name of ["tmp", "trustedFolders.json"]) {
      expect(lstatSync(join(dot, name)).isSymbolicLink()).toBe(true);
      expect(readlinkSync(join(dot, name))).toBe(join(userHome, ".gemini", name));
    }

    const path = join(dot, "settings.json");
    const settings = readSettings(path) as { mcpServers?: Record<string, unknown>; security?: unknown };
    expect(settings.security).toEqual({ auth: { selectedType: "gemini-api-key" } });
    expect(Object.keys(settings.mcpServers ?? {})).toEqual(["mine", MCP_NAME]);
    expect(reinsHooksOf(path, "gemini")).toEqual({
      events: hookEventsOf("gemini").sort(),
      count: hookEventsOf("gemini").length,
    });
    // The user's own hook stays, ahead of reins'.
    expect(readSettings(path).hooks?.BeforeTool?.[0]?.hooks[0]?.command).toBe("./audit.sh");
  });

  it("is the same when made again, for the next run", () => {
    userGemini();
    const home = geminiRunEnv(root, BIN, undefined, userHome).GEMINI_CLI_HOME ?? "";
    const first = readFileSync(join(home, ".gemini", "settings.json"), "utf8");
    expect(geminiRunEnv(root, BIN, undefined, userHome)).toEqual({ GEMINI_CLI_HOME: home });
    expect(readFileSync(join(home, ".gemini", "settings.json"), "utf8")).toBe(first);
    expect(readdirSync(join(home, ".gemini")).sort()).toEqual([
      "settings.json",
      "tmp",
      "trustedFolders.json",
    ]);
  });

  it("adds no hooks when the project's own .gemini/settings.json runs reins': they apply as they are", () => {
    userGemini();
    initAgent("gemini", {
      settingsPath: join(root, ".gemini", "settings.json"),
      bin: BIN,
      mode: "in-process",
    });
    const project = readFileSync(join(root, ".gemini", "settings.json"), "utf8");
    const home = geminiRunEnv(root, BIN, undefined, userHome).GEMINI_CLI_HOME ?? "";
    const path = join(home, ".gemini", "settings.json");
    expect(reinsHooksOf(path, "gemini").count).toBe(0);
    expect(Object.keys(readSettings(path).mcpServers as object)).toContain(MCP_NAME);
    expect(readFileSync(join(root, ".gemini", "settings.json"), "utf8")).toBe(project);
  });

  it("keeps a single set of reins' hooks when the user installed them in their own settings", () => {
    initAgent("gemini", {
      settingsPath: join(userHome, ".gemini", "settings.json"),
      bin: BIN,
      mode: "client",
      daemon: "d-12345678",
    });
    const home = geminiRunEnv(root, BIN, undefined, userHome).GEMINI_CLI_HOME ?? "";
    expect(reinsHooksOf(join(home, ".gemini", "settings.json"), "gemini").count).toBe(
      hookEventsOf("gemini").length,
    );
  });
});

describe("claudeRunArgs", () => {
  it("hands Claude Code reins' hooks in a settings file of the run's, unless the project's own run them", () => {
    const args = claudeRunArgs(root, BIN);
    const settings = args[args.indexOf("--settings") + 1] ?? "";
    expect(settings).toBe(join(root, ".reins", "run-hooks", "claude-settings.json"));
    expect(reinsHooksOf(settings, "claude").count).toBe(hookEventsOf("claude").length);

    initAgent("claude", {
      settingsPath: join(root, ".claude", "settings.json"),
      bin: BIN,
      mode: "in-process",
    });
    expect(claudeRunArgs(root, BIN)).toEqual([
      "--mcp-config",
      join(root, ".reins", "run-hooks", "claude-mcp.json"),
    ]);
  });
});
