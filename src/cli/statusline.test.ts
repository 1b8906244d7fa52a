import { describe, expect, it } from "vitest";
import type { ScopeSummary } from "../base/core/summary.js";
import { statuslineText } from "./statusline.js";

/** The line Claude Code shows under the prompt, from what the store says of the session. */

const summary = (over: Partial<ScopeSummary> = {}): ScopeSummary => ({
  scope: "session:s",
  agent: "claude",
  events: 4,
  startedAt: 1,
  lastAt: 2,
  ended: false,
  status: "active",
  budget: [{ resource: "tokens", used: 12_345, limit: 500_000, ratio: 12_345 / 500_000 }],
  task: null,
  breaker: { status: "closed", reason: null, detail: null, openedAt: null, trips: 0 },
  ...over,
});

describe("the status line", () => {
  it("shows the session's tokens against its budget and the breaker", () => {
    expect(statuslineText({ summary: summary() })).toBe("reins · 12.3k/500k tokens (2%) · breaker closed");
  });

  it("shows Claude Code's cost when the policy sets no dollar budget, else the dollars against it", () => {
    expect(statuslineText({ summary: summary(), costUsd: 0.4213 })).toBe(
      "reins · 12.3k/500k tokens (2%) · $0.42 · breaker closed",
    );
    const usd = summary({
      budget: [{ resource: "usd", used: 2.5, limit: 5, ratio: 0.5 }],
    });
    expect(statuslineText({ summary: usd, costUsd: 9 })).toBe("reins · $2.50/$5.00 · breaker closed");
  });

  it("says an open breaker and a paused budget in capitals", () => {
    const stuck = summary({
      status: "paused",
      breaker: { status: "open", reason: "duplicate_calls", detail: "x", openedAt: 1, trips: 1 },
    });
    expect(statuslineText({ summary: stuck })).toBe(
      "reins · 12.3k/500k tokens (2%) · budget PAUSED · breaker OPEN",
    );
    const probing = summary({
      breaker: { status: "half_open", reason: "duplicate_calls", detail: null, openedAt: 1, trips: 1 },
    });
    expect(statuslineText({ summary: probing })).toContain("breaker HALF-OPEN");
  });

  it("names the task a reins run drives, and says when the agent is not contained", () => {
    expect(
      statuslineText({ summary: summary(), task: { id: "t2", attempt: "2", mode: "fix" }, contained: false }),
    ).toBe("reins · 12.3k/500k tokens (2%) · breaker closed · task t2 (attempt 2, fix) · NOT CONTAINED");
  });

  it("says when nothing is recorded yet, and when the folder is in no project", () => {
    expect(statuslineText({ summary: null })).toBe("reins · guarding, nothing recorded yet");
    expect(statuslineText({ summary: null, unguarded: true })).toBe(
      "reins: not guarding (no git repository here)",
    );
  });
});
