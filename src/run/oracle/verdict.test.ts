/** Tests of reading the reviewer model's verdict. */
import { describe, expect, it } from "vitest";
import { parseVerdict } from "./verdict.js";

const verdictOf = (text: string) => {
  const parsed = parseVerdict(text);
  if (parsed.kind !== "verdict") throw new Error(`unreadable: ${parsed.reason}`);
  return parsed.verdict;
};

describe("parseVerdict", () => {
  it("reads a verdict given as the whole answer", () => {
    expect(
      verdictOf('{"veto": true, "confidence": 0.8, "findings": ["add subtracts"], "summary": "wrong sign"}'),
    ).toEqual({ veto: true, confidence: 0.8, findings: ["add subtracts"], summary: "wrong sign" });
  });

  it("reads the verdict inside prose and a code fence", () => {
    const text =
      'Looking at the diff {not json}.\n```json\n{"veto": false, "confidence": 0.9, "findings": [], "summary": "meets the criteria"}\n```\nDone.';
    expect(verdictOf(text)).toEqual({
      veto: false,
      confidence: 0.9,
      findings: [],
      summary: "meets the criteria",
    });
  });

  it("takes the last verdict when the answer quotes an example first", () => {
    const text = 'Format: {"veto": true, "findings": ["x"]}. My verdict: {"veto": false, "summary": "fine"}';
    expect(verdictOf(text).veto).toBe(false);
  });

  it("fills in what is missing and clamps the confidence", () => {
    expect(verdictOf('{"veto": true}')).toEqual({ veto: true, confidence: 0.5, findings: [], summary: "" });
    expect(verdictOf('{"veto": false, "confidence": 7}').confidence).toBe(1);
    expect(verdictOf('{"veto": false, "confidence": -1}').confidence).toBe(0);
    expect(verdictOf('{"veto": false, "confidence": "high"}').confidence).toBe(0.5);
  });

  it("finds nothing in garbage, an empty answer, or a veto that is not a boolean", () => {
    for (const text of [
      "",
      "   ",
      "I think it is fine.",
      "{veto: true}",
      '{"veto": "true"}',
      '["veto", true]',
      "null",
      '{"veto": 1}',
    ])
      expect(parseVerdict(text).kind).toBe("unreadable");
    const parsed = parseVerdict("no json here");
    expect(parsed.kind === "unreadable" && parsed.reason).toMatch(/no JSON verdict.*no json here/);
  });

  it("keeps hostile findings to bounded single lines and ignores what is not a string", () => {
    const long = "x".repeat(5_000);
    const verdict = verdictOf(
      JSON.stringify({
        veto: true,
        findings: [
          "line one\nline two\u0000\u2028",
          { evil: 1 },
          42,
          long,
          ...Array.from({ length: 50 }, (_, i) => `f${i}`),
        ],
        summary: `a\r\nb${long}`,
        __proto__: { veto: false },
        constructor: "x",
      }),
    );
    expect(verdict.veto).toBe(true);
    expect(verdict.findings[0]).toBe("line one line two");
    expect(verdict.findings.length).toBe(20);
    expect(verdict.findings.every((f) => f.length <= 500 && !/[\n\r\u0000\u2028]/.test(f))).toBe(true);
    expect(verdict.summary.length).toBeLessThanOrEqual(1_000);
    expect(verdict.summary.startsWith("a b")).toBe(true);
  });

  it("reads the outer verdict, not a veto nested inside it", () => {
    expect(verdictOf('{"veto": false, "detail": {"veto": true}, "summary": "fine"}').veto).toBe(false);
  });

  it("stays fast on an answer of unclosed braces", () => {
    const started = performance.now();
    expect(parseVerdict("{".repeat(200_000)).kind).toBe("unreadable");
    expect(parseVerdict(`${'{"a":'.repeat(20_000)}`).kind).toBe("unreadable");
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
