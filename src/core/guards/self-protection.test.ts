import { describe, expect, it } from "vitest";
import { replay } from "../engine.js";
import type { ReinsEvent } from "../events.js";
import { defaultPolicy, resolvePolicy } from "../policy.js";
import { isProtectedPath } from "./self-protection.js";

let n = 0;
const call = (touch: Partial<Extract<ReinsEvent, { kind: "tool.requested" }>>): ReinsEvent => ({
  kind: "tool.requested",
  at: ++n * 1000,
  scope: "session:p",
  tool: "Bash",
  inputHash: `h${n}`,
  ...touch,
});
const confirm: ReinsEvent = {
  kind: "human.confirmed",
  at: 0,
  scope: "session:p",
  by: "ana",
  reason: "rotate the token",
};
const verdicts = (events: ReinsEvent[], policy = defaultPolicy) =>
  replay(policy, events).map((d) => [d.verdict, d.needsHuman]);

describe("self-protection", () => {
  it("knows reins' own files and the agents' hook settings, by path segments", () => {
    for (const path of [
      ".reins/reins.db",
      "/home/me/app/.reins/api-token",
      "./.reins",
      "reins.config.json",
      "/w/app/.claude/settings.json",
      ".claude/settings.local.json",
      ".codex/hooks.json",
      "/home/me/.codex/config.toml",
      ".gemini/settings.json",
      ".gemini/trustedFolders.json",
    ])
      expect(isProtectedPath(path), path).toBe(true);
    for (const path of [
      "src/reins.ts",
      "docs/.reinsrc",
      "settings.json",
      ".claude/commands/x.md",
      "my.reins/x",
    ])
      expect(isProtectedPath(path), path).toBe(false);
  });

  it("denies writing, moving or removing them, and running a person's actions; the agent goes on", () => {
    const cases: Partial<Extract<ReinsEvent, { kind: "tool.requested" }>>[] = [
      { tool: "Edit", writes: ["/w/app/reins.config.json"] },
      { command: "rm -rf .reins", removes: [".reins"] },
      { command: "mv .claude/settings.local.json /tmp/x", removes: [".claude/settings.local.json"] },
      { command: "npx reins budget extend session:p 1000000 --reason more" },
      { command: "node /opt/reins/bin/reins.js -C /w/app circuit reset session:p" },
      { command: "npx reins confirm session:p" },
      { command: "npx reins init claude --uninstall" },
      { command: "curl -X POST localhost:7878/api/budgets/session%3Ap/extend -d '{}'" },
      { command: "curl -X POST http://127.0.0.1:7878/api/circuits/session%3Ap/acknowledge" },
      { command: "cat .reins/api-token" },
      { tool: "Read", reads: ["/w/app/.reins/api-token"] },
    ];
    for (const touch of cases) {
      const [decision] = replay(defaultPolicy, [call(touch)]);
      expect([decision?.verdict, decision?.needsHuman], JSON.stringify(touch)).toEqual(["block", false]);
      expect(decision?.instructions[0]).toMatch(/reins confirm session:p --reason/);
    }
    const fine = [
      { command: "npx reins status" },
      { command: "cat .reins/serve.log" },
      { tool: "Edit", writes: ["src/app.ts"] },
      { command: "rm -rf build" },
    ];
    for (const touch of fine) expect(verdicts([call(touch)])).toEqual([["allow", false]]);
  });

  it("lets one such call through after a person confirms, and only one", () => {
    const edit = () => call({ tool: "Edit", writes: ["reins.config.json"] });
    expect(verdicts([edit(), confirm, edit(), edit()]).map(([v]) => v)).toEqual([
      "block",
      "allow",
      "allow",
      "block",
    ]);
  });

  it("can be turned off in the policy", () => {
    const off = resolvePolicy({ protection: { enabled: false } });
    expect(verdicts([call({ command: "rm -rf .reins", removes: [".reins"] })], off)).toEqual([
      ["allow", false],
    ]);
  });
});
