import { describe, expect, it } from "vitest";
import type { Decision } from "../decision.js";
import { pipeline } from "../pipeline.js";
import type { BudgetResource, UsageRecorded } from "../reins-event.js";
import { resolvePolicy, type PolicyInput } from "../policy.js";
import { LEVEL } from "../state.js";
import type { Timeline } from "../timeline.js";
import { driver } from "#test/drive.js";
import { budget } from "./budget.js";
import { defaultGuards } from "./index.js";

const only = pipeline([budget]);

type Usage = Omit<UsageRecorded, "kind" | "at" | "scope">;

/** A session run through the budget guard alone; each step returns the decisions of the events it added. */
function drive(input: PolicyInput = {}, guards = only) {
  const policy = resolvePolicy(input);
  const { t, state, steps, step } = driver(policy, guards);
  return { t, state, steps, step };
}

/** The decision for one usage event in a fresh session. */
function spendOnce(usage: Usage, input: PolicyInput = {}): Decision {
  return drive(input).step((t) => t.usage(usage));
}

/** A request only: the call asked to run, with no completion. */
function request(t: Timeline, n = 0): Timeline {
  return t.call("Read", { file_path: `src/${n}.ts` }, { reads: [`src/${n}.ts`] }, null);
}

/** A human extension of one meter of the current scope. */
function extend(
  t: Timeline,
  resource: BudgetResource,
  amount: number,
  meter: "session" | "task" = "session",
) {
  t.push({ kind: "human.budget_extended", resource, amount, meter, by: "tester" });
}

const sessionHint = '`reins budget extend session:s <amount> --reason "..."`';

