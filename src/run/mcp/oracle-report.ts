/** The oracle in a verify (README, "Oracle"): asks the reviewer and turns its outcome into findings. */
import type { ReviewInput } from "../oracle/prompt.js";
import { review, type ReviewOutcome } from "../oracle/review.js";
import type { Finding, McpContext } from "./context.js";

/** The oracle's part of a verdict (README, "Oracle"). */
export interface OracleReport {
  /** `claude:haiku`, `openai:gpt-5-mini`. */
  reviewer: string;
  /** `failed`: it could not review (timeout, bad answer, HTTP error), so the checks alone decided. */
  outcome: ReviewOutcome["kind"];
  /** The reviewer's confidence; null when it failed. */
  confidence: number | null;
  /** Its summary, or why it could not review. */
  summary: string;
}

/**
 * The oracle's findings and report: a veto is one finding per reason (`check: "oracle"`); a failed review is
 * one finding saying so, which does not change the verdict.
 */
function oracleFindings(outcome: ReviewOutcome): { findings: Finding[]; report: OracleReport } {
  const finding = (message: string): Finding => ({ check: "oracle", message, failedTests: [], output: "" });
  if (outcome.kind === "failed")
    return {
      findings: [
        finding(`oracle ${outcome.reviewer} could not review, so the checks alone decide: ${outcome.reason}`),
      ],
      report: { reviewer: outcome.reviewer, outcome: "failed", confidence: null, summary: outcome.reason },
    };
  const { verdict } = outcome;
  const reasons = verdict.findings.length > 0 ? verdict.findings : [verdict.summary || "no reason given"];
  return {
    findings:
      outcome.kind === "vetoed" ? reasons.map((r) => finding(`oracle ${outcome.reviewer} vetoed: ${r}`)) : [],
    report: {
      reviewer: outcome.reviewer,
      outcome: outcome.kind,
      confidence: verdict.confidence,
      summary: verdict.summary,
    },
  };
}

/**
 * Asks the reviewer the policy names (or `ctx.review`, in tests) about a verify whose checks passed. A veto
 * becomes findings; a failed review becomes one finding that changes nothing. Never rejects.
 */
export async function askOracle(
  ctx: McpContext,
  input: ReviewInput,
  signal: AbortSignal | undefined,
): Promise<{ findings: Finding[]; report: OracleReport }> {
  const outcome = await (ctx.review ?? review)(
    ctx.policy.oracle,
    input,
    signal !== undefined ? { signal } : {},
  );
  return oracleFindings(outcome);
}

/** A sentence on the oracle for a passing verdict's summary; "" when it was not asked. */
export function oracleNote(report: OracleReport | null): string {
  if (report === null || report.outcome === "vetoed") return "";
  return report.outcome === "approved"
    ? ` The oracle (${report.reviewer}) did not veto.`
    : ` The oracle (${report.reviewer}) could not review; the checks decided.`;
}
