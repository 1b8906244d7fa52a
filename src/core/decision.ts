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
  /**
   * Every evaluated guard's result, in evaluation order. Decisions may share these lists (most events
   * pass every guard the same way): read them, never change them.
   */
  results: readonly GuardResult[];
  /** Corrective instructions for the agent, most severe first. */
  instructions: readonly string[];
  alerts: readonly DecisionAlert[];
}

/** The lists of a decision with nothing to say: one frozen list shared by all of them. */
const NONE: readonly never[] = Object.freeze([]);

/**
 * The decision the results of one event's guards add up to: the most severe verdict, a person's
 * confirmation if any guard asks for it, the blocks' instructions before the warnings', and every alert.
 */
export function decisionOf(seq: number, results: readonly GuardResult[]): Decision {
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
  return {
    seq,
    verdict,
    needsHuman,
    results,
    instructions: messages > 0 ? instructionsOf(results) : NONE,
    alerts: alerted > 0 ? alertsOf(results) : NONE,
  };
}

/** The results' messages, the blocks' before the others'. */
function instructionsOf(results: readonly GuardResult[]): string[] {
  const instructions: string[] = [];
  for (const r of results) if (r.message !== undefined && r.verdict === "block") instructions.push(r.message);
  for (const r of results) if (r.message !== undefined && r.verdict !== "block") instructions.push(r.message);
  return instructions;
}

function alertsOf(results: readonly GuardResult[]): DecisionAlert[] {
  const alerts: DecisionAlert[] = [];
  for (const r of results)
    if (r.alert !== undefined) alerts.push({ kind: r.alert, guard: r.guard, message: r.message ?? r.guard });
  return alerts;
}
