import type { ReinsEvent, ToolRequested } from "../events.js";
import { block, pass, quote, type Guard, type GuardResult } from "../guard.js";
import type { Policy } from "../policy.js";
import type { State, TripReason } from "../state.js";

const name = "circuit-breaker";

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function callLabel(event: ToolRequested): string {
  return event.command !== undefined ? `${event.tool} call ${quote(event.command)}` : `${event.tool} call`;
}

/** The anomaly this call shows, if any: what trips a closed breaker and re-opens a half-open one. */
function anomaly(
  state: State,
  event: ToolRequested,
  policy: Policy,
): { reason: TripReason; detail: string } | null {
  const rules = policy.circuit;
  const tool = policy.loops.tools[event.tool];
  const duplicates = tool?.duplicateThreshold ?? rules.duplicateThreshold;
  if (tool?.exempt !== true && state.calls.streak >= duplicates) {
    return {
      reason: "duplicate_calls",
      detail: `The same ${callLabel(event)} was made ${state.calls.streak} times in a row with the same result`,
    };
  }
  const times = state.calls.times;
  const oldest = times[0];
  if (
    times.length >= rules.rapidFireThreshold &&
    oldest !== undefined &&
    event.at - oldest < rules.rapidFireWindowMs
  ) {
    return {
      reason: "rapid_fire",
      detail: `${times.length} tool calls came within ${Math.ceil((event.at - oldest) / 1000)} s (limit ${rules.rapidFireThreshold} per ${rules.rapidFireWindowMs / 1000} s)`,
    };
  }
  if (state.calls.taskCalls > rules.maxCallsPerTask) {
    const task = state.calls.task === "" ? "This session" : `Task "${state.calls.task}"`;
    return {
      reason: "max_calls_per_task",
      detail: `${task} has made ${state.calls.taskCalls} tool calls, more than the limit of ${rules.maxCallsPerTask}`,
    };
  }
  return null;
}

function trip(reason: TripReason, detail: string): GuardResult {
  return block(
    name,
    `${detail}. The circuit breaker is now open: stop, explain what you were trying and why it is not working. A person must acknowledge before work goes on.`,
    { needsHuman: true, alert: "circuit_tripped", effects: [{ kind: "circuit.opened", reason, detail }] },
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
    `Verification failed ${state.failedVerifications} times in a row (last: ${event.name})`,
  );
}

/**
 * Closed → open on more than 50 calls in a task, 5 identical consecutive calls, 20 calls within 10 s or 3
 * failed verifications in a row; open blocks until a person acknowledges (half-open), which lets one probe
 * call through; a good probe and a quiet cooldown close it, another anomaly opens it again.
 */
export const circuitBreaker: Guard = {
  name,
  order: 200,
  category: "progress-integrity",
  shortCircuit: true,
  evaluate(state, event, policy) {
    const breaker = state.breaker;
    switch (breaker.status) {
      case "open":
        if (event.kind !== "tool.requested" && event.kind !== "task.started") return pass(name);
        return block(
          name,
          `The circuit breaker is open (${lowerFirst(breaker.detail ?? breaker.reason ?? "an anomaly")}). Do not retry; a person must acknowledge it (\`reins circuit ack ${state.scope}\`).`,
          { needsHuman: true },
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
        if (event.kind !== "tool.requested") return pass(name);
        const found = anomaly(state, event, policy);
        if (found !== null) return trip(found.reason, found.detail);
        if (breaker.probe === "none")
          return { guard: name, verdict: "allow", effects: [{ kind: "circuit.probe" }] };
        if (breaker.probe === "in_flight") {
          return block(
            name,
            "The circuit breaker is half-open and its one probe call has not finished yet. Wait for its result.",
          );
        }
        return pass(name);
      }
      case "closed": {
        const failed = failedChecks(state, event, policy);
        if (failed !== null) return failed;
        if (event.kind !== "tool.requested") return pass(name);
        const found = anomaly(state, event, policy);
        return found === null ? pass(name) : trip(found.reason, found.detail);
      }
    }
  },
};
