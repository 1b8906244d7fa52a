/** Tests of the run's own Codex home: reins' hooks added and trusted, the user's files and trust kept. */
import {
  existsSync,
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
import { initAgent, isReinsHook } from "./agent-hooks.js";
import { codexHookHash, codexHookSlots, codexTrustedHashes } from "./trust.js";
import { readToml, tomlGet } from "./toml-lines.js";
import { carriedTrust, codexRunEnv, runCodexConfig } from "./codex-home.js";

const BIN = "/opt/reins/bin/reins.js";
const ours = (hook: Record<string, unknown>) => isReinsHook(hook, "codex");

let dir: string;
let root: string;
let user: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "reins-codex-home-")));
  root = join(dir, "project");
  user = join(dir, "home", ".codex");
  mkdirSync(root);
  mkdirSync(join(user, "sessions"), { recursive: true });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The user's own hook, trusted by the user in their config (as Codex's /hooks review writes it). */
const USER_HOOK = { type: "command", command: "./audit.sh", timeout: 5 };
const userHooks = { hooks: { PreToolUse: [{ matcher: "Bash", hooks: [USER_HOOK] }] } };
const userHash = codexHookHash("PreToolUse", "Bash", USER_HOOK);

/** A user's Codex home: credentials, sessions, their own hook and config (comments, a provider, trust). */
function userCodexHome(): void {
  writeFileSync(join(user, "auth.json"), '{"token":"secret"}\n');
  writeFileSync(join(user, "hooks.json"), JSON.stringify(userHooks));
  writeFileSync(
    join(user, "config.toml"),
    [
      "# mine",
      'model = "gpt-5"',
      "",
      `[projects.${JSON.stringify(root)}]`,
      'trust_level = "trusted"',
      "",
      `[hooks.state.${JSON.stringify(`${join(user, "hooks.json")}:pre_tool_use:0:0`)}]`,
      `trusted_hash = ${JSON.stringify(userHash)}`,
      "",
    ].join("\n"),
  );
}

/** Every file under the user's home with its content (links not followed). */
function files(at: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(at, { recursive: true, withFileTypes: true }))
    if (entry.isFile())
      out[join(entry.parentPath, entry.name)] = readFileSync(join(entry.parentPath, entry.name), "utf8");
  return out;
}

/** The run home's hooks.json, and whether config.toml trusts each of its command hooks by its own hash. */
function trustOf(home: string): { slot: string; ours: boolean; trusted: boolean }[] {
  const hooks = JSON.parse(readFileSync(join(home, "hooks.json"), "utf8")) as unknown;
  const trusted = codexTrustedHashes(readToml(readFileSync(join(home, "config.toml"), "utf8")));
  return codexHookSlots(join(home, "hooks.json"), hooks, ours).map((s) => ({
    slot: s.key.slice(home.length + 1),
    ours: s.ours,
    trusted: trusted.get(s.key) === s.hash,
  }));
}

describe("codexRunEnv", () => {
  it("adds reins' hooks to a copy of the user's, trusts every hook of the copy, and writes none of the user's files", () => {
    userCodexHome();
    const before = files(user);
    const { CODEX_HOME: home = "" } = codexRunEnv(root, BIN, user);

    expect(home).toBe(join(root, ".reins", "run-hooks", "codex-home"));
    expect(files(user)).toEqual(before);
    // Every other entry is a link to the user's own; the two files Codex keys trust by are the run's.
    expect(readdirSync(home).sort()).toEqual(["auth.json", "config.toml", "hooks.json", "sessions"]);
    for (const name of ["auth.json", "sessions"]) {
      expect(lstatSync(join(home, name)).isSymbolicLink()).toBe(true);
      expect(readlinkSync(join(home, name))).toBe(join(user, name));
    }
    for (const name of ["config.toml", "hooks.json"]) expect(lstatSync(join(home, name)).isFile()).toBe(true);

    // The user's hook first, where it was, then one of reins' for every event; each trusted in the copy.
    const trust = trustOf(home);
    expect(trust[0]).toEqual({ slot: "hooks.json:pre_tool_use:0:0", ours: false, trusted: true });
    expect(trust.filter((t) => t.ours)).toHaveLength(hookEventsOf("codex").length);
    expect(trust.every((t) => t.trusted)).toBe(true);

    // The rest of the user's config is carried as they wrote it.
    const config = readFileSync(join(home, "config.toml"), "utf8");
    expect(config.startsWith(readFileSync(join(user, "config.toml"), "utf8"))).toBe(true);
    expect(tomlGet(readToml(config), ["projects", root, "trust_level"])).toBe("trusted");
  });

  it("is the same when made again, for the next run", () => {
    userCodexHome();
    const home = codexRunEnv(root, BIN, user).CODEX_HOME ?? "";
    const first = {
      hooks: readFileSync(join(home, "hooks.json"), "utf8"),
      config: readFileSync(join(home, "config.toml"), "utf8"),
    };
    const before = files(user);
    expect(codexRunEnv(root, BIN, user)).toEqual({ CODEX_HOME: home });
    expect(readFileSync(join(home, "hooks.json"), "utf8")).toBe(first.hooks);
    expect(readFileSync(join(home, "config.toml"), "utf8")).toBe(first.config);
    expect(readdirSync(home).sort()).toEqual(["auth.json", "config.toml", "hooks.json", "sessions"]);
    expect(files(user)).toEqual(before);
  });

  it("adds no hooks when the project's own .codex/hooks.json runs reins': they apply as they are", () => {
    userCodexHome();
    initAgent("codex", { settingsPath: join(root, ".codex", "hooks.json"), bin: BIN, mode: "in-process" });
    const home = codexRunEnv(root, BIN, user).CODEX_HOME ?? "";
    expect(trustOf(home)).toEqual([{ slot: "hooks.json:pre_tool_use:0:0", ours: false, trusted: true }]);
  });

  it("keeps a single set of reins' hooks when the user installed them with --user", () => {
    const options = { bin: BIN, mode: "client" as const, daemon: "d-12345678" };
    initAgent("codex", { settingsPath: join(user, "hooks.json"), ...options });
    const home = codexRunEnv(root, BIN, user).CODEX_HOME ?? "";
    const trust = trustOf(home);
    expect(trust.filter((t) => t.ours)).toHaveLength(hookEventsOf("codex").length);
    expect(trust.every((t) => t.trusted)).toBe(true);
  });

  it("makes a home of reins' hooks alone when the user has no Codex home yet", () => {
    rmSync(user, { recursive: true });
    const home = codexRunEnv(root, BIN, user).CODEX_HOME ?? "";
    expect(readdirSync(home).sort()).toEqual(["config.toml", "hooks.json"]);
    const trust = trustOf(home);
    expect(trust).toHaveLength(hookEventsOf("codex").length);
    expect(trust.every((t) => t.ours && t.trusted)).toBe(true);
    expect(existsSync(user)).toBe(false);
  });

  it("says which file is not TOML instead of starting Codex on it", () => {
    writeFileSync(join(user, "config.toml"), "model = \n");
    expect(() => codexRunEnv(root, BIN, user)).toThrow(`${join(user, "config.toml")} is not TOML`);
  });
});

