/** What a guard is: its grades, alerts and effects, the Guard interface, and builders of its results. */
import type { BudgetResource, EventKind, ReinsEvent } from "./reins-event.js";
import type { Grade } from "./grade.js";
import type { Policy } from "./policy.js";
import type { TripReason } from "./breaker.js";
import type { State } from "./state.js";

/**
 * What a decision records of an event (the stored and API word; a guard speaks in grades, grade.ts):
 * `warn` for advice, `block` for a deny or a stop.
 */
export type Verdict = "allow" | "warn" | "block";

/** The back-pressure categories of the seeds, in evaluation order. */
export type GuardCategory = "resource-limits" | "progress-integrity" | "quality-gates" | "tool-discipline";

/** Kinds of alert a decision can raise for the humans watching. */
export type AlertKind =
  | "budget_warning"
  | "budget_confirmation"
  | "budget_paused"
  | "spend_rate"
  | "circuit_tripped"
  | "churn_intervention"
  | "churn_halted"
  | "max_iterations"
  | "guard_failed";

/**
 * A state change a guard asks for. Guards never mutate the state; the engine applies these after the
 * pipeline, so a decision and the state it leaves behind come from one place.
 */
export type Effect =
  | { kind: "budget.fired"; meter: "session" | "task"; task: string; resource: BudgetResource; level: number }
  | { kind: "budget.paused"; meter: "session" | "task"; task: string; resource: BudgetResource }
  | { kind: "rate.fired"; window: number }
  | { kind: "circuit.opened"; reason: TripReason; detail: string }
  | { kind: "circuit.probe" }
  | { kind: "completion.refused" }
  | { kind: "completion.accepted" }
  | { kind: "pricing.noted"; model: string }
  | { kind: "protection.used" };

/** One guard's result for one event, in the grades it declares (see grade.ts). */
export interface GuardResult {
  guard: string;
  grade: Grade;
  /**
   * With a deny: the call waits for a person's confirmation instead of being refused outright (an agent
   * running without a person is refused it). Only a deny asks; on any other grade it is ignored.
   */
  ask?: boolean;
  /** For an advise, deny or stop: a plain sentence for the agent saying what happened and what to do instead. */
  message?: string;
  alert?: AlertKind;
  effects?: Effect[];
}

/** What may go with an answer besides its message. */
export interface Extra {
  alert?: AlertKind;
  effects?: Effect[];
}

/**
 * A pure check of one event against the state after it (see docs/architecture.md, "Guards"). Guards run in
 * `order`; a deny or stop from a guard with `shortCircuit` ends the pipeline. A guard that throws
 * becomes advice.
 */
export interface Guard {
  name: string;
  order: number;
  category: GuardCategory;
  shortCircuit: boolean;
  /**
   * The grades this guard may answer (see grade.ts). Only guards that see evidence of a stuck agent or a
   * spent budget may stop; a rule of thumb advises or denies.
   */
  grades: readonly Exclude<Grade, "allow">[];
  /**
   * The event kinds this guard may answer with anything but `pass(name)`. To every other kind it answers
   * `pass(name)`, so the engine takes that answer without asking it (the hot path asks each guard only
   * about the events it reads). Left out, the guard is asked about every event.
   */
  answers?: readonly EventKind[];
  evaluate(state: State, event: ReinsEvent, policy: Policy): GuardResult;
}

const passes = new Map<string, GuardResult>();

/** The shared "nothing to say" result of a guard: one frozen object per name. */
export function pass(guard: string): GuardResult {
  let result = passes.get(guard);
  if (result === undefined) {
    result = Object.freeze({ guard, grade: "allow" });
    passes.set(guard, result);
  }
  return result;
}

/** Advice with its message for the agent: the call goes ahead. */
export function advise(guard: string, message: string, extra: Extra = {}): GuardResult {
  return { guard, grade: "advise", message, ...extra };
}

/**
 * A deny with its corrective instruction for the agent: this call does not run, the agent goes on. With
 * `ask`, the call waits for a person's confirmation instead.
 */
export function deny(guard: string, message: string, extra: Extra & { ask?: boolean } = {}): GuardResult {
  return { guard, grade: "deny", message, ...extra };
}

/** A stop with its instruction for the agent: nothing goes on until a person acts. */
export function stop(guard: string, message: string, extra: Extra = {}): GuardResult {
  return { guard, grade: "stop", message, ...extra };
}

/** Says "N times" in words a person reads easily. */
export function times(n: number): string {
  return n === 1 ? "once" : n === 2 ? "twice" : `${n} times`;
}

/** Quotes agent-provided text for a message: backticks, one line, cut to a readable length. */
export function quote(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return `\`${line.length > 120 ? `${line.slice(0, 117)}...` : line}\``;
}
