/** `reins init` for each agent, and the agents' own trust of the project and its hooks. */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { run } from "../../src/cli/run.js";
import { REINS_BIN } from "../../src/base/config/package-info.js";
import { hookPort, httpHookToken } from "../../src/guard/daemon/http-port.js";
import { daemonName } from "../../src/guard/daemon/paths.js";
import { encodeHeaderValue } from "../../src/guard/daemon/protocol.js";
import { codexHookHash } from "../../src/install/trust.js";
import { readToml } from "../../src/install/toml-lines.js";

function project(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "reins-init-")));
  writeFileSync(join(dir, "reins.config.json"), "{}");
  return dir;
}

async function reins(dir: string, ...argv: string[]) {
  return reinsWith(dir, {}, ...argv);
}

async function reinsWith(dir: string, env: Record<string, string>, ...argv: string[]) {
  const io = memoryIo({ cwd: dir, env: { HOME: join(dir, "home"), ...env } });
  const code = await run(argv, io);
  return { code, out: io.out.join(""), err: io.err.join("") };
}

type Hooks = Record<
  string,
  { matcher?: string; hooks: { type: string; command?: string; timeout?: number }[] }[]
>;
const read = (path: string) =>
  JSON.parse(readFileSync(path, "utf8")) as { hooks: Hooks } & Record<string, unknown>;

