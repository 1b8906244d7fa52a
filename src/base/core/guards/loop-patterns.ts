/** The loop-patterns guard: alternating calls, near-identical calls and a repeating error. */
import { own } from "../capped.js";
import { advise, deny, pass, quote, type Guard, type GuardResult } from "../guard.js";
import type { Policy } from "../policy.js";
import type { RecentCall, State } from "../state.js";

const name = "loop-patterns";
/** This guard's "nothing to say", made once: it is the answer to most events. */
const passed = pass(name);

/** True when the finished calls among `calls` produced more than one distinct output: that is progress. */
function changed(calls: RecentCall[]): boolean {
  let seen: string | null = null;
  for (const call of calls) {
    if (call.out === null || call.out === "") continue;
    if (seen === null) seen = call.out;
    else if (call.out !== seen) return true;
  }
  return false;
}

/** A-B-A-B: the length of the alternating tail of the recent calls, current call included. */
function alternating(state: State, policy: Policy): GuardResult | null {
  const recent = state.calls.recent;
  const n = recent.length;
  const a = recent[n - 1];
  const b = recent[n - 2];
  if (a === undefined || b === undefined || a.sig === b.sig) return null;
  // An exempt tool's calls are never part of a loop, not even half of an A-B-A-B one.
  if (own(policy.loops.tools, b.tool)?.exempt === true) return null;
  let length = 2;
  while (length < n && recent[n - 1 - length]?.sig === (length % 2 === 0 ? a.sig : b.sig)) length += 1;
  const cycles = Math.floor(length / 2);
  const rules = policy.loops;
  if (cycles < rules.alternatingWarnCycles) return null;
  const tail = recent.slice(n - length, n - 1);
  if (changed(tail.filter((c) => c.sig === a.sig)) || changed(tail.filter((c) => c.sig === b.sig)))
    return null;
  const text = `You are alternating between the same two calls (${b.tool} ${quote(b.label)} and ${a.tool} ${quote(a.label)}), ${cycles} rounds so far, with the same results each time. Neither fix works: stop, compare the two outcomes and find the real cause.`;
  return cycles >= rules.alternatingBlockCycles ? deny(name, text) : advise(name, text);
}

/** "6th", "21st": the position of a call in a streak. */
function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th");
  return `${n}${suffix}`;
}

/** The same call with only noise changed (ids, counters, comments, temp paths), again and again, with the same result: denied. */
function nearIdentical(state: State, policy: Policy, tool: string): GuardResult | null {
  const recent = state.calls.recent;
  const last = recent[recent.length - 1];
  if (last === undefined) return null;
  const threshold =
    own(policy.loops.tools, tool)?.nearIdenticalThreshold ?? policy.loops.nearIdenticalThreshold;
  let length = 0;
  // Near-identical, not identical: at least two signatures among them (identical calls are the breaker's).
  let differs = false;
  for (let i = recent.length - 1; i >= 0 && recent[i]?.shape === last.shape; i--) {
    if ((recent[i]?.sig ?? "") !== last.sig) differs = true;
    length += 1;
  }
  if (length < threshold || !differs || changed(recent.slice(recent.length - length, -1))) return null;
  return deny(
    name,
    `This is the ${ordinal(length)} ${tool} call in a row that differs from the last only in details (ids, counters, comments, timestamps, temporary paths), and each gave the same result. It was not run: change the approach, not the details.`,
  );
}

/**
 * Loops the circuit breaker's identical-call count misses: alternating A-B-A-B calls, near-identical calls,
 * and the same error text repeating. Progress-aware: a repeat whose result changed is not a loop. Tools
 * marked `exempt` in the policy (a status poll, a scroll) may repeat.
 */
export const loopPatterns: Guard = {
  name,
  order: 230,
  category: "progress-integrity",
  shortCircuit: false,
  grades: ["advise", "deny"],
  answers: ["tool.requested", "tool.completed"],
  evaluate(state, event, policy) {
    if (event.kind !== "tool.requested" && event.kind !== "tool.completed") return passed;
    if (own(policy.loops.tools, event.tool)?.exempt === true) return passed;
    if (event.kind === "tool.completed") {
      const streak = state.calls.errorStreak;
      const rules = policy.loops;
      if (event.outcome === "success" || streak < rules.errorRepeatWarn) return passed;
      // At errorRepeatBlock the circuit breaker opens: the same failure again and again is a stuck agent.
      if (streak >= rules.errorRepeatBlock) return passed;
      return advise(
        name,
        `The same error came back ${streak} times in a row (last from ${event.tool}). Retrying will not change it: read the error, find its cause, and fix that.`,
      );
    }
    return alternating(state, policy) ?? nearIdentical(state, policy, event.tool) ?? passed;
  },
};