describe("budget guard", () => {
  describe("session tokens (500,000 by default)", () => {
    it.each([
      [399_999, "allow", false, undefined],
      [400_000, "warn", false, "budget_warning"],
      [400_001, "warn", false, "budget_warning"],
      [449_999, "warn", false, "budget_warning"],
      [450_000, "warn", true, "budget_confirmation"],
      [450_001, "warn", true, "budget_confirmation"],
      [499_999, "warn", true, "budget_confirmation"],
      [500_000, "block", true, "budget_paused"],
      [500_001, "block", true, "budget_paused"],
    ] as const)("answers a first spend of %i tokens with %s", (tokens, verdict, needsHuman, alert) => {
      const decision = spendOnce({ inputTokens: tokens });
      expect(decision.verdict).toBe(verdict);
      expect(decision.needsHuman).toBe(needsHuman);
      expect(decision.alerts.map((a) => a.kind)).toEqual(alert === undefined ? [] : [alert]);
    });

    it("counts input, output and cache-write tokens but not cache reads by default", () => {
      const s = drive();
      s.step((t) =>
        t.usage({ inputTokens: 100, outputTokens: 50, cacheWriteTokens: 25, cacheReadTokens: 1_000 }),
      );
      expect(s.state.budget.session.spent.tokens).toBe(175);
      const counting = drive({ budget: { countCacheReads: true } });
      counting.step((t) => t.usage({ inputTokens: 100, cacheReadTokens: 1_000 }));
      expect(counting.state.budget.session.spent.tokens).toBe(1_100);
    });

    it("warns once at 80% and says how much of the budget is used", () => {
      const s = drive();
      expect(s.step((t) => t.usage({ inputTokens: 399_500 })).verdict).toBe("allow");
      const warning = s.step((t) => t.usage({ inputTokens: 500 }));
      expect(warning.verdict).toBe("warn");
      expect(warning.needsHuman).toBe(false);
      expect(warning.instructions).toEqual([
        "The session has used 80% of its token budget (400,000 tokens of 500,000 tokens). Finish the current step with as few tokens as possible.",
      ]);
      expect(s.state.budget.session.fired.tokens).toBe(LEVEL.warn);

      expect(s.step((t) => t.usage({ inputTokens: 1_000 })).verdict).toBe("allow");
      expect(s.step((t) => request(t)).verdict).toBe("allow");
    });

    it("asks a human once at 90%", () => {
      const s = drive();
      s.step((t) => t.usage({ inputTokens: 400_000 }));
      expect(s.step((t) => t.usage({ inputTokens: 49_999 })).verdict).toBe("allow");
      const ask = s.step((t) => t.usage({ inputTokens: 1 }));
      expect(ask.verdict).toBe("warn");
      expect(ask.needsHuman).toBe(true);
      expect(ask.alerts.map((a) => a.kind)).toEqual(["budget_confirmation"]);
      expect(ask.instructions[0]).toBe(
        "The session has used 90% of its token budget (450,000 tokens of 500,000 tokens). A person must confirm before work goes on.",
      );

      const after = s.step((t) => t.usage({ inputTokens: 1 }));
      expect(after.verdict).toBe("allow");
      expect(after.needsHuman).toBe(false);
    });

    it("pauses at 100%: blocks, asks a human and names the command that extends the budget", () => {
      const s = drive();
      s.step((t) => t.usage({ inputTokens: 450_000 }));
      expect(s.step((t) => t.usage({ inputTokens: 49_999 })).verdict).toBe("allow");
      const pause = s.step((t) => t.usage({ inputTokens: 1 }));
      expect(pause.verdict).toBe("block");
      expect(pause.needsHuman).toBe(true);
      expect(pause.alerts.map((a) => a.kind)).toEqual(["budget_paused"]);
      expect(pause.instructions).toEqual([
        `The session has used 100% of its token budget (500,000 tokens of 500,000 tokens). Work is paused until a person extends it with ${sessionHint}.`,
      ]);
      expect(s.state.budget.session.paused).toBe("tokens");
      expect(s.state.budget.session.fired.tokens).toBe(LEVEL.pause);
    });

    it("blocks every spending event while paused, but not a completion claim or a report", () => {
      const s = drive();
      s.step((t) => t.usage({ inputTokens: 500_000 }));

      const blocked = s.step((t) => request(t));
      expect(blocked.verdict).toBe("block");
      expect(blocked.needsHuman).toBe(true);
      expect(blocked.alerts).toEqual([]);
      expect(blocked.instructions).toEqual([
        `The session budget is paused: 500,000 tokens used of 500,000 tokens. Stop and wait until a person extends it with ${sessionHint}.`,
      ]);
      expect(s.step((t) => t.startTask("t1")).verdict).toBe("block");
      expect(s.step((t) => t.usage({ outputTokens: 10 })).verdict).toBe("block");

      const others = s.steps((t) => t.claim("task").verify("tests", true).iteration("success"));
      expect(others.map((d) => d.verdict)).toEqual(["allow", "allow", "allow"]);
    });

    it("short-circuits the default pipeline when it pauses", () => {
      const s = drive({ budget: { session: { tokens: 1_000 } } }, pipeline(defaultGuards));
      s.step((t) => t.usage({ inputTokens: 1_000 }));
      const blocked = s.step((t) => t.call("Bash", { command: "npm test" }, { command: "npm test" }, null));
      expect(blocked.verdict).toBe("block");
      expect(blocked.results.map((r) => r.guard)).toEqual([
        "self-protection",
        "max-iterations",
        "pricing",
        "budget",
      ]);
      const claim = s.step((t) => t.claim("session"));
      expect(claim.results.find((r) => r.guard === "budget")?.verdict).toBe("allow");
    });
  });

  describe("soft mode", () => {
    it("warns at 100% and never pauses", () => {
      const s = drive({ budget: { mode: "soft", session: { tokens: 1_000 } } });
      const spent = s.step((t) => t.usage({ inputTokens: 1_000 }));
      expect(spent.verdict).toBe("warn");
      expect(spent.needsHuman).toBe(true);
      expect(spent.instructions).toEqual([
        "The session has used 100% of its token budget (1,000 tokens of 1,000 tokens). The budget is spent; soft mode lets work go on.",
      ]);
      expect(s.state.budget.session.paused).toBeNull();

      const later = s.steps((t) => {
        t.usage({ inputTokens: 5_000 });
        request(t);
        t.startTask("t1");
      });
      expect(later.map((d) => d.verdict)).toEqual(["allow", "allow", "allow"]);
    });
  });

  describe("human extensions", () => {
    const small = { budget: { session: { tokens: 1_000 } } };

    it("un-pause the budget and re-arm the thresholds above the new utilisation", () => {
      const s = drive(small);
      expect(s.step((t) => t.usage({ inputTokens: 1_000 })).verdict).toBe("block");
      const extension = s.step((t) => t.extend("tokens", 1_000));
      expect(extension.verdict).toBe("allow");
      expect(s.state.budget.session.paused).toBeNull();
      expect(s.state.budget.session.fired.tokens).toBe(LEVEL.none);

      expect(s.step((t) => request(t)).verdict).toBe("allow");
      expect(s.step((t) => t.usage({ inputTokens: 599 })).verdict).toBe("allow");
      const warning = s.step((t) => t.usage({ inputTokens: 1 }));
      expect(warning.verdict).toBe("warn");
      expect(warning.instructions[0]).toContain("(1,600 tokens of 2,000 tokens)");
      expect(s.step((t) => t.usage({ inputTokens: 400 })).verdict).toBe("block");
    });

    it("keep the thresholds the utilisation still reaches fired", () => {
      const s = drive(small);
      s.step((t) => t.usage({ inputTokens: 1_000 }));
      s.step((t) => t.extend("tokens", 200));
      // 1,000 of 1,200 is 83%: the warning stays fired, the question to a human is armed again.
      expect(s.state.budget.session.fired.tokens).toBe(LEVEL.warn);
      expect(s.step((t) => request(t)).verdict).toBe("allow");
      expect(s.step((t) => t.usage({ inputTokens: 79 })).verdict).toBe("allow");
      const ask = s.step((t) => t.usage({ inputTokens: 1 }));
      expect(ask.verdict).toBe("warn");
      expect(ask.needsHuman).toBe(true);
    });

    it("too small to get below the limit leave the budget paused", () => {
      const s = drive(small);
      s.step((t) => t.usage({ inputTokens: 1_500 }));
      s.step((t) => t.extend("tokens", 400));
      expect(s.state.budget.session.paused).toBe("tokens");
      const blocked = s.step((t) => request(t));
      expect(blocked.verdict).toBe("block");
      expect(blocked.instructions[0]).toContain("1,500 tokens used of 1,400 tokens");
    });

    it("of another resource leave a paused budget paused", () => {
      const s = drive({ budget: { session: { tokens: 1_000, usd: 10 } } });
      s.step((t) => t.usage({ inputTokens: 1_000 }));
      s.step((t) => t.extend("usd", 10));
      expect(s.step((t) => request(t)).verdict).toBe("block");
    });

    it("of a task's meter un-pause that task", () => {
      const s = drive({ budget: { task: { tokens: 1_000 } } });
      s.step((t) => t.startTask("t1"));
      expect(s.step((t) => t.usage({ inputTokens: 1_000 })).verdict).toBe("block");
      s.step((t) => extend(t, "tokens", 500, "session"));
      expect(s.step((t) => request(t)).verdict).toBe("block");
      s.step((t) => extend(t, "tokens", 500, "task"));
      expect(s.state.budget.tasks.t1?.paused).toBeNull();
      expect(s.step((t) => request(t)).verdict).toBe("allow");
    });
  });

  describe("task budgets", () => {
    it("warns at 80% of the default 100,000-token task budget, naming the task", () => {
      const s = drive();
      s.step((t) => t.startTask("t1"));
      expect(s.step((t) => t.usage({ inputTokens: 79_999 })).verdict).toBe("allow");
      const warning = s.step((t) => t.usage({ inputTokens: 1 }));
      expect(warning.verdict).toBe("warn");
      expect(warning.instructions).toEqual([
        'The task "t1" has used 80% of its token budget (80,000 tokens of 100,000 tokens). Finish the current step with as few tokens as possible.',
      ]);
      expect(s.state.budget.tasks.t1?.fired.tokens).toBe(LEVEL.warn);
      expect(s.state.budget.session.fired.tokens).toBeUndefined();
    });

    it.each([
      ["planning", 50_000],
      ["implement", 100_000],
      ["review", 30_000],
      ["test", 50_000],
      ["deploy", 20_000],
      ["design", 50_000],
    ])("pauses a %s task at its default budget of %i tokens", (type, limit) => {
      const below = drive();
      below.step((t) => t.startTask("t1", type));
      expect(below.step((t) => t.usage({ inputTokens: limit - 1 })).verdict).not.toBe("block");

      const at = drive();
      at.step((t) => t.startTask("t1", type));
      const pause = at.step((t) => t.usage({ inputTokens: limit }));
      expect(pause.verdict).toBe("block");
      expect(at.state.budget.tasks.t1?.paused).toBe("tokens");
    });

    it("warns, asks and pauses a review task at 80%, 90% and 100% of 30,000 tokens", () => {
      const s = drive();
      s.step((t) => t.startTask("r1", "review"));
      expect(s.step((t) => t.usage({ inputTokens: 23_999 })).verdict).toBe("allow");
      const warning = s.step((t) => t.usage({ inputTokens: 1 }));
      expect(warning.verdict).toBe("warn");
      expect(warning.instructions[0]).toContain(
        'The task "r1" has used 80% of its token budget (24,000 tokens of 30,000 tokens)',
      );
      expect(s.step((t) => t.usage({ inputTokens: 2_999 })).verdict).toBe("allow");
      const ask = s.step((t) => t.usage({ inputTokens: 1 }));
      expect([ask.verdict, ask.needsHuman]).toEqual(["warn", true]);
      expect(s.step((t) => t.usage({ inputTokens: 2_999 })).verdict).toBe("allow");
      const pause = s.step((t) => t.usage({ inputTokens: 1 }));
      expect([pause.verdict, pause.needsHuman]).toEqual(["block", true]);
      expect(pause.instructions[0]).toContain(
        '(30,000 tokens of 30,000 tokens). Work is paused until a person extends it with `reins budget extend session:s --task <amount> --reason "..."`.',
      );
      const blocked = s.step((t) => request(t));
      expect(blocked.instructions[0]).toMatch(
        /^The task "r1" budget is paused: 30,000 tokens used of 30,000/,
      );
    });

    it("uses the policy's task types, and the task budget for a type it does not list", () => {
      const s = drive({ budget: { task: { tokens: 2_000 }, taskTypes: { review: 1_000 } } });
      s.step((t) => t.startTask("r1", "review"));
      expect(s.step((t) => t.usage({ inputTokens: 1_000 })).verdict).toBe("block");

      const other = drive({ budget: { task: { tokens: 2_000 }, taskTypes: { review: 1_000 } } });
      other.step((t) => t.startTask("x1", "triage"));
      expect(other.step((t) => t.usage({ inputTokens: 1_999 })).verdict).toBe("warn");
      expect(other.step((t) => t.usage({ inputTokens: 1 })).verdict).toBe("block");
    });

    it("blocks only the paused task's work, not another task's", () => {
      const s = drive({ budget: { task: { tokens: 1_000 } } });
      s.step((t) => t.startTask("t1"));
      s.step((t) => t.usage({ inputTokens: 1_000 }));
      expect(s.step((t) => request(t)).verdict).toBe("block");
      expect(s.step((t) => t.startTask("t2")).verdict).toBe("allow");
      expect(s.step((t) => request(t)).verdict).toBe("allow");
      expect(s.state.budget.session.spent.tokens).toBe(1_000);
      expect(s.state.budget.tasks.t2?.spent.tokens).toBe(0);
    });

    it("charges the session and the task, and pauses on whichever runs out first", () => {
      const s = drive({ budget: { session: { tokens: 1_500 }, task: { tokens: 1_000 } } });
      s.step((t) => t.startTask("t1"));
      s.step((t) => t.usage({ inputTokens: 900 }));
      s.step((t) => t.startTask("t2"));
      const pause = s.step((t) => t.usage({ inputTokens: 600 }));
      expect(pause.verdict).toBe("block");
      expect(pause.instructions[0]).toMatch(/^The session has used 100% of its token budget/);
      expect(s.state.budget.session.paused).toBe("tokens");
      expect(s.state.budget.tasks.t2?.paused).toBeNull();
    });
  });

  describe("other resources", () => {
    it.each([
      [0.79, "allow", false],
      [0.8, "warn", false],
      [0.9, "warn", true],
      [1, "block", true],
    ] as const)("answers a first spend of $%d of a $1 budget with %s", (costUsd, verdict, needsHuman) => {
      const decision = spendOnce({ costUsd }, { budget: { session: { usd: 1 } } });
      expect([decision.verdict, decision.needsHuman]).toEqual([verdict, needsHuman]);
    });

    it("names US dollars in its messages", () => {
      const decision = spendOnce({ costUsd: 0.8 }, { budget: { session: { usd: 1 } } });
      expect(decision.instructions[0]).toBe(
        "The session has used 80% of its USD budget ($0.80 of $1.00). Finish the current step with as few tokens as possible.",
      );
    });

    it("limits premium requests: 7 of 10 allowed, 8 warns, 9 asks, 10 pauses", () => {
      const s = drive({ budget: { session: { premiumRequests: 10 } } });
      const decisions = s.steps((t) => {
        for (let i = 0; i < 10; i++) t.usage({ premiumRequests: 1 });
      });
      expect(decisions.map((d) => d.verdict)).toEqual([...Array(7).fill("allow"), "warn", "warn", "block"]);
      expect(decisions.map((d) => d.needsHuman)).toEqual([...Array(8).fill(false), true, true]);
      expect(decisions[9]?.instructions[0]).toBe(
        'The session has used 100% of its premium request budget (10 premium requests of 10 premium requests). Work is paused until a person extends it with `reins budget extend session:s <amount> --resource premiumRequests --reason "..."`.',
      );
    });

    it("limits tool calls: the 8th request warns, the 9th asks, the 10th pauses", () => {
      const s = drive({ budget: { session: { toolCalls: 10 } } });
      const decisions = s.steps((t) => {
        for (let i = 0; i < 11; i++) request(t, i);
      });
      expect(decisions.map((d) => d.verdict)).toEqual([
        ...Array(7).fill("allow"),
        "warn",
        "warn",
        "block",
        "block",
      ]);
      expect(decisions[7]?.instructions[0]).toContain("(8 tool calls of 10 tool calls)");
      expect(decisions[10]?.instructions[0]).toMatch(
        /^The session budget is paused: 11 tool calls used of 10/,
      );
    });

    it("limits a task's tool calls separately from the session's", () => {
      const s = drive({ budget: { task: { toolCalls: 2 } } });
      s.step((t) => t.startTask("t1"));
      expect(s.steps((t) => request(request(t, 1), 2)).map((d) => d.verdict)).toEqual(["allow", "block"]);
      s.step((t) => t.startTask("t2"));
      expect(s.step((t) => request(t, 3)).verdict).toBe("allow");
    });

    it("limits wall time from the first event: 7.99 s of 10 s allowed, 8 s warns, 9 s asks, 10 s pauses", () => {
      const s = drive({ budget: { session: { wallTimeMs: 10_000 } } });
      const at = (ms: number) =>
        s.step((t) => {
          t.now = ms;
          request(t, ms);
        });
      s.step((t) => t.started());
      expect(at(7_999).verdict).toBe("allow");
      const warning = at(8_000);
      expect(warning.verdict).toBe("warn");
      expect(warning.instructions[0]).toBe(
        "The session has used 80% of its time budget (8s of 10s). Finish the current step with as few tokens as possible.",
      );
      expect(at(8_999).verdict).toBe("allow");
      expect([at(9_000).verdict, s.state.budget.session.fired.wallTimeMs]).toEqual(["warn", LEVEL.ask]);
      expect(at(9_999).verdict).toBe("allow");
      const pause = at(10_000);
      expect([pause.verdict, pause.needsHuman]).toEqual(["block", true]);
      expect(s.state.budget.session.paused).toBe("wallTimeMs");
    });

    it("measures a task's wall time from when the task started", () => {
      const s = drive({ budget: { task: { wallTimeMs: 10_000 } } });
      s.step((t) => t.started().wait(50_000).startTask("t1"));
      const start = s.state.budget.tasks.t1?.startedAt ?? NaN;
      expect(start).toBe(51_000);
      const at = (ms: number) =>
        s.step((t) => {
          t.now = start + ms;
          request(t, ms);
        });
      expect(at(7_999).verdict).toBe("allow");
      expect(at(8_000).instructions[0]).toContain(
        'The task "t1" has used 80% of its time budget (8s of 10s)',
      );
      expect(at(10_000).verdict).toBe("block");
    });

    it("fires each resource's thresholds once, independently of the others", () => {
      const s = drive({ budget: { session: { tokens: 1_000, usd: 1 } } });
      const first = s.step((t) => t.usage({ inputTokens: 800 }));
      expect(first.instructions).toHaveLength(1);
      expect(first.instructions[0]).toContain("token budget");
      const second = s.step((t) => t.usage({ costUsd: 0.8 }));
      expect(second.verdict).toBe("warn");
      expect(second.instructions[0]).toContain("USD budget");
      expect(s.state.budget.session.fired).toEqual({ tokens: LEVEL.warn, usd: LEVEL.warn });
    });
  });

  describe("human budget reset", () => {
    function reset(t: Timeline) {
      t.push({ kind: "human.budget_reset", by: "tester" });
    }

    it("clears spend, pause and fired thresholds, so they fire again", () => {
      const s = drive({ budget: { session: { tokens: 1_000 } } });
      s.step((t) => t.usage({ inputTokens: 1_000 }));
      expect(s.step((t) => request(t)).verdict).toBe("block");
      expect(s.step(reset).verdict).toBe("allow");
      expect(s.state.budget.session).toMatchObject({
        spent: { tokens: 0, usd: 0, premiumRequests: 0, toolCalls: 0 },
        fired: {},
        paused: null,
      });
      expect(s.step((t) => request(t)).verdict).toBe("allow");
      expect(s.step((t) => t.usage({ inputTokens: 800 })).verdict).toBe("warn");
    });

    it("restarts the session's wall time", () => {
      const s = drive({ budget: { session: { wallTimeMs: 10_000 } } });
      s.step((t) => t.started().wait(9_000));
      expect(s.step((t) => request(t)).verdict).toBe("block");
      s.step(reset);
      expect(s.step((t) => request(t)).verdict).toBe("allow");
    });

    it("keeps the current task's type, and with it its budget", () => {
      const s = drive();
      s.step((t) => t.startTask("r1", "review"));
      s.step((t) => t.usage({ inputTokens: 30_000 }));
      s.step(reset);
      expect(s.state.budget.tasks.r1?.taskType).toBe("review");
      const warning = s.step((t) => t.usage({ inputTokens: 24_000 }));
      expect(warning.verdict).toBe("warn");
      expect(warning.instructions[0]).toContain("(24,000 tokens of 30,000 tokens)");
    });
  });
});