describe("carriedTrust", () => {
  const userHome = "/home/me/.codex";
  const runHome = "/work/app/.reins/run-hooks/codex-home";

  it("moves the user's trust of their hooks.json and config.toml hooks to the copy's paths, and no other", () => {
    const trusted = new Map([
      [`${userHome}/hooks.json:pre_tool_use:0:0`, userHash],
      [`${userHome}/config.toml:stop:0:0`, "sha256:stop"],
      ["/work/app/.codex/hooks.json:stop:0:0", "sha256:project"],
    ]);
    const carried = carriedTrust({ trusted, userHome, runHome, userHooks: userHooks, runHooks: userHooks });
    expect(carried).toEqual(
      new Map([
        [`${runHome}/hooks.json:pre_tool_use:0:0`, userHash],
        [`${runHome}/config.toml:stop:0:0`, "sha256:stop"],
      ]),
    );
  });

  it("follows a user's hook that moved when reins' older hook left its group, and trusts reins' hooks", () => {
    const old = { type: "command", command: `"/usr/bin/node" "${BIN}" hook codex`, timeout: 30 };
    const before = {
      hooks: {
        PreToolUse: [
          { matcher: "*", hooks: [old] },
          { matcher: "Bash", hooks: [USER_HOOK] },
        ],
      },
    };
    const trusted = new Map([
      [`${userHome}/hooks.json:pre_tool_use:0:0`, codexHookHash("PreToolUse", "*", old)],
      [`${userHome}/hooks.json:pre_tool_use:1:0`, userHash],
    ]);
    const client = {
      type: "command",
      command: `"/x/reins-hook" codex "/usr/bin/node" "${BIN}" d-12345678`,
      timeout: 30,
    };
    const after = {
      hooks: {
        PreToolUse: [
          { matcher: "Bash", hooks: [USER_HOOK] },
          { matcher: "*", hooks: [client] },
        ],
      },
    };
    expect(carriedTrust({ trusted, userHome, runHome, userHooks: before, runHooks: after })).toEqual(
      new Map([
        [`${runHome}/hooks.json:pre_tool_use:0:0`, userHash],
        [`${runHome}/hooks.json:pre_tool_use:1:0`, codexHookHash("PreToolUse", "*", client)],
      ]),
    );
  });
});

describe("runCodexConfig", () => {
  const trust = new Map([["/run/hooks.json:stop:0:0", "sha256:abc"]]);

  it("adds the trust after the user's text, which stays as it was", () => {
    const user = '# mine\nmodel = "gpt-5"\n';
    const text = runCodexConfig(user, trust);
    expect(text.startsWith(user)).toBe(true);
    expect(codexTrustedHashes(readToml(text))).toEqual(trust);
    expect(runCodexConfig(text, trust)).toBe(text);
  });

  it("writes the document anew when the user's hooks table is inline, where a line edit cannot add to it", () => {
    const user =
      'model = "gpt-5"\nhooks = { state = { "/u/hooks.json:stop:0:0" = { trusted_hash = "sha256:u" } } }\n';
    const doc = readToml(runCodexConfig(user, trust));
    expect(doc.model).toBe("gpt-5");
    expect(codexTrustedHashes(doc)).toEqual(new Map([["/u/hooks.json:stop:0:0", "sha256:u"], ...trust]));
  });
});
