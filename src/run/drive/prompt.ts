/** The prompt an agent gets for one iteration of one task. */
import type { CheckResult, PlanNode } from "../control/types.js";

/** What the prompt is built from; the spec sections' text is read by the shell beforehand. */
export interface PromptInput {
  task: PlanNode;
  /** The task's ancestors, outermost first: their titles and acceptance criteria frame the task. */
  ancestors: PlanNode[];
  mode: "implement" | "fix";
  attempt: number;
  /** The red checks, in fix mode. */
  failing: CheckResult[];
  /** The names of the checks the task must pass, with their commands. */
  checks: { name: string; command: string }[];
  /** The spec sections the task names, as text. */
  spec: { heading: string; text: string }[];
  /** Spec sections (`spec.md#Accounts > Sign up`) that changed since the task's work began. */
  specChanged?: string[];
  /** Corrective instructions from the guards since the last iteration. */
  instructions: string[];
}

/** Keeps the tail of a check's output: the end of a test run says what failed. */
function tail(text: string, max: number): string {
  return text.length <= max ? text : `[… ${text.length - max} characters cut]\n${text.slice(-max)}`;
}

/**
 * The prompt text. In fix mode it leads with the failing checks and says the only work allowed is making
 * them pass: no new features, no other task.
 */
export function buildPrompt(input: PromptInput): string {
  const { task } = input;
  const out: string[] = [];
  if (input.mode === "fix") {
    out.push(
      `FIX ONLY. The checks of task "${task.id}" (${task.title}) are red after your last change.`,
      "Make the failing checks below pass. Do not start new work, do not change what the task asks for, do not edit the checks to make them pass.",
      "",
    );
    for (const check of input.failing) {
      const tests =
        check.failedTests.length > 0 ? ` (failing: ${check.failedTests.slice(0, 20).join(", ")})` : "";
      out.push(
        `## Failing check: ${check.name}${tests}`,
        `exit code: ${check.exitCode ?? "killed (timeout)"}`,
        "```",
        tail(check.output, 4_000),
        "```",
        "",
      );
    }
  }
  out.push(`# Task ${task.id}: ${task.title}`);
  for (const parent of input.ancestors) out.push(`(part of ${parent.kind} ${parent.id}: ${parent.title})`);
  const acceptance = [...input.ancestors.flatMap((a) => a.acceptance), ...task.acceptance];
  if (task.acceptance.length > 0 || acceptance.length > 0) {
    out.push("", "## Acceptance criteria");
    for (const line of task.acceptance) out.push(`- ${line}`);
    for (const line of input.ancestors.flatMap((a) => a.acceptance)) out.push(`- (${line})`);
  }
  if (input.specChanged !== undefined && input.specChanged.length > 0) {
    out.push(
      "",
      "## The specification changed",
      "These sections changed since work on this task began; bring the work in line with them as they read now:",
      ...input.specChanged.map((s) => `- ${s}`),
    );
  }
  for (const section of input.spec) out.push("", `## Specification: ${section.heading}`, section.text.trim());
  if (input.checks.length > 0) {
    out.push(
      "",
      "## How it is checked",
      "reins runs these itself after you finish; the task is done only when all pass:",
    );
    for (const check of input.checks) out.push(`- ${check.name}: \`${check.command}\``);
  }
  if (input.instructions.length > 0) {
    out.push("", "## From the guards");
    for (const line of input.instructions) out.push(`- ${line}`);
  }
  out.push(
    "",
    input.mode === "fix"
      ? `This is attempt ${input.attempt}. Keep the change small and focused on the failures.`
      : "Work only on this task. Keep the change small. Do not commit: reins commits when the checks pass.",
  );
  return `${out.join("\n")}\n`;
}
