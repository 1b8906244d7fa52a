/** Tests of reading Gemini CLI's stream-json output, on captured runs. */
import { describe, expect, it } from "vitest";
import { capturedRun, TIMED_OUT_NOTE } from "#test/agent-fixtures.js";
import { parseGemini } from "./gemini.js";

/** Gemini CLI 0.61.0's stream-json, captured against the scripted Gemini API (test/fixtures/agents). */
const run = (name: string) => capturedRun(`gemini-cli-0.61.0-${name}`);

describe("parseGemini on captured runs", () => {
  it("reads a one-turn text answer: the streamed pieces joined, total tokens", () => {
    expect(parseGemini(run("text").raw, 0, "")).toEqual({
      outcome: "ok",
      turns: 1,
      tokens: 127,
      costUsd: 0,
      summary: "Hello there.",
      sessionId: "db563319-eee9-4ddd-b077-8b154049ce68",
    });
  });

  it.each([
    [
      "counts a shell command then text as two turns; the summary is the text after the tool",
      "tool", // no stderr
      { outcome: "ok", turns: 2, tokens: 254, summary: "Wrote out.txt." },
    ],
    [
      "is ok after a 429 that Gemini CLI retried itself",
      "429",
      { outcome: "ok", turns: 1, tokens: 110, summary: "done" },
    ],
  ] as const)("%s", (_does, fixture, parsed) => {
    const { raw, stderr } = run(fixture);
    expect(parseGemini(raw, 0, stderr)).toMatchObject(parsed);
  });

  it("fails on a 400, with the API's error as summary", () => {
    const { raw, stderr } = run("400");
    const parsed = parseGemini(raw, 144, stderr);
    expect(parsed).toMatchObject({ outcome: "failed", turns: 0, tokens: 0 });
    expect(parsed.summary).toContain("bad request from fake");
  });

  it("calls an error result about a 429 or 503 transient", () => {
    for (const [code, status] of [
      [429, "RESOURCE_EXHAUSTED"],
      [503, "UNAVAILABLE"],
    ] as const) {
      const raw = run("400")
        .raw.replace(/\\"code\\":400/, `\\"code\\":${code}`)
        .replace("INVALID_ARGUMENT", status);
      expect(parseGemini(raw, 1, "").outcome, status).toBe("transient");
    }
  });

  it("calls a run killed while Gemini CLI retried a refused connection transient", () => {
    const { raw, stderr } = run("refused");
    const parsed = parseGemini(raw, null, stderr + TIMED_OUT_NOTE);
    expect(parsed).toMatchObject({
      outcome: "transient",
      turns: 0,
      sessionId: "4dffae8b-a0d5-4528-9a01-3dbd8e1b2f8c",
    });
    expect(parsed.summary).toMatch(/^gemini was killed without a result/);
    // Exited on its own, its stderr still says the network failed.
    expect(parseGemini(raw, 1, stderr).outcome).toBe("transient");
  });

  it("fails a run refused before it began (an untrusted folder exits 55)", () => {
    const stderr =
      "Gemini CLI is not running in a trusted directory. To proceed, either use `--skip-trust`...\n";
    expect(parseGemini("", 55, stderr)).toMatchObject({ outcome: "failed", sessionId: null });
  });
});
