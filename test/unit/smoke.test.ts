/** A smoke test of the engine: the 5th identical failing command is blocked. */
import { describe, expect, it } from "vitest";
import { defaultPolicy, replay, timeline } from "../../src/base/core/index.js";

describe("smoke", () => {
  it("blocks the 5th identical failing command", () => {
    const t = timeline("session:s").started();
    for (let i = 0; i < 6; i++) t.bash("npm test", { ok: false, output: "1 failed" });
    const decisions = replay(defaultPolicy, t.events);
    const verdicts = decisions.map((d) => d.verdict);
    console.log(decisions.map((d) => `${d.seq} ${d.verdict} ${d.instructions.join(" | ")}`).join("\n"));
    expect(verdicts).toContain("block");
  });
});
