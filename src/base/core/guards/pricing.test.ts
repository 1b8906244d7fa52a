import { describe, expect, it } from "vitest";
import { replay } from "../engine.js";
import type { ReinsEvent } from "../reins-event.js";
import { defaultPolicy, resolvePolicy } from "../policy.js";

const usage = (
  at: number,
  model: string,
  pricing: string,
  costUsd = 2.25,
  inputTokens = 1_000,
): ReinsEvent => ({
  kind: "usage.recorded",
  at,
  scope: "session:p",
  inputTokens,
  costUsd,
  model,
  pricing,
});

describe("pricing", () => {
  it("tells once per session and model that USD was estimated, naming the model and the setting", () => {
    const decisions = replay(defaultPolicy, [
      usage(1, "claude-opus-5-5", "family:claude-opus-4"),
      usage(2, "claude-opus-5-5", "family:claude-opus-4"),
      usage(3, "mystery-9", "unknown"),
      usage(4, "claude-sonnet-4-5", "table"),
    ]);
    const said = decisions.map((d) => d.results.find((r) => r.guard === "pricing")?.message ?? null);
    expect(said).toEqual([
      "USD spend of `claude-opus-5-5` is estimated as `claude-opus-4`: the price table has no entry for it. Add it to `prices` in reins.config.json for exact figures.",
      null,
      "USD spend of `mystery-9` is estimated at the highest price the table lists: the price table has no entry for it. Add it to `prices` in reins.config.json for exact figures.",
      null,
    ]);
    expect(decisions.map((d) => d.verdict)).toEqual(["warn", "allow", "warn", "allow"]);
  });

  it("lets a USD budget pause a session of a model missing from the table", () => {
    const policy = resolvePolicy({ budget: { session: { usd: 5, tokens: null } } });
    const decisions = replay(
      policy,
      [1, 2, 3].map((i) => usage(i, "claude-opus-5-5", "family:claude-opus-4")),
    );
    expect(decisions.at(-1)).toMatchObject({ verdict: "block", needsHuman: true });
    expect(decisions.at(-1)?.instructions[0]).toMatch(/used 135% of its USD budget \(\$6\.75 of \$5\.00\)/);
  });
});
