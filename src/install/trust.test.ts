/** Tests of the agents' trust stores: Codex's config.toml and Gemini CLI's trusted folders. */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  codexHookHash,
  codexHookSlots,
  codexProjectTrust,
  codexTrustChanges,
  codexTrustedHashes,
  geminiFolderTrust,
  geminiTrustedFoldersPath,
  readTrustedFolders,
} from "./trust.js";
import { readToml, tomlSet, tomlUnset } from "./toml-lines.js";

const CONFIG = `# my settings
model = "o3"
notify = ["say", "done # not a comment"]
description = """
[not.a.table]
"""

[projects."/work/other"]
trust_level = "trusted" # mine

[hooks.state."/work/other/.codex/hooks.json:stop:0:0"]
enabled = false
trusted_hash = "sha256:old"
`;

describe("reading Codex's config.toml", () => {
  it("finds project trust and hook hashes among tables, dotted keys, inline tables and multi-line strings", () => {
    const doc = readToml(
      `${CONFIG}\n[mcp_servers.x]\nenv = { A = "1", 'B.c' = { d = 'e' } }\nargs = [\n  "a", # one\n  "b",\n]\nsub.key = "v"\n`,
    );
    expect(codexProjectTrust(doc, "/work/other")).toBe("trusted");
    expect(codexTrustedHashes(doc)).toEqual(
      new Map([["/work/other/.codex/hooks.json:stop:0:0", "sha256:old"]]),
    );
    expect(doc.description).toBe("[not.a.table]\n"); // TOML drops the newline right after """
  });

  it("refuses a table defined twice and a line it cannot read, saying where", () => {
    expect(() => readToml("[a]\nx = 1\n[a]\n")).toThrow(/line 3/);
    expect(() => readToml('a = "open\n')).toThrow(/line 1/);
  });
});

describe("editing TOML by lines", () => {
  it("appends a new table at the end and takes it out again, leaving the file as it was", () => {
    const set = tomlSet(CONFIG, ["projects", "/work/p"], "trust_level", "trusted", "# by reins");
    expect(set).toEqual({
      text: `${CONFIG}\n# by reins\n[projects."/work/p"]\ntrust_level = "trusted"\n`,
    });
    if (!("text" in set)) return;
    expect(readToml(set.text).model).toBe("o3");
    expect(tomlSet(set.text, ["projects", "/work/p"], "trust_level", "trusted")).toEqual(set);
    expect(tomlUnset(set.text, ["projects", "/work/p"], "trust_level", "# by reins")).toEqual({
      text: CONFIG,
    });
  });

  it("changes a key inside its table's section, and removes only that key when others are there", () => {
    const key = ["hooks", "state", "/work/other/.codex/hooks.json:stop:0:0"];
    const set = tomlSet(CONFIG, key, "trusted_hash", "sha256:new");
    expect("text" in set && set.text).toBe(CONFIG.replace("sha256:old", "sha256:new"));
    const unset = tomlUnset(CONFIG, key, "trusted_hash");
    expect("text" in unset && unset.text).toBe(CONFIG.replace('trusted_hash = "sha256:old"\n', ""));
    const added = tomlSet(CONFIG, ["projects", "/work/other"], "note", "x");
    expect("text" in added && added.text).toContain('trust_level = "trusted" # mine\nnote = "x"\n');
  });

  it("never writes a file that means something else: a header-like line in a string makes a conflict", () => {
    const text = 'note = """\n[projects."/p"]\n"""\n';
    expect(tomlSet(text, ["projects", "/p"], "trust_level", "trusted")).toEqual({
      conflict: '[projects."/p"] is written in a form reins does not edit by lines',
    });
    expect(readToml(text).note).toBe('[projects."/p"]\n');
  });

  it("will not edit a table written inline or with dotted keys", () => {
    expect(
      tomlSet(
        'projects = { "/a" = { trust_level = "untrusted" } }\n',
        ["projects", "/b"],
        "trust_level",
        "trusted",
      ),
    ).toEqual({
      conflict: '[projects."/b"] is written in a form reins does not edit by lines',
    });
    expect(
      tomlSet('[projects]\n"/b".trust_level = "untrusted"\n', ["projects", "/b"], "trust_level", "trusted"),
    ).toEqual({
      conflict: '[projects."/b"] is written in a form reins does not edit by lines',
    });
    expect(
      tomlUnset('hooks.state.k.trusted_hash = "x"\n', ["hooks", "state", "k"], "trusted_hash"),
    ).toHaveProperty("conflict");
  });
});

describe("Codex's project trust", () => {
  it("looks the folder up, then the git checkout it is in, as Codex does", () => {
    const repo = mkdtempSync(join(tmpdir(), "reins-trust-git-"));
    mkdirSync(join(repo, ".git"));
    mkdirSync(join(repo, "app"));
    const trusted = readToml(`[projects.${JSON.stringify(repo)}]\ntrust_level = "trusted"\n`);
    expect(codexProjectTrust(trusted, join(repo, "app"))).toBe("trusted");
    const own = readToml(
      `[projects.${JSON.stringify(repo)}]\ntrust_level = "trusted"\n[projects.${JSON.stringify(join(repo, "app"))}]\ntrust_level = "untrusted"\n`,
    );
    expect(codexProjectTrust(own, join(repo, "app"))).toBe("untrusted");
    expect(codexProjectTrust(trusted, tmpdir())).toBeUndefined();
  });
});

