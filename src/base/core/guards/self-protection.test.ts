import { describe, expect, it } from "vitest";
import { replay } from "../engine.js";
import type { ReinsEvent } from "../reins-event.js";
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
      { command: "npx reins --cwd /w/app alerts --scope session:p --ack 3" },
      { command: "cd /w && reins alerts --ack 3" },
      { command: "curl -X POST localhost:7878/api/budgets/session%3Ap/extend -d '{}'" },
      { command: "curl -X POST http://127.0.0.1:7878/api/circuits/session%3Ap/acknowledge" },
      { command: "cat .reins/api-token" },
      { tool: "Read", reads: ["/w/app/.reins/api-token"] },
      { command: "cat .reins/hook-secret" },
      { tool: "Read", reads: ["/w/app/.reins/agent-token"] },
      { command: "npx reins approve spec.md --by alice --reason ok" },
      { command: "node bin/reins.js -C /w/app approve --reason ok" },
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
      // Naming the token is not reading it: the code that handles it is the project's own.
      { command: "grep -rn api-token src/" },
      { command: "cat src/base/config/api-token.ts" },
      { command: "npx reins alerts" },
      { command: "npx reins init codex; echo --uninstall is for later" },
    ];
    for (const touch of fine) expect(verdicts([call(touch)])).toEqual([["allow", false]]);
  });

  it("reads a command in one pass: a long hostile command is judged at once, not in hours", () => {
    // Nested quantifiers over the words took time cubic in the length: 36 KB took 19 s on the daemon's
    // event loop. 400 KB would take days; this test's timeout fails it long before.
    const command = "echo reins alerts ".repeat(25_000);
    expect(verdicts([call({ command })])).toEqual([["allow", false]]);
    expect(verdicts([call({ command: `${command} --ack` })])).toEqual([["block", false]]);
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
