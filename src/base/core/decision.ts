/** A decision: what reins answers for one event, and how the guards' results combine into it. */
import { EMPTY } from "./empty.js";
import type { AlertKind, Effect, Verdict } from "./guard.js";

/**
 * One guard's result as a decision records it (stored, traced, served by the API): the guard's grade in
 * the decision's words (engine.ts maps them: advise is `warn`; deny is `block`, or `warn` with `needsHuman`
 * when it asks a person; stop is `block` with `needsHuman`).
 */
export interface GuardVerdict {
  guard: string;
  verdict: Verdict;
  /** A person must confirm before work goes on. */
  needsHuman?: boolean;
  message?: string;
  alert?: AlertKind;
  effects?: Effect[];
}

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
  results: readonly GuardVerdict[];
  /** Corrective instructions for the agent, most severe first. */
  instructions: readonly string[];
  alerts: readonly DecisionAlert[];
}

/**
 * The decision the results of one event's guards add up to: the most severe verdict, a person's
 * confirmation if any guard asks for it, the blocks' instructions before the warnings', and every alert.
 */
export function decisionOf(seq: number, results: readonly GuardVerdict[]): Decision {
  return decisionWith(seq, summed(results));
}

/** The decision of a list of results already added up (the engine keeps the sum beside its shared lists). */
export function decisionWith(seq: number, sum: Sum): Decision {
  return {
    seq,
    verdict: sum.verdict,
    needsHuman: sum.needsHuman,
    results: sum.results,
    instructions: sum.instructions,
    alerts: sum.alerts,
  };
}

/** What a list of results adds up to, apart from the event's place in the log. */
export interface Sum {
  /** The list added up. */
  results: readonly GuardVerdict[];
  verdict: Verdict;
  needsHuman: boolean;
  instructions: readonly string[];
  alerts: readonly DecisionAlert[];
  /** Whether any result asks for a change to the state. */
  effects: boolean;
}

/** The sum of `results`: added up once per frozen list (the lists decisions share), each time otherwise. */
export function summed(results: readonly GuardVerdict[]): Sum {
  return sums.get(results) ?? sumOf(results);
}

/** The sums of the frozen lists decisions share (see the engine's evaluate): added up once per list. */
const sums = new WeakMap<readonly GuardVerdict[], Sum>();

function sumOf(results: readonly GuardVerdict[]): Sum {
  let verdict: Verdict = "allow";
  let needsHuman = false;
  let messages = 0;
  let alerted = 0;
  let effects = false;
  // Indexed, not for-of: the lists are frozen, and for-of over frozen and ordinary lists allocates per step.
  for (let i = 0; i < results.length; i++) {
    const r = results[i]!;
    if (r.verdict === "block") verdict = "block";
    else if (r.verdict === "warn" && verdict === "allow") verdict = "warn";
    if (r.needsHuman === true) needsHuman = true;
    if (r.message !== undefined) messages += 1;
    if (r.alert !== undefined) alerted += 1;
    if (r.effects !== undefined) effects = true;
  }
  // Most events raise nothing: the lists are built only when a result has something for them.
  const sum: Sum = {
    results,
    verdict,
    needsHuman,
    instructions: messages > 0 ? instructionsOf(results) : EMPTY,
    alerts: alerted > 0 ? alertsOf(results) : EMPTY,
    effects,
  };
  if (Object.isFrozen(results)) {
    // Shared by every decision of this list: frozen like it.
    Object.freeze(sum.instructions);
    for (const alert of sum.alerts) Object.freeze(alert);
    Object.freeze(sum.alerts);
    sums.set(results, sum);
  }
  return sum;
}

/** Whether any of `results` asks for a change to the state. */
export function hasEffects(results: readonly GuardVerdict[]): boolean {
  const sum = sums.get(results);
  if (sum !== undefined) return sum.effects;
  for (let i = 0; i < results.length; i++) if (results[i]!.effects !== undefined) return true;
  return false;
}

/** The results' messages, the blocks' before the others'. */
function instructionsOf(results: readonly GuardVerdict[]): string[] {
  const instructions: string[] = [];
  for (const r of results) if (r.message !== undefined && r.verdict === "block") instructions.push(r.message);
  for (const r of results) if (r.message !== undefined && r.verdict !== "block") instructions.push(r.message);
  return instructions;
}

function alertsOf(results: readonly GuardVerdict[]): DecisionAlert[] {
  const alerts: DecisionAlert[] = [];
  for (const r of results)
    if (r.alert !== undefined) alerts.push({ kind: r.alert, guard: r.guard, message: r.message ?? r.guard });
  return alerts;
}
