import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { installPlugin, pluginPath, pluginSource, readPlugin } from "./opencode-plugin.js";

let root: string;
const options = {
  agent: "opencode",
  node: "/usr/bin/node",
  bin: "/opt/reins/bin/reins.js",
  daemon: "d-0123abcd",
};

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "reins-plugin-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("reins' opencode plugin", () => {
  it("goes where each CLI loads plugins from", () => {
    expect(pluginPath("opencode", root)).toBe(join(root, ".opencode", "plugins", "reins.js"));
    expect(pluginPath("kilo", root)).toBe(join(root, ".kilo", "plugins", "reins.js"));
  });

  it("is written once, read back with its constants, and removed only when it is reins'", () => {
    const path = pluginPath("opencode", root);
    expect(installPlugin(path, options, false)).toMatch(/^wrote/);
    expect(installPlugin(path, options, false)).toMatch(/already/);
    expect(readPlugin(path)).toEqual(options);
    expect(readFileSync(path, "utf8")).toBe(pluginSource(options));
    expect(installPlugin(path, options, true)).toMatch(/^removed/);
    expect(existsSync(path)).toBe(false);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, "export const Mine = async () => ({});\n");
    expect(installPlugin(path, options, true)).toMatch(/^no reins plugin/);
    expect(existsSync(path)).toBe(true);
  });

  it("imports nothing but Node's built-ins, and carries no secret", () => {
    const text = pluginSource(options);
    const imports = [...text.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.every((m) => m?.startsWith("node:"))).toBe(true);
    expect(text).not.toMatch(/[0-9a-f]{64}/);
  });
});
