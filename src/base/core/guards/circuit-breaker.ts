/** The circuit-breaker guard: opens the breaker when the agent is stuck, holds calls while it is open. */
import { own } from "../capped.js";
import type { ReinsEvent, ToolRequested } from "../reins-event.js";
import { advise, deny, pass, quote, stop, type Guard, type GuardResult } from "../guard.js";
import type { Policy } from "../policy.js";
import type { TripReason } from "../breaker.js";
import type { State } from "../state.js";
import { callSignature } from "../keys.js";

const name = "circuit-breaker";
/** This guard's "nothing to say", made once: it is the answer to most events. */
const passed = pass(name);

/** Whether `count` has just reached `first`, or a further `every` past it: `first`, `first + every`, ... */
function reached(count: number, first: number, every: number): boolean {
  return count >= first && (count - first) % every === 0;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function callLabel(event: ToolRequested): string {
  return event.command !== undefined ? `${event.tool} call ${quote(event.command)}` : `${event.tool} call`;
}

/** Whether the last finished call with signature `sig` failed. */
function lastFailed(state: State, sig: string): boolean {
  for (let i = state.calls.recent.length - 1; i >= 0; i--) {
    const call = state.calls.recent[i];
    if (call !== undefined && call.sig === sig && call.out !== null) return call.failed;
  }
  return false;
}

/**
 * Identical calls with the same result. Failing the same way every time is evidence that the agent is stuck,
 * and trips the breaker; succeeding the same way is only advice (a status poll waits for its result to
 * change), so it gets a word at the threshold and then at each further multiple of it.
 */
function repeated(state: State, event: ToolRequested, policy: Policy): GuardResult | null {
  const tool = own(policy.loops.tools, event.tool);
  const duplicates = tool?.duplicateThreshold ?? policy.circuit.duplicateThreshold;
  const streak = state.calls.streak;
  if (tool?.exempt === true || streak < duplicates) return null;
  if (lastFailed(state, state.calls.sig))
    return trip(
      "duplicate_calls",
      `The same ${callLabel(event)} was made ${streak} times in a row, failing the same way each time`,
    );
  if (!reached(streak, duplicates, duplicates)) return null;
  return advise(
    name,
    `The same ${callLabel(event)} has been made ${streak} times in a row with the same result. If you are waiting for something, wait longer between calls; otherwise use the result you have.`,
  );
}

/** The same error text from the last failures in a row, with nothing succeeding between: the agent is stuck. */
function repeatedError(state: State, event: ReinsEvent, policy: Policy): GuardResult | null {
  if (event.kind !== "tool.completed" || event.outcome === "success") return null;
  if (own(policy.loops.tools, event.tool)?.exempt === true) return null;
  const streak = state.calls.errorStreak;
  if (streak < policy.loops.errorRepeatBlock) return null;
  return trip(
    "repeated_error",
    `The same error came back ${streak} times in a row (last from ${event.tool}), with nothing succeeding in between`,
  );
}

/**
 * A call reins denied on evidence of a loop (circular, loop-patterns) `deniedRetryThreshold` times, made
 * again with no write let through since: the agent is not heeding what it is told, and a person must look.
 * A rule of thumb's denials (calls per second, edits without a check, caps) do not count: they never stop.
 */
function ignoredDenials(state: State, event: ToolRequested, policy: Policy): GuardResult | null {
  const list = state.calls.denied;
  if (list === undefined || own(policy.loops.tools, event.tool)?.exempt === true) return null;
  const sig = callSignature(event);
  const denied = list.find((e) => e.sig === sig);
  if (denied === undefined || denied.count < policy.circuit.deniedRetryThreshold) return null;
  return trip(
    "ignored_denials",
    `The same ${callLabel(event)} was denied ${denied.count} times and made again, with no change let through in between`,
  );
}

/**
 * Rules of thumb, which never stop an agent alone (docs/architecture.md, "Guards"): a burst of calls is
 * denied (the agent goes on after its results), and a task with very many calls gets advice at each
 * further `maxCallsPerTask` calls.
 */
function ruleOfThumb(state: State, event: ToolRequested, policy: Policy): GuardResult | null {
  const rules = policy.circuit;
  const times = state.calls.times;
  const oldest = times[0];
  if (
    times.length >= rules.rapidFireThreshold &&
    oldest !== undefined &&
    event.at - oldest < rules.rapidFireWindowMs
  ) {
    return deny(
      name,
      `${times.length} tool calls came within ${Math.ceil((event.at - oldest) / 1000)} s (limit ${rules.rapidFireThreshold} per ${rules.rapidFireWindowMs / 1000} s). Slow down: wait for the results you have and read them before the next call.`,
    );
  }
  const calls = state.calls.taskCalls;
  const max = rules.maxCallsPerTask;
  if (reached(calls, max + 1, max)) {
    const task = state.calls.task === "" ? "This session" : `Task "${state.calls.task}"`;
    return advise(
      name,
      `${task} has made ${calls} tool calls, more than ${max}. If you are going round in circles, stop and rethink the approach; if the work is simply large, carry on.`,
    );
  }
  return null;
}

function trip(reason: TripReason, detail: string): GuardResult {
  return stop(
    name,
    `${detail}. The circuit breaker is now open: stop, explain what you were trying and why it is not working. A person must acknowledge before work goes on.`,
    { alert: "circuit_tripped", effects: [{ kind: "circuit.opened", reason, detail }] },
  );
}

function failedChecks(state: State, event: ReinsEvent, policy: Policy): GuardResult | null {
  if (
    event.kind !== "verification.ran" ||
    state.failedVerifications < policy.circuit.failedVerificationThreshold
  ) {
    return null;
  }
  return trip(
    "failed_verifications",
    `${event.name} failed ${state.failedVerifications} times in a row the same way, with nothing changed in between`,
  );
}

/**
 * Closed → open on evidence that the agent is stuck (by default: 5 identical consecutive calls failing the
 * same way, the same error 5 times in a row, or 3 failed verifications in a row with nothing improving).
 * Open blocks until a person acknowledges (half-open), which lets one probe call through; a good probe and a
 * quiet cooldown close it, another stuck call or a failed probe opens it again. Rules of thumb (by default
 * 40 calls within 10 s, more than 50 calls in a task) deny or advise and never open it.
 */
export const circuitBreaker: Guard = {
  name,
  order: 200,
  category: "progress-integrity",
  shortCircuit: true,
  grades: ["advise", "deny", "stop"],
  // Any other kind passes whatever the breaker's status: an open breaker holds calls and new tasks, a
  // half-open one judges its probe, and only calls, their results and checks are evidence of being stuck.
  answers: ["tool.requested", "task.started", "tool.completed", "verification.ran"],
  evaluate(state, event, policy) {
    const breaker = state.breaker;
    switch (breaker.status) {
      case "open":
        if (event.kind !== "tool.requested" && event.kind !== "task.started") return passed;
        return stop(
          name,
          `The circuit breaker is open (${lowerFirst(breaker.detail)}). Do not retry; a person must acknowledge it (\`reins circuit ack ${state.scope}\`).`,
        );
      case "half_open": {
        if (event.kind === "tool.completed" && event.outcome !== "success" && breaker.probe === "in_flight") {
          return trip(
            "probe_failed",
            `The probe call after the breaker was acknowledged failed (${event.tool})`,
          );
        }
        const failed = failedChecks(state, event, policy);
        if (failed !== null) return failed;
        if (event.kind !== "tool.requested") return passed;
        const found = repeated(state, event, policy);
        if (found?.grade === "stop") return found;
        if (breaker.probe === "none")
          return { guard: name, grade: "allow", effects: [{ kind: "circuit.probe" }] };
        if (breaker.probe === "in_flight") {
          return deny(
            name,
            "The circuit breaker is half-open and its one probe call has not finished yet. Wait for its result.",
          );
        }
        return passed;
      }
      case "closed": {
        const failed = failedChecks(state, event, policy) ?? repeatedError(state, event, policy);
        if (failed !== null) return failed;
        if (event.kind !== "tool.requested") return passed;
        const ignored = ignoredDenials(state, event, policy);
        if (ignored !== null) return ignored;
        const found = repeated(state, event, policy);
        if (found?.grade === "stop") return found;
        return ruleOfThumb(state, event, policy) ?? found ?? passed;
      }
    }
  },
};
