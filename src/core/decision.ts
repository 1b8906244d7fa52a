/** A decision: what reins answers for one event, and how the guards' results combine into it. */
import type { AlertKind, GuardResult, Verdict } from "./guard.js";

/** An alert raised by a decision, for the humans watching. */
export interface DecisionAlert {
  kind: AlertKind;
  guard: string;
  message: string;
}

/** What reins answers for one event: the verdict, whether a person must confirm, and why. */
export interface Decision {
  /** Position of the event in its scope's log. */
  seq: number;
  verdict: Verdict;
  needsHuman: boolean;
  /** Every evaluated guard's result, in evaluation order. */
  results: GuardResult[];
  /** Corrective instructions for the agent, most severe first. */
  instructions: string[];
  alerts: DecisionAlert[];
}

/**
 * The decision the results of one event's guards add up to: the most severe verdict, a person's
 * confirmation if any guard asks for it, the blocks' instructions before the warnings', and every alert.
 */
export function decisionOf(seq: number, results: GuardResult[]): Decision {
  let verdict: Verdict = "allow";
  let needsHuman = false;
  let messages = 0;
  let alerted = 0;
  for (const r of results) {
    if (r.verdict === "block") verdict = "block";
    else if (r.verdict === "warn" && verdict === "allow") verdict = "warn";
    if (r.needsHuman === true) needsHuman = true;
    if (r.message !== undefined) messages += 1;
    if (r.alert !== undefined) alerted += 1;
  }
  // Most events raise nothing: the lists are built only when a result has something for them.
  const instructions: string[] = [];
  if (messages > 0) {
    for (const r of results)
      if (r.message !== undefined && r.verdict === "block") instructions.push(r.message);
    for (const r of results)
      if (r.message !== undefined && r.verdict !== "block") instructions.push(r.message);
  }
  const alerts: DecisionAlert[] = [];
  if (alerted > 0)
    for (const r of results)
      if (r.alert !== undefined)
        alerts.push({ kind: r.alert, guard: r.guard, message: r.message ?? r.guard });
  return { seq, verdict, needsHuman, results, instructions, alerts };
}
