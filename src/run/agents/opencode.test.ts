import { describe, expect, it } from "vitest";
import { parseOpencode } from "./opencode.js";

/** opencode 1.18.33's `run --format json` lines (trimmed to the fields read). */
const event = (type: string, part: object = {}) => JSON.stringify({ type, sessionID: "ses_dcbc5ed7", part });
const finish = (reason: string, input: number, output: number, cacheRead = 0) =>
  event("step_finish", {
    reason,
    tokens: { total: input + output, input, output, reasoning: 0, cache: { write: 0, read: cacheRead } },
    cost: 0.001,
  });

const RUN = [
  event("step_start"),
  event("tool_use", { type: "tool", tool: "bash", state: { status: "completed", output: "hi\n" } }),
  finish("tool-calls", 100, 20),
  event("step_start"),
  event("text", { type: "text", text: "Done: add is implemented." }),
  finish("stop", 110, 10, 50),
].join("\n");

describe("parseOpencode", () => {
  it("reads the outcome, steps as turns, every step's tokens and cost, the session and the last text", () => {
    const parsed = parseOpencode(RUN, 0, "");
    expect(parsed).toMatchObject({
      outcome: "ok",
      turns: 2,
      tokens: 290,
      summary: "Done: add is implemented.",
      sessionId: "ses_dcbc5ed7",
    });
    expect(parsed.costUsd).toBeCloseTo(0.002);
  });

  it("classifies the session's error event", () => {
    const error = JSON.stringify({
      type: "error",
      sessionID: "ses_dcbc5ed7",
      error: { name: "APIError", data: { message: "Rate limit exceeded (429)" } },
    });
    const parsed = parseOpencode(`${event("step_start")}\n${error}`, 1, "");
    expect(parsed.outcome).toBe("transient");
    expect(parsed.summary).toBe("Rate limit exceeded (429)");
  });

  it("is not ok without a finished step, and says how it ended", () => {
    const parsed = parseOpencode(event("step_start"), 1, "Error: Model not found: fake/m2\n");
    expect(parsed.outcome).toBe("failed");
    expect(parsed.summary).toMatch(/^opencode exited 1 without a result:\nError: Model not found/);
    expect(parseOpencode(RUN, null, "[reins] timed out after 60000 ms: process group killed\n").outcome).toBe(
      "transient",
    );
  });
});
