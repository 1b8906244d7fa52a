import { describe, expect, it } from "vitest";

/**
 * The library surface as someone embedding reins sees it: everything imported by the package's own names
 * (`reins`, `reins/governor`, `reins/events`, `reins/memory`), from the built `dist/`, as an installed
 * package resolves them. An agent loop of one's own records its tool calls and usage with the same event
 * builders the hooks use, and gets the same decisions.
 */

type Reins = typeof import("../src/base/core/index.js");
type Events = typeof import("../src/base/vocabulary/events.js");
type GovernorModule = typeof import("../src/guard/governor.js");
type Memory = typeof import("../src/base/store/memory.js");

/** Imports by the package's name, resolved at run time (the built `dist/`), not by the compiler. */
const entry = (name: string): Promise<unknown> => import(name);

const load = async () => ({
  reins: (await entry("reins")) as Reins,
  events: (await entry("reins/events")) as Events,
  governor: (await entry("reins/governor")) as GovernorModule,
  memory: (await entry("reins/memory")) as Memory,
});

describe("the package's entry points", () => {
  it("record a loop's tool calls with the hooks' event builders, and deny the loop as the hooks would", async () => {
    const { reins, events, governor: g, memory } = await load();
    const policy = reins.resolvePolicy({});
    const governor = g.createGovernor({ store: new memory.MemoryStore(), policy });
    const scope = "session:my-loop";
    await governor.record(scope, events.eventsAt(scope, 0, [{ kind: "session.started", agent: "my-loop" }]));
    const verdicts: string[] = [];
    for (let i = 1; i <= 8; i++) {
      const touch = events.toolTouch("Bash", { command: "npm test" }, `call-${i}`);
      const [asked] = (
        await governor.record(
          scope,
          events.eventsAt(scope, i * 1_000, [{ kind: "tool.requested", ...touch }]),
        )
      ).answers;
      verdicts.push(asked?.verdict ?? "none");
      const ended = events.toolEndEvents(
        touch,
        { failed: true, exitCode: 1, text: "1 failed", output: "1 failed" },
        policy,
      );
      // The same builders recognise `npm test` as a check and read its result from the exit code.
      expect(ended.map((e) => e.kind)).toEqual(["tool.completed", "verification.ran"]);
      await governor.record(scope, events.eventsAt(scope, i * 1_000 + 500, ended));
    }
    expect(verdicts.slice(0, 2)).toEqual(["allow", "allow"]);
    expect(verdicts).toContain("block");
    // The summary of the scope, as the dashboard shows it.
    const state = await governor.store.state(scope);
    expect(state).not.toBeNull();
    const summary = reins.scopeSummary(state!, policy);
    expect(summary.breaker.status).toBe("open");
  });

  it("price a model call's usage by the policy's table, or by the agent's own figure", async () => {
    const { reins, events } = await load();
    const policy = reins.resolvePolicy({});
    const priced = events.usageEvent(
      { id: "m1", model: "claude-sonnet-4-5", input: 1_000_000, output: 0, cacheRead: 0, cacheWrite: 0 },
      policy,
    );
    expect(priced).toMatchObject({ kind: "usage.recorded", inputTokens: 1_000_000, pricing: "table" });
    expect((priced as { costUsd: number }).costUsd).toBeGreaterThan(0);
    const own = events.usageEvent(
      { id: "m2", input: 10, output: 10, cacheRead: 0, cacheWrite: 0, costUsd: 0.25 },
      policy,
    );
    expect(own).toMatchObject({ costUsd: 0.25, pricing: "agent" });
  });
});
