/** Tests of reading Codex CLI's `exec --json` output, on captured runs. */
import { describe, expect, it } from "vitest";
import { capturedRun, TIMED_OUT_NOTE } from "#test/agent-fixtures.js";
import { parseCodex } from "./codex.js";

/** Codex 0.169.0's `exec --json` events, captured against the scripted Responses API (test/fixtures/agents). */
const run = (name: string) => capturedRun(`codex-0.169.0-${name}`);

describe("parseCodex on captured runs", () => {
  it("reads a one-turn text answer: tokens are input (cached included) plus output", () => {
    const { raw, stderr } = run("text");
    expect(parseCodex(raw, 0, stderr)).toEqual({
      outcome: "ok",
      turns: 1,
      tokens: 120 + 7,
      costUsd: 0,
      summary: "Hello there.",
      sessionId: "01a2088d-d8cf-75e2-b371-f2dfbc73a9a1",
    });
  });

  it("counts a shell command then text as two turns", () => {
    expect(parseCodex(run("tool").raw, 0, "")).toMatchObject({
      outcome: "ok",
      turns: 2,
      tokens: 240 + 14,
      summary: "Wrote out.txt.",
    });
  });

  it("fails on a 400, with the API's message as summary", () => {
    const parsed = parseCodex(run("400").raw, 1, "");
    expect(parsed).toMatchObject({ outcome: "failed", turns: 0, tokens: 0 });
    expect(parsed.summary).toContain("bad request from fake");
  });

  it("calls a 429 past Codex's retries and a 500 transient", () => {
    expect(parseCodex(run("429").raw, 1, "")).toMatchObject({
      outcome: "transient",
      summary: "exceeded retry limit, last status: 429 Too Many Requests",
    });
    expect(parseCodex(run("500").raw, 1, "").outcome).toBe("transient");
  });

  it("calls a run killed while Codex reconnected transient, naming the reconnects", () => {
    const { raw, stderr } = run("refused");
    const parsed = parseCodex(raw, null, stderr + TIMED_OUT_NOTE);
    expect(parsed.outcome).toBe("transient");
    expect(parsed.summary).toMatch(/^codex was killed without a result/);
    expect(parsed.summary).toContain("Reconnecting... waiting for network");
    // Even with an exit code (a SIGTERM handled), its last error says it was the network.
    expect(parseCodex(raw, 1, stderr).outcome).toBe("transient");
  });

  it("pauses on a billing error", () => {
    const raw = run("429").raw.replaceAll(
      "exceeded retry limit, last status: 429 Too Many Requests",
      "Quota exceeded. Check your plan and billing details.",
    );
    expect(parseCodex(raw, 1, "").outcome).toBe("budget_paused");
  });

  it("fails a completed turn whose process still exited non-zero, and a run with no output", () => {
    expect(parseCodex(run("text").raw, 2, "panic").outcome).toBe("failed");
    expect(parseCodex("", 2, "error: unexpected argument '--foo'\n")).toMatchObject({
      outcome: "failed",
      sessionId: null,
    });
  });
});
