import { describe, expect, it } from "vitest";
import { parseCopilot } from "./copilot.js";

/** Copilot CLI 1.0.102's `--output-format json` lines (trimmed), and the usage line reins' wrapper adds. */
const line = (type: string, data: object = {}, extra: object = {}) =>
  JSON.stringify({ type, data, ...extra });
const usage = (input: number, output: number) =>
  JSON.stringify({
    type: "reins.copilot_usage",
    usage: { modelMetrics: { "gpt-4.1": { usage: { inputTokens: input, outputTokens: output } } } },
  });

const RUN = [
  line("user.message", { content: "Do the task." }),
  line("assistant.turn_start", { turnId: "0" }),
  line("assistant.message", { content: "", toolRequests: [{ name: "bash" }] }),
  line("tool.execution_complete", { success: true }),
  line("assistant.turn_start", { turnId: "1" }),
  line("assistant.message", { content: "Done: add is implemented." }),
  JSON.stringify({ type: "result", sessionId: "459b7fea", exitCode: 0, usage: { premiumRequests: 0 } }),
  "",
  usage(306, 27),
].join("\n");

describe("parseCopilot", () => {
  it("reads the outcome, turns, session and summary, and the tokens of the usage report", () => {
    expect(parseCopilot(RUN, 0, "")).toEqual({
      outcome: "ok",
      turns: 2,
      tokens: 333,
      costUsd: 0,
      summary: "Done: add is implemented.",
      sessionId: "459b7fea",
    });
  });

  it("is not ok without a result, and says how it ended", () => {
    const parsed = parseCopilot(RUN.split("\n").slice(0, 3).join("\n"), 1, "Error: connect ECONNREFUSED\n");
    expect(parsed.outcome).toBe("transient");
    expect(parsed.summary).toMatch(/^copilot exited 1 without a result/);
  });
});
