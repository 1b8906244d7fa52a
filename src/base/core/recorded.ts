/** A guard's answer held to the grades it declares, and recorded in a decision's words (GuardVerdict). */
import type { GuardVerdict } from "./decision.js";
import { assertNever } from "./errors.js";
import { heldGrade, type Grade } from "./grade.js";
import type { Guard, GuardResult, Verdict } from "./guard.js";

const passes = new Map<string, GuardVerdict>();

/** A guard's `pass(name)` as a decision records it: one frozen object per name, shared by every decision. */
export function recordedPass(guard: string): GuardVerdict {
  let record = passes.get(guard);
  if (record === undefined) {
    record = Object.freeze({ guard, verdict: "allow" });
    passes.set(guard, record);
  }
  return record;
}

/**
 * The records of frozen results (a guard's own shared answers, like the completion gate's acceptance), made
 * once per result and guard, so the decisions that get them share one frozen record as they share the list.
 */
const frozen = new WeakMap<GuardResult, { by: Guard; record: GuardVerdict }>();

/**
 * `result` held to the grades `guard` declares (`Guard.grades`), in the words a decision records: a grade it
 * did not declare becomes the strongest declared one below it (a guard that may only deny cannot stop), and
 * an answer held down asks no person and, held down to allow, says nothing. Then advise is `warn`; deny is
 * `block`, or `warn` with `needsHuman` when it asks a person; stop is `block` with `needsHuman`.
 */
export function recorded(guard: Guard, result: GuardResult): GuardVerdict {
  if (!Object.isFrozen(result)) return recordOf(guard, result);
  const known = frozen.get(result);
  if (known !== undefined && known.by === guard) return known.record;
  const record = Object.freeze(recordOf(guard, result));
  frozen.set(result, { by: guard, record });
  return record;
}

function recordOf(guard: Guard, result: GuardResult): GuardVerdict {
  const grade = result.grade;
  const held = grade === "allow" ? grade : heldGrade(grade, guard.grades);
  if (held === "allow" && grade !== "allow") {
    return result.effects !== undefined
      ? { guard: result.guard, verdict: "allow", effects: result.effects }
      : { guard: result.guard, verdict: "allow" };
  }
  const asks = held === grade && grade === "deny" && result.ask === true;
  const record: GuardVerdict = { guard: result.guard, verdict: verdictOf(held, asks) };
  if (result.message !== undefined) record.message = result.message;
  if (held === "stop" || asks) record.needsHuman = true;
  if (result.alert !== undefined) record.alert = result.alert;
  if (result.effects !== undefined) record.effects = result.effects;
  return record;
}

/** The verdict a decision records for `grade` (`asks`: a deny that asks a person's confirmation). */
function verdictOf(grade: Grade, asks: boolean): Verdict {
  switch (grade) {
    case "allow":
      return "allow";
    case "advise":
      return "warn";
    case "deny":
      return asks ? "warn" : "block";
    case "stop":
      return "block";
    default:
      return assertNever(grade);
  }
}
