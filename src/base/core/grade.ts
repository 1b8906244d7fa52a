/** The grades of an answer (allow, advise, deny, stop) and how decisions and guards' answers map to them. */

/**
 * The three grades of an answer (docs/architecture.md, "Guards"), from the least to the most the agent is
 * held back:
 * - `advise`: context for the model; the call goes ahead.
 * - `deny`: this call does not run, with an instruction; the agent goes on (a person's confirmation asked
 *   for one call counts here too: an agent running without a person is refused it).
 * - `stop`: nothing goes on until a person acts (the breaker is open, the budget paused, a task halted).
 * A stop needs evidence that the agent is stuck or out of budget; rules of thumb advise or deny.
 */
export type Grade = "allow" | "advise" | "deny" | "stop";

/** The grades in order of severity. */
export const GRADES: readonly Grade[] = ["allow", "advise", "deny", "stop"];

/** The grade of a decision: a block a person must lift is a stop, any other block a deny. */
export function gradeOf(decision: { verdict: "allow" | "warn" | "block"; needsHuman: boolean }): Grade {
  if (decision.verdict === "block") return decision.needsHuman ? "stop" : "deny";
  if (decision.verdict === "warn") return decision.needsHuman ? "deny" : "advise";
  return "allow";
}

/**
 * `grade` held to the grades a guard declares: itself when declared, else the strongest declared grade below
 * it (an undeclared stop from a guard that may deny is a deny), else `allow`.
 */
export function heldGrade(grade: Grade, declared: readonly Grade[]): Grade {
  if (grade === "allow" || declared.includes(grade)) return grade;
  for (let i = GRADES.indexOf(grade) - 1; i > 0; i--) {
    const lower = GRADES[i];
    if (lower !== undefined && declared.includes(lower)) return lower;
  }
  return "allow";
}
