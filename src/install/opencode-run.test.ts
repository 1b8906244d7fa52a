import { existsSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { installPlugin, pluginPath, readPlugin } from "./opencode-plugin.js";
import { opencodeRunEnv } from "./opencode-run.js";

let dir: string;
let root: string;
const reins = { node: "/usr/bin/node", bin: "/opt/reins/bin/reins.js" };

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "reins-opencode-run-"));
  root = join(dir, "project");
  mkdirSync(root);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("opencodeRunEnv", () => {
  it("gives the run a config folder of its own holding reins' plugin, the user's entries linked", () => {
    const user = join(dir, "user-config");
    mkdirSync(join(user, "plugins"), { recursive: true });
    writeFileSync(join(user, "opencode.json"), "{}");
    writeFileSync(join(user, "plugins", "mine.js"), "export const Mine = async () => ({});\n");
    const env = opencodeRunEnv(root, reins, user);
    const folder = join(root, ".reins", "run-hooks", "opencode-config");
    expect(env).toEqual({ OPENCODE_CONFIG_DIR: folder });
    expect(readPlugin(join(folder, "plugins", "reins.js"))).toEqual({
      agent: "opencode",
      ...reins,
      daemon: expect.any(String) as string,
    });
    expect(readlinkSync(join(folder, "opencode.json"))).toBe(join(user, "opencode.json"));
    expect(readlinkSync(join(folder, "plugins", "mine.js"))).toBe(join(user, "plugins", "mine.js"));
    expect(existsSync(join(root, ".reins", "hook-secret"))).toBe(true);
    // Made again, it is the same folder.
    expect(opencodeRunEnv(root, reins, user)).toEqual(env);
    expect(existsSync(join(folder, "plugins", "reins.js"))).toBe(true);
  });

  it("adds no second plugin when the project's own is reins'", () => {
    installPlugin(pluginPath("opencode", root), { agent: "opencode", ...reins, daemon: "d-1" }, false);
    const env = opencodeRunEnv(root, reins, undefined);
    expect(existsSync(join(env.OPENCODE_CONFIG_DIR ?? "", "plugins", "reins.js"))).toBe(false);
  });
});