describe("reins init", () => {
  const cases: [string, string[], string, string, string, number][] = [
    ["claude", ["--in-process"], ".claude/settings.local.json", "PreToolUse", 'reins.js" hook claude', 30],
    ["claude", [], ".claude/settings.local.json", "UserPromptSubmit", 'reins-hook" claude', 30],
    ["codex", [], ".codex/hooks.json", "PreToolUse", 'reins-hook" codex', 30],
    ["gemini", [], ".gemini/settings.json", "BeforeTool", 'reins-hook" gemini', 30_000],
  ];
  for (const [agent, flags, file, event, command, timeout] of cases) {
    it(`merges ${agent}'s hooks${flags.length > 0 ? ` (${flags.join(" ")})` : ""} into ${file}, idempotently, and uninstalls exactly them`, async () => {
      const dir = project();
      const path = join(dir, file);
      mkdirSync(join(path, ".."), { recursive: true });
      const mine = { type: "command", command: "echo mine" };
      writeFileSync(
        path,
        JSON.stringify({ theme: "dark", hooks: { [event]: [{ matcher: "Bash", hooks: [mine] }] } }),
      );

      expect((await reins(dir, "init", agent, ...flags)).out).toMatch(/added reins hooks for \d+ event\(s\)/);
      const installed = read(path);
      expect(installed.theme).toBe("dark");
      expect(installed.hooks[event]?.[0]?.hooks).toEqual([mine]);
      const ours = installed.hooks[event]?.[1]?.hooks[0];
      expect(ours?.command).toContain(command);
      expect(ours?.timeout).toBe(timeout);
      expect(installed.hooks.SessionStart?.[0]?.hooks[0]?.command).toBeDefined();

      expect((await reins(dir, "init", agent, ...flags)).out).toContain("reins hooks already in");
      expect(readFileSync(path, "utf8")).toBe(JSON.stringify(installed, null, 2) + "\n");

      expect((await reins(dir, "init", agent, "--uninstall")).out).toMatch(/removed \d+ reins hook\(s\)/);
      expect(read(path)).toEqual({ theme: "dark", hooks: { [event]: [{ matcher: "Bash", hooks: [mine] }] } });
    });
  }

  it("installs the client to the user's hook daemon for a turn's start, and http hooks to its port for tool calls", async () => {
    const dir = project();
    expect((await reins(dir, "init", "claude")).code).toBe(0);
    const path = join(dir, ".claude", "settings.local.json");
    const local = read(path);
    expect(readFileSync(join(dir, ".reins", ".gitignore"), "utf8")).toMatch(/^\*$/m);
    const secret = readFileSync(join(dir, ".reins", "hook-secret"), "utf8").trim();
    expect(secret.length).toBeGreaterThanOrEqual(32);
    const name = daemonName(REINS_BIN);
    for (const event of ["SessionStart", "UserPromptSubmit"]) {
      const command = local.hooks[event]?.[0]?.hooks[0]?.command ?? "";
      expect(command).toMatch(new RegExp(`reins-hook" claude ".*" ".*reins\\.js" ${name}$`));
      expect(command).not.toMatch(/7878|--port|REINS_PORT/);
    }
    const env = { HOME: join(dir, "home") };
    for (const event of [
      "PreToolUse",
      "PostToolUse",
      "PostToolUseFailure",
      "Stop",
      "SubagentStop",
      "SessionEnd",
    ]) {
      const entry = local.hooks[event]?.[0]?.hooks[0] as Record<string, unknown> | undefined;
      expect(entry?.type).toBe("http");
      expect(entry?.url).toBe(`http://127.0.0.1:${hookPort(env, name)}/hooks/claude`);
      // The project's token, never its hook secret: the secret stays in .reins/.
      expect(entry?.headers).toEqual({
        "X-Reins-Root": encodeHeaderValue(dir),
        Authorization: `Bearer ${httpHookToken(secret, dir)}`,
      });
    }
    expect(readFileSync(path, "utf8")).not.toContain(secret);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("installs Claude Code's native http hooks with --http, in settings.local.json with the project's secret", async () => {
    const dir = project();
    expect((await reins(dir, "init", "claude", "--http", "--port", "7999")).code).toBe(0);
    const local = read(join(dir, ".claude", "settings.local.json"));
    // It carries the project's secret: its owner's alone, and .reins/ is never staged by git.
    expect(statSync(join(dir, ".claude", "settings.local.json")).mode & 0o777).toBe(0o600);
    const secret = readFileSync(join(dir, ".reins", "hook-secret"), "utf8").trim();
    for (const event of [
      "PreToolUse",
      "PostToolUse",
      "PostToolUseFailure",
      "Stop",
      "SubagentStop",
      "SessionEnd",
    ]) {
      expect(local.hooks[event]?.[0]?.hooks[0]).toMatchObject({
        type: "http",
        url: "http://127.0.0.1:7999/hooks/claude",
        headers: { Authorization: `Bearer ${secret}` },
      });
    }
    // Session start and each prompt run a command that starts the project's server when it is down.
    for (const event of ["SessionStart", "UserPromptSubmit"])
      expect(local.hooks[event]?.[0]?.hooks[0]?.command).toMatch(
        /reins\.js" hook claude --ensure-daemon --port 7999$/,
      );
    // A port is only for --http: the client needs none.
    const port = await reins(dir, "init", "codex", "--port", "7999");
    expect(port.code).toBe(2);
    expect(port.err).toMatch(/--port is for --http/);
  });

  it("takes reins' hooks out of Claude Code's shared settings.json when installing them in settings.local.json", async () => {
    const dir = project();
    mkdirSync(join(dir, ".claude"));
    // What an older reins wrote: the in-process hooks in the shared file, beside a hook of the user's.
    const mine = { type: "command", command: "echo mine" };
    const older = `"${process.execPath}" "${REINS_BIN}" hook claude`;
    writeFileSync(
      join(dir, ".claude", "settings.json"),
      JSON.stringify({
        hooks: {
          PreToolUse: [
            { matcher: "*", hooks: [mine] },
            { matcher: "*", hooks: [{ type: "command", command: older }] },
          ],
        },
      }),
    );
    const moved = await reins(dir, "init", "claude");
    expect(moved.out).toMatch(
      /added reins hooks .*settings\.local\.json[^]*removed 1 reins hook\(s\) from .*settings\.json/,
    );
    expect(read(join(dir, ".claude", "settings.json")).hooks).toEqual({
      PreToolUse: [{ matcher: "*", hooks: [mine] }],
    });
    await reins(dir, "init", "claude", "--in-process");
    expect(
      read(join(dir, ".claude", "settings.local.json")).hooks.PreToolUse?.[0]?.hooks[0]?.command,
    ).toMatch(/reins\.js" hook claude$/);
    expect(read(join(dir, ".claude", "settings.local.json")).hooks.PreToolUse).toHaveLength(1);
  });

  it("refuses to touch a settings file that is not valid JSON", async () => {
    const dir = project();
    mkdirSync(join(dir, ".claude"));
    writeFileSync(join(dir, ".claude", "settings.local.json"), "{ broken");
    const { code, err } = await reins(dir, "init", "claude", "--in-process");
    expect(code).toBe(2);
    expect(err).toMatch(/settings\.local\.json is not valid JSON .*reins did not change it/);
    expect(readFileSync(join(dir, ".claude", "settings.local.json"), "utf8")).toBe("{ broken");
  });

  it("writes the user's settings with --user, and rejects an unknown agent", async () => {
    const dir = project();
    await reins(dir, "init", "gemini", "--user");
    expect(read(join(dir, "home", ".gemini", "settings.json")).hooks.BeforeTool).toHaveLength(1);
    const unknown = await reins(dir, "init", "cursor");
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('reins init knows claude, codex, gemini, qwen, copilot, not "cursor"');
  });
});

/** The `trusted_hash` Codex needs for each command hook of a hooks.json, by its `[hooks.state]` key. */
function codexHashes(hooksPath: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [event, groups] of Object.entries(read(hooksPath).hooks))
    groups.forEach((group, g) =>
      group.hooks.forEach((hook, h) => {
        const label = event.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
        out.set(
          `${hooksPath}:${label}:${g}:${h}`,
          codexHookHash(event, group.matcher, {
            command: hook.command ?? "",
            ...(hook.timeout ? { timeout: hook.timeout } : {}),
          }),
        );
      }),
    );
  return out;
}

type CodexConfig = {
  projects?: Record<string, { trust_level?: string }>;
  hooks?: { state?: Record<string, { trusted_hash?: string; enabled?: unknown }> };
};
const toml = (path: string) => readToml(readFileSync(path, "utf8")) as CodexConfig;

describe("reins init and the agents' own trust", () => {
  const USER_CONFIG = `# my Codex settings
model = "o3"

[projects."/somewhere/else"]
trust_level = "trusted"

[hooks.state."/somewhere/else/.codex/hooks.json:stop:0:0"]
trusted_hash = "sha256:theirs"
`;

  it("makes Codex trust the project and exactly reins' hooks in the user's config, idempotently; --uninstall takes out exactly that", async () => {
    const dir = project();
    const config = join(dir, "home", ".codex", "config.toml");
    mkdirSync(join(dir, "home", ".codex"), { recursive: true });
    writeFileSync(config, USER_CONFIG);
    mkdirSync(join(dir, ".codex"));
    const hooksPath = join(dir, ".codex", "hooks.json");
    writeFileSync(
      hooksPath,
      JSON.stringify({
        hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "echo mine" }] }] },
      }),
    );

    const first = await reins(dir, "init", "codex");
    expect(first.code, first.err).toBe(0);
    expect(first.out).toMatch(/trusted this project and 6 hook\(s\) in .*config\.toml/);
    const text = readFileSync(config, "utf8");
    expect(text.startsWith(USER_CONFIG)).toBe(true);
    const trusted = toml(config);
    expect(trusted.projects?.[dir]?.trust_level).toBe("trusted");
    expect(trusted.projects?.["/somewhere/else"]?.trust_level).toBe("trusted");
    // Every reins hook, SessionEnd among them (with Codex's 3 s cap), is trusted by the hash Codex computes;
    // the user's own hook is not: that is the user's decision.
    const installed = read(hooksPath);
    expect(installed.hooks.SessionEnd?.[0]?.hooks[0]?.timeout).toBe(3);
    const state = trusted.hooks?.state ?? {};
    for (const [key, hash] of codexHashes(hooksPath)) {
      if (key.endsWith(":pre_tool_use:0:0")) expect(state[key]).toBeUndefined();
      else expect(state[key]?.trusted_hash, key).toBe(hash);
    }
    expect(Object.keys(state)).toHaveLength(7);

    const again = await reins(dir, "init", "codex");
    expect(again.out).toContain("Codex already trusts this project and reins' hooks");
    expect(readFileSync(config, "utf8")).toBe(text);

    const removed = await reins(dir, "init", "codex", "--uninstall");
    expect(removed.out).toMatch(
      /removed reins' trust from .*config\.toml: the project's and 6 hook hash\(es\)/,
    );
    expect(readFileSync(config, "utf8")).toBe(USER_CONFIG);
    expect(existsSync(join(dir, ".reins", "agent-trust.json"))).toBe(false);
  });

  it("keeps the trust of a user's Codex hook that moves when reins' hooks are removed", async () => {
    const dir = project();
    await reins(dir, "init", "codex");
    const hooksPath = join(dir, ".codex", "hooks.json");
    const installed = read(hooksPath);
    // The user adds a hook after reins' and trusts it in Codex (its /hooks review writes this).
    installed.hooks.PreToolUse?.push({ matcher: "Bash", hooks: [{ type: "command", command: "echo mine" }] });
    writeFileSync(hooksPath, JSON.stringify(installed));
    const config = join(dir, "home", ".codex", "config.toml");
    const mineHash = codexHookHash("PreToolUse", "Bash", { command: "echo mine" });
    writeFileSync(
      config,
      `${readFileSync(config, "utf8")}\n[hooks.state."${hooksPath}:pre_tool_use:1:0"]\ntrusted_hash = "${mineHash}"\n`,
    );

    await reins(dir, "init", "codex", "--uninstall");
    expect(read(hooksPath).hooks.PreToolUse).toEqual([
      { matcher: "Bash", hooks: [{ type: "command", command: "echo mine" }] },
    ]);
    const state = toml(config).hooks?.state ?? {};
    expect(state).toEqual({ [`${hooksPath}:pre_tool_use:0:0`]: { trusted_hash: mineHash } });
    expect(toml(config).projects).toBeUndefined();
  });

  it("with --no-trust or REINS_INIT_NO_TRUST=1 leaves Codex's config alone and prints what to add", async () => {
    for (const [flags, env] of [
      [["--no-trust"], {}],
      [[], { REINS_INIT_NO_TRUST: "1" }],
    ] as const) {
      const dir = project();
      const { code, out } = await reinsWith(dir, env, "init", "codex", ...flags);
      expect(code).toBe(0);
      expect(existsSync(join(dir, "home", ".codex", "config.toml"))).toBe(false);
      expect(out).toContain(
        `reins did not change ${join(dir, "home", ".codex", "config.toml")} (--no-trust or REINS_INIT_NO_TRUST=1)`,
      );
      expect(out).toContain(`[projects."${dir}"]\ntrust_level = "trusted"\n`);
      for (const [key, hash] of codexHashes(join(dir, ".codex", "hooks.json")))
        expect(out).toContain(`[hooks.state."${key}"]\ntrusted_hash = "${hash}"`);
    }
  });

  it("fails and says what to add when Codex's config cannot be written or edited safely", async () => {
    const dir = project();
    mkdirSync(join(dir, "home"));
    writeFileSync(join(dir, "home", ".codex"), "a file where Codex's folder should be");
    const unwritable = await reins(dir, "init", "codex");
    expect(unwritable.code).toBe(1);
    expect(unwritable.out).toMatch(/added reins hooks for 6 event\(s\)/);
    expect(unwritable.err).toMatch(/reins: reins could not write .*config\.toml .*add this to it/s);
    expect(unwritable.err).toContain(`[projects."${dir}"]\ntrust_level = "trusted"`);

    const inline = project();
    const config = join(inline, "home", ".codex", "config.toml");
    mkdirSync(join(inline, "home", ".codex"), { recursive: true });
    writeFileSync(config, 'projects = { "/x" = { trust_level = "trusted" } }\n');
    const conflict = await reins(inline, "init", "codex");
    expect(conflict.code).toBe(1);
    expect(conflict.err).toContain(
      `[projects."${inline}"] is written in a form reins does not edit by lines`,
    );
    expect(readFileSync(config, "utf8")).toBe('projects = { "/x" = { trust_level = "trusted" } }\n');
  });

  it("leaves a project the person marked untrusted in Codex as it is, and says so", async () => {
    const dir = project();
    const config = join(dir, "home", ".codex", "config.toml");
    mkdirSync(join(dir, "home", ".codex"), { recursive: true });
    const text = `[projects."${dir}"]\ntrust_level = "untrusted"\n`;
    writeFileSync(config, text);
    const { code, err } = await reins(dir, "init", "codex");
    expect(code).toBe(1);
    expect(err).toContain(`Codex marks ${dir} untrusted`);
    expect(toml(config).projects?.[dir]?.trust_level).toBe("untrusted");
  });

  it("follows CODEX_HOME, and trusts a --user install's hooks without trusting any project", async () => {
    const dir = project();
    const codexHome = join(dir, "codex-home");
    const { code } = await reinsWith(dir, { CODEX_HOME: codexHome }, "init", "codex", "--user");
    expect(code).toBe(0);
    const hooksPath = join(codexHome, "hooks.json");
    const config = toml(join(codexHome, "config.toml"));
    expect(config.projects).toBeUndefined();
    const hashes = codexHashes(hooksPath);
    expect(hashes.size).toBe(6);
    for (const [key, hash] of hashes) expect(config.hooks?.state?.[key]?.trusted_hash).toBe(hash);
    await reinsWith(dir, { CODEX_HOME: codexHome }, "init", "codex", "--user", "--uninstall");
    expect(readFileSync(join(codexHome, "config.toml"), "utf8")).toBe("");
  });

  it("adds the project to Gemini CLI's trusted folders, merging, idempotently; --uninstall removes its entry", async () => {
    const dir = project();
    const file = join(dir, "home", ".gemini", "trustedFolders.json");
    mkdirSync(join(dir, "home", ".gemini"), { recursive: true });
    const theirs = JSON.stringify({ "/elsewhere": "TRUST_FOLDER", "/nope": "DO_NOT_TRUST" }, null, 2);
    writeFileSync(file, theirs);

    const first = await reins(dir, "init", "gemini");
    expect(first.code, first.err).toBe(0);
    expect(first.out).toContain(`trusted ${dir} in ${file}`);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      "/elsewhere": "TRUST_FOLDER",
      "/nope": "DO_NOT_TRUST",
      [dir]: "TRUST_FOLDER",
    });
    const text = readFileSync(file, "utf8");
    expect((await reins(dir, "init", "gemini")).out).toContain(`Gemini CLI already trusts ${dir}`);
    expect(readFileSync(file, "utf8")).toBe(text);

    expect((await reins(dir, "init", "gemini", "--uninstall")).out).toContain(
      `removed ${dir} from Gemini CLI's trusted folders`,
    );
    expect(readFileSync(file, "utf8")).toBe(theirs);
  });

  it("leaves Gemini's trust alone when a rule already decides it, and fails on DO_NOT_TRUST", async () => {
    const dir = project();
    const file = join(dir, "trusted.json");
    const env = { GEMINI_CLI_TRUSTED_FOLDERS_PATH: file };
    writeFileSync(file, JSON.stringify({ [join(dir, "..")]: "TRUST_FOLDER" }));
    const parent = await reinsWith(dir, env, "init", "gemini");
    expect(parent.out).toContain("Gemini CLI already trusts");
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ [join(dir, "..")]: "TRUST_FOLDER" });
    // Nothing was added, so --uninstall takes nothing away.
    await reinsWith(dir, env, "init", "gemini", "--uninstall");
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ [join(dir, "..")]: "TRUST_FOLDER" });

    writeFileSync(file, JSON.stringify({ [dir]: "DO_NOT_TRUST" }));
    const refused = await reinsWith(dir, env, "init", "gemini");
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`says not to trust ${dir}`);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ [dir]: "DO_NOT_TRUST" });
  });
});
