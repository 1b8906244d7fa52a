/** Tests of reading Claude Code's print-mode output, on captured runs. */
import { describe, expect, it } from "vitest";
import { capturedRun, TIMED_OUT_NOTE } from "#test/agent-fixtures.js";
import { parseClaude } from "./claude.js";

/** Claude Code 2.1.330's stream-json, captured against the scripted Messages API (test/fixtures/agents). */
const run = (name: string) => capturedRun(`claude-code-2.1.330-${name}`);

describe("parseClaude on captured runs", () => {
  it("reads a one-turn text answer: turns, tokens with cache, cost, text and session", () => {
    const { raw } = run("text");
    expect(parseClaude(raw, 0, "")).toEqual({
      outcome: "ok",
      turns: 1,
      tokens: 120 + 7 + 30 + 5,
      costUsd: 0.000651,
      summary: "Hello there.",
      sessionId: "58031cbc-bf08-4d6b-9dbb-691389c9fa64",
    });
  });

  it("reads a tool call then text as two turns with their summed usage", () => {
    const parsed = parseClaude(run("tool").raw, 0, "");
    expect(parsed).toMatchObject({ outcome: "ok", turns: 2, tokens: 240 + 14 + 60 + 10, costUsd: 0.001302 });
    expect(parsed.summary).toBe("Wrote out.txt.");
  });

  it.each([
    [
      "fails a run stopped by --max-turns, saying so",
      "maxturns",
      { outcome: "failed", turns: 2, tokens: 162, summary: "Reached maximum number of turns (1)" },
    ],
    [
      "pauses on --max-budget-usd spent, with the cost spent",
      "budget",
      { outcome: "budget_paused", costUsd: 10, summary: "Reached maximum budget ($0.01)" },
    ],
    [
      "fails on a 400 from the API (the same request would fail again)",
      "400",
      { outcome: "failed", tokens: 0, costUsd: 0, summary: "API Error: 400 bad request from fake" },
    ],
  ] as const)("%s", (_does, fixture, parsed) => {
    expect(parseClaude(run(fixture).raw, 1, "")).toMatchObject(parsed);
  });

  it("calls 429, 529 and a refused connection transient", () => {
    for (const name of ["429", "529", "refused"]) {
      expect(parseClaude(run(name).raw, 1, "").outcome, name).toBe("transient");
    }
    expect(parseClaude(run("refused").raw, 1, "").summary).toMatch(/Connection refused/);
  });

  it("calls a run reins timed out transient even when it printed a result", () => {
    expect(parseClaude(run("text").raw, null, TIMED_OUT_NOTE).outcome).toBe("transient");
  });

  it("pauses on a billing error from the API", () => {
    const raw = run("400").raw.replaceAll(
      "bad request from fake",
      "Your credit balance is too low to access the API",
    );
    expect(parseClaude(raw, 1, "").outcome).toBe("budget_paused");
  });
});

describe("parseClaude without a result line", () => {
  // The tool run cut before its result: what a kill mid-run leaves.
  const cut = run("tool")
    .raw.split("\n")
    .filter((line) => !line.includes('"type":"result"'))
    .join("\n");

  it("counts the assistant messages seen and calls a killed run transient", () => {
    const parsed = parseClaude(cut, null, TIMED_OUT_NOTE);
    expect(parsed).toMatchObject({
      outcome: "transient",
      turns: 2,
      sessionId: "45a80bf8-1276-42e6-8689-488ce279f747",
    });
    expect(parsed.tokens).toBeGreaterThan(0);
    expect(parsed.summary).toMatch(/^claude was killed without a result:\n\[reins\] timed out/);
  });

  it("fails a crash, and calls a connection error in stderr transient", () => {
    expect(parseClaude(cut, 1, "TypeError: x is undefined\n").outcome).toBe("failed");
    expect(parseClaude("", 1, "Error: connect ECONNREFUSED 127.0.0.1:443\n").outcome).toBe("transient");
  });

  it("fails when the program could not start", () => {
    const parsed = parseClaude("", 127, "[reins] cannot start claude: spawn claude ENOENT\n");
    expect(parsed).toEqual({
      outcome: "failed",
      turns: 0,
      tokens: 0,
      costUsd: 0,
      summary: "claude exited 127 without a result:\n[reins] cannot start claude: spawn claude ENOENT",
      sessionId: null,
    });
  });
});
