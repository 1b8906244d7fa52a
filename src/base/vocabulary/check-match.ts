/** Which shell commands are checks (tests, lint, build, typecheck), and whether one passed. */
import type { Policy } from "../core/policy.js";
import { pipelineOfLast, stripWrappers, type Pipeline } from "./shell.js";
import { testSummary } from "./test-summary.js";

/**
 * Verification commands across ecosystems: which command line runs a check (tests, lint, build, typecheck)
 * by the policy's patterns (see base/core/check-patterns.ts), and whether it passed by the evidence of its exit
 * code or its test summary.
 */

/** Flags with which a check command only lists, describes or builds, and verifies nothing. */
const NOT_RUNNING = new Set([
  "--collect-only",
  "--co",
  "--version",
  "--help",
  "--no-run",
  "--listTests",
  "--dry-run",
]);

/** Check patterns, compiled: each with the name of the check it finds. */
export type CheckPatterns = readonly (readonly [RegExp, string])[];

const compiled = new WeakMap<Policy, CheckPatterns>();

/** The policy's check patterns, compiled once per policy. */
export function checkPatterns(policy: Policy): CheckPatterns {
  let patterns = compiled.get(policy);
  if (patterns === undefined) {
    patterns = policy.checks.map((c) => [new RegExp(c.pattern), c.name] as const);
    compiled.set(policy, patterns);
  }
  return patterns;
}

/** A command line's last pipeline: `command` parsed, or given already parsed (by `pipelineOfLast`). */
const pipelineOf = (command: string | Pipeline) =>
  typeof command === "string" ? pipelineOfLast(command) : command;

/**
 * Which check a command line runs, judged on its last pipeline (whose status is the line's): the first
 * stage, wrappers stripped, that a pattern matches, and that stage's index. Null when it runs none, or only
 * lists or describes (`pytest --collect-only`, `cargo test --no-run`, `--version`, `--help`). A caller that
 * also needs `checkResult` parses the line once and passes the pipeline to both.
 */
export function checkOf(
  command: string | Pipeline,
  patterns: CheckPatterns,
): { name: string; stage: number } | null {
  const { stages } = pipelineOf(command);
  for (const [stage, { words }] of stages.entries()) {
    const stripped = stripWrappers(words);
    if (stripped.length === 0 || stripped.some((w) => NOT_RUNNING.has(w))) continue;
    const text = stripped.join(" ");
    for (const [pattern, name] of patterns) if (pattern.test(text)) return { name, stage };
  }
  return null;
}

/**
 * Whether a check passed, from evidence only. The exit code decides when it is the check's own (the check is
 * the last stage of its pipeline, or pipefail is set), with the failing count from the summary if any;
 * otherwise (piped into `tail`, or no exit code) the test summary decides. No evidence gives null. Every
 * kind of check is judged by the same evidence.
 */
export function checkResult(
  command: string | Pipeline,
  exitCode: number | undefined,
  output: string,
  stage: number,
): { passed: boolean; failing?: number } | null {
  const { stages, pipefail } = pipelineOf(command);
  const summary = testSummary(output);
  if (exitCode !== undefined && (stage === stages.length - 1 || pipefail)) {
    return summary === null
      ? { passed: exitCode === 0 }
      : { passed: exitCode === 0, failing: summary.failed };
  }
  if (summary === null) return null;
  if (summary.failed > 0) return { passed: false, failing: summary.failed };
  return summary.passed > 0 ? { passed: true, failing: 0 } : null;
}
