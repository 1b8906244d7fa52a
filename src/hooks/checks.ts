import { pipelineOfLast, stripWrappers } from "./shell.js";
import { testSummary } from "./test-summary.js";

/**
 * Verification commands across ecosystems: which command line runs a check (tests, lint, build, typecheck)
 * by the policy's patterns (see core/check-patterns.ts), and whether it passed by the evidence of its exit
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

/**
 * Which check a command line runs, judged on its last pipeline (whose status is the line's): the first
 * stage, wrappers stripped, that a pattern matches, and that stage's index. Null when it runs none, or only
 * lists or describes (`pytest --collect-only`, `cargo test --no-run`, `--version`, `--help`).
 */
export function checkOf(
  command: string,
  patterns: readonly (readonly [RegExp, string])[],
): { name: string; stage: number } | null {
  const { stages } = pipelineOfLast(command);
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
 * otherwise (piped into `tail`, or no exit code) the test summary decides. No evidence gives null. `name` is
 * not needed yet: every kind of check is judged by the same evidence.
 */
export function checkResult(
  command: string,
  exitCode: number | undefined,
  output: string,
  _name: string,
  stage: number,
): { passed: boolean; failing?: number } | null {
  const { stages, pipefail } = pipelineOfLast(command);
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