describe("Codex's hook trust", () => {
  // The hashes Codex 0.169.0 itself reported for these hooks (app-server `hooks/list`, `currentHash`).
  it("hashes a hook as Codex does", () => {
    const client =
      'REINS_PORT=7991 "/tmp/probe/p/.reins/bin/reins-hook" codex "/usr/bin/node" "/work/main/bin/reins.js"';
    expect(codexHookHash("PreToolUse", "*", { command: client, timeout: 30 })).toBe(
      "sha256:2123e9cfceccee3c28fd91bb566b8ed85c8c4810c9a7a9a5c9f196f0127b74b8",
    );
    expect(codexHookHash("Stop", undefined, { command: client, timeout: 30 })).toBe(
      "sha256:1e16dbd45e1ab73991008a356bfb60ccb618a81a7271b4d51b2d59f38f44d91a",
    );
    expect(
      codexHookHash("SessionStart", undefined, {
        command: '"/usr/bin/node" "/work/main/bin/reins.js" hook codex --ensure-daemon --port 7991',
        timeout: 30,
      }),
    ).toBe("sha256:7e10e9fdd931a59fa680647d0257aadd72d3f95b63ec1a1cf13c65e7feb991a7");
    // SessionEnd's timeout is clamped to 3 s before hashing.
    const end = { command: "cat > /tmp/probe/q/session-end.json" };
    expect(codexHookHash("SessionEnd", undefined, { ...end, timeout: 30 })).toBe(
      "sha256:cbb89f1d8970b1445a91c29caaa364f3a3131c19779635dea6d17ef689db76e9",
    );
    expect(codexHookHash("SessionEnd", undefined, { ...end, timeout: 3 })).toBe(
      codexHookHash("SessionEnd", undefined, { ...end, timeout: 30 }),
    );
  });

  const ours = (h: Record<string, unknown>) => h.command === "reins";
  const file = (groups: object[]) => ({ hooks: { PreToolUse: groups } });
  const mine = { matcher: "Bash", hooks: [{ type: "command", command: "mine" }] };
  const reins = { matcher: "*", hooks: [{ type: "command", command: "reins", timeout: 30 }] };

  it("keys each command hook by file, event, group and index", () => {
    expect(
      codexHookSlots("/p/.codex/hooks.json", file([mine, reins]), ours).map((s) => [s.key, s.ours]),
    ).toEqual([
      ["/p/.codex/hooks.json:pre_tool_use:0:0", false],
      ["/p/.codex/hooks.json:pre_tool_use:1:0", true],
    ]);
  });

  it("trusts reins' hooks, and a hook of the user's that moved keeps its trust", () => {
    const slots = (groups: object[]) => codexHookSlots("/h", file(groups), ours);
    const [, reinsSlot] = slots([mine, reins]);
    const installed = codexTrustChanges(
      slots([mine]),
      slots([mine, reins]),
      new Map([["/h:pre_tool_use:0:0", "sha256:m"]]),
    );
    expect(installed).toEqual(new Map([["/h:pre_tool_use:1:0", reinsSlot!.hash]]));
    // Reins' group first, the user's after it: removing reins' moves the user's hook to index 0.
    const trusted = new Map([
      ["/h:pre_tool_use:0:0", reinsSlot!.hash],
      ["/h:pre_tool_use:1:0", "sha256:m"],
    ]);
    expect(codexTrustChanges(slots([reins, mine]), slots([mine]), trusted)).toEqual(
      new Map([
        ["/h:pre_tool_use:1:0", null],
        ["/h:pre_tool_use:0:0", "sha256:m"],
      ]),
    );
    // Trust a person gave some other hash is theirs: left alone.
    expect(
      codexTrustChanges(slots([reins]), slots([]), new Map([["/h:pre_tool_use:0:0", "sha256:x"]])),
    ).toEqual(new Map());
  });
});

describe("Gemini CLI's trusted folders", () => {
  it("decides as Gemini does: the longest matching rule, DO_NOT_TRUST on a tie", () => {
    const rules = { "/w": "TRUST_FOLDER", "/w/secret": "DO_NOT_TRUST", "/x/child": "TRUST_PARENT" };
    expect(geminiFolderTrust(rules, "/w/app")).toBe(true);
    expect(geminiFolderTrust(rules, "/w/secret/app")).toBe(false);
    expect(geminiFolderTrust(rules, "/x/other")).toBe(true);
    expect(geminiFolderTrust(rules, "/wide")).toBeUndefined();
    expect(geminiFolderTrust({ "/a": "DO_NOT_TRUST", "/a/b": "TRUST_PARENT" }, "/a")).toBe(false);
  });

  it("finds the file where Gemini does, and reads it with comments", () => {
    expect(geminiTrustedFoldersPath({}, "/home/u")).toBe("/home/u/.gemini/trustedFolders.json");
    expect(geminiTrustedFoldersPath({ GEMINI_CLI_HOME: "/g" }, "/home/u")).toBe(
      "/g/.gemini/trustedFolders.json",
    );
    expect(geminiTrustedFoldersPath({ GEMINI_CLI_TRUSTED_FOLDERS_PATH: "/t.json" }, "/home/u")).toBe(
      "/t.json",
    );
    const dir = mkdtempSync(join(tmpdir(), "reins-trust-"));
    mkdirSync(join(dir, "g"));
    const path = join(dir, "g", "trustedFolders.json");
    writeFileSync(path, '{\n  // mine\n  "/a//b": "TRUST_FOLDER", /* x */ "/c": "DO_NOT_TRUST"\n}');
    expect(readTrustedFolders(path)).toEqual({
      rules: { "/a//b": "TRUST_FOLDER", "/c": "DO_NOT_TRUST" },
      plain: false,
    });
    expect(readTrustedFolders(join(dir, "none.json"))).toEqual({ rules: {}, plain: true });
  });
});
