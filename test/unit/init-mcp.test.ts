import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { run } from "../../src/cli/run.js";
import { binPath } from "../../src/cli/commands/bin-path.js";
import { codexMcpText } from "../../src/install/mcp-codex.js";
import { readToml } from "../../src/install/toml-lines.js";

/** `reins init <agent> --mcp`: reins' MCP server in each agent's own configuration, merged and removable. */

function project(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "reins-init-mcp-")));
  writeFileSync(join(dir, "reins.config.json"), "{}");
  mkdirSync(join(dir, "home"));
  return dir;
}

async function reins(dir: string, ...argv: string[]) {
  const io = memoryIo({
    cwd: dir,
    env: { HOME: join(dir, "home"), CODEX_HOME: join(dir, "home", ".codex") },
  });
  const code = await run(argv, io);
  return { code, out: io.out.join(""), err: io.err.join("") };
}

const json = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
const server = { command: process.execPath, args: [binPath(), "mcp"] };

/** Codex's entry: approved, a verify's time allowed, and required, so Codex waits for it. */
const codexEntry = {
  ...server,
  default_tools_approval_mode: "approve",
  tool_timeout_sec: 1800,
  startup_timeout_sec: 30,
  required: true,
};

describe("reins init <agent> --mcp", () => {
  it("claude: adds reins to .mcp.json with alwaysLoad, approves it, keeps the user's servers, and uninstalls exactly it", async () => {
    const dir = project();
    const mine = { command: "docs-server", args: ["--port", "1"] };
    writeFileSync(join(dir, ".mcp.json"), JSON.stringify({ mcpServers: { docs: mine } }));
    mkdirSync(join(dir, ".claude"));
    writeFileSync(
      join(dir, ".claude", "settings.local.json"),
      JSON.stringify({ enabledMcpjsonServers: ["docs"] }),
    );

    const added = await reins(dir, "init", "claude", "--mcp");
    expect(added.code).toBe(0);
    expect(added.out).toContain(`added the reins MCP server (reins mcp) to ${join(dir, ".mcp.json")}`);
    expect(json(join(dir, ".mcp.json"))).toEqual({
      mcpServers: { docs: mine, reins: { type: "stdio", ...server, alwaysLoad: true } },
    });
    expect(json(join(dir, ".claude", "settings.local.json"))).toEqual({
      enabledMcpjsonServers: ["docs", "reins"],
    });
    // Only the MCP server: no hooks were installed.
    expect(existsSync(join(dir, ".claude", "settings.json"))).toBe(false);

    const before = readFileSync(join(dir, ".mcp.json"), "utf8");
    const again = await reins(dir, "init", "claude", "--mcp");
    expect(again.out).toBe(`the reins MCP server is already in ${join(dir, ".mcp.json")}\n`);
    expect(readFileSync(join(dir, ".mcp.json"), "utf8")).toBe(before);

    const removed = await reins(dir, "init", "claude", "--mcp", "--uninstall");
    expect(removed.out).toContain(`removed the reins MCP server from ${join(dir, ".mcp.json")}`);
    expect(json(join(dir, ".mcp.json"))).toEqual({ mcpServers: { docs: mine } });
    expect(json(join(dir, ".claude", "settings.local.json"))).toEqual({ enabledMcpjsonServers: ["docs"] });
    expect((await reins(dir, "init", "claude", "--mcp", "--uninstall")).out).toBe(
      `no reins MCP server in ${join(dir, ".mcp.json")}\n`,
    );
  });

  it("claude: a project without MCP configuration gets one, and loses it whole on uninstall", async () => {
    const dir = project();
    await reins(dir, "init", "claude", "--mcp");
    expect(Object.keys(json(join(dir, ".mcp.json")).mcpServers as object)).toEqual(["reins"]);
    await reins(dir, "init", "claude", "--mcp", "--uninstall");
    expect(existsSync(join(dir, ".mcp.json"))).toBe(false);
    expect(existsSync(join(dir, ".claude", "settings.local.json"))).toBe(false);
    const user = await reins(dir, "init", "claude", "--mcp", "--user");
    expect(user.code).toBe(2);
    expect(user.err).toContain("claude mcp add --scope user reins");
  });

  it("codex: adds [mcp_servers.reins] with approval to .codex/config.toml, trusts the project, keeps every other line", async () => {
    const dir = project();
    mkdirSync(join(dir, ".codex"));
    const config = join(dir, ".codex", "config.toml");
    const mine = '# my settings\nmodel = "gpt-5"\n\n[mcp_servers.docs]\ncommand = "docs-server" # local\n';
    writeFileSync(config, mine);

    const added = await reins(dir, "init", "codex", "--mcp");
    expect(added.code, added.err).toBe(0);
    expect(added.out).toContain(`added the reins MCP server (reins mcp) to ${config}`);
    expect(added.out).toContain("trusted this project for Codex");
    const text = readFileSync(config, "utf8");
    expect(text.startsWith(mine)).toBe(true);
    expect(readToml(text)).toEqual({
      model: "gpt-5",
      mcp_servers: {
        docs: { command: "docs-server" },
        reins: codexEntry,
      },
    });
    const trust = readToml(readFileSync(join(dir, "home", ".codex", "config.toml"), "utf8"));
    expect(trust).toEqual({ projects: { [dir]: { trust_level: "trusted" } } });

    const again = await reins(dir, "init", "codex", "--mcp");
    expect(again.out).toContain(`the reins MCP server is already in ${config}`);
    expect(again.out).toContain("Codex already trusts this project");
    expect(readFileSync(config, "utf8")).toBe(text);

    const removed = await reins(dir, "init", "codex", "--mcp", "--uninstall");
    expect(removed.out).toBe(`removed the reins MCP server from ${config}\n`);
    expect(readFileSync(config, "utf8")).toBe(mine);
    expect((await reins(dir, "init", "codex", "--mcp", "--uninstall")).out).toBe(
      `no reins MCP server in ${config}\n`,
    );
  });

  it("codex --user: the server goes into $CODEX_HOME/config.toml, with no project trust", async () => {
    const dir = project();
    const out = await reins(dir, "init", "codex", "--mcp", "--user");
    const config = join(dir, "home", ".codex", "config.toml");
    expect(out.out).toBe(`added the reins MCP server (reins mcp) to ${config}\n`);
    expect(readToml(readFileSync(config, "utf8"))).toEqual({
      mcp_servers: {
        reins: codexEntry,
      },
    });
    await reins(dir, "init", "codex", "--mcp", "--user", "--uninstall");
    expect(existsSync(config)).toBe(false);
  });

  it("codex: a reins server written in a form reins does not edit by lines is left alone, with what to do", () => {
    const inline = '[mcp_servers]\nreins = { command = "old" }\n';
    expect(codexMcpText(inline, { command: "node", args: ["reins.js", "mcp"] })).toEqual({
      conflict: "[mcp_servers.reins] is written in a form reins does not edit by lines",
    });
    // An older install (another path) is replaced in place.
    const old = '[mcp_servers.reins]\ncommand = "old"\nargs = ["mcp"]\n\n[other]\nx = "1"\n';
    const next = codexMcpText(old, { command: "node", args: ["reins.js", "mcp"] });
    expect("text" in next && readToml(next.text)).toEqual({
      other: { x: "1" },
      mcp_servers: { reins: { command: "node", args: ["reins.js", "mcp"] } },
    });
  });

  it("gemini: adds mcpServers.reins to .gemini/settings.json, trusts the folder, keeps the user's settings", async () => {
    const dir = project();
    mkdirSync(join(dir, ".gemini"));
    const settings = join(dir, ".gemini", "settings.json");
    writeFileSync(
      settings,
      JSON.stringify({ ui: { theme: "dark" }, mcpServers: { docs: { command: "docs" } } }),
    );

    const added = await reins(dir, "init", "gemini", "--mcp");
    expect(added.code, added.err).toBe(0);
    expect(json(settings)).toEqual({
      ui: { theme: "dark" },
      mcpServers: { docs: { command: "docs" }, reins: { ...server, trust: true, timeout: 1_800_000 } },
    });
    expect(json(join(dir, "home", ".gemini", "trustedFolders.json"))).toEqual({ [dir]: "TRUST_FOLDER" });
    const text = readFileSync(settings, "utf8");
    expect((await reins(dir, "init", "gemini", "--mcp")).out).toContain("the reins MCP server is already in");
    expect(readFileSync(settings, "utf8")).toBe(text);

    await reins(dir, "init", "gemini", "--mcp", "--uninstall");
    expect(json(settings)).toEqual({ ui: { theme: "dark" }, mcpServers: { docs: { command: "docs" } } });
    // The folder's trust stays: reins' hooks may need it (`reins init gemini --uninstall` removes it).
    expect(json(join(dir, "home", ".gemini", "trustedFolders.json"))).toEqual({ [dir]: "TRUST_FOLDER" });
  });

  it("refuses --mcp with hook-only flags and unknown agents", async () => {
    const dir = project();
    expect((await reins(dir, "init", "claude", "--mcp", "--http")).err).toContain(
      "--http, --port and --in-process are for hooks, not --mcp",
    );
    const unknown = await reins(dir, "init", "cursor", "--mcp");
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('reins init --mcp knows claude, codex, gemini, not "cursor"');
  });
});
