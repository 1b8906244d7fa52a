/** The budget guard: warns, asks and pauses as a session's or task's spend nears and reaches its limits. */
import type { BudgetResource } from "../reins-event.js";
import { advise, pass, stop, type Effect, type Guard, type GuardResult } from "../guard.js";
import { formatCount, formatDuration, formatPercent, formatUsd } from "../format.js";
import {
  RESOURCES,
  activeMeters,
  levelOf,
  limitOf,
  meterLabel,
  usedOf,
  utilization,
  type MeterRef,
} from "../meter.js";
import type { Policy } from "../policy.js";
import { LEVEL } from "../state.js";

const name = "budget";
/** This guard's "nothing to say", made once: it is the answer to most events. */
const passed = pass(name);

/** Events that spend, or start spending; a paused budget blocks them. */
const spendingKinds = ["tool.requested", "task.started", "usage.recorded"] as const;
const spending = new Set<string>(spendingKinds);

const nouns: Record<BudgetResource, string> = {
  tokens: "token",
  usd: "USD",
  premiumRequests: "premium request",
  wallTimeMs: "time",
  toolCalls: "tool call",
};

function amount(resource: BudgetResource, n: number): string {
  switch (resource) {
    case "tokens":
      return `${formatCount(n)} tokens`;
    case "usd":
      return formatUsd(n);
    case "premiumRequests":
      return `${formatCount(n)} premium requests`;
    case "wallTimeMs":
      return formatDuration(n);
    case "toolCalls":
      return `${formatCount(n)} tool calls`;
  }
}

/** The resources each kind of meter may have a limit on under a policy, in RESOURCES order. */
interface Limited {
  session: readonly BudgetResource[];
  task: readonly BudgetResource[];
}

/**
 * Per policy, the resources that can have a limit: one without a base limit has none whatever was extended
 * (see limitOf), so it is never checked. A task's tokens may be limited by its task type: always checked.
 * Worked out once per policy (policies are not changed once resolved), not per event.
 */
const limitedBy = new WeakMap<Policy, Limited>();
let lastPolicy: Policy | undefined;
let lastLimited: Limited = { session: RESOURCES, task: RESOURCES };

function limitedOf(policy: Policy): Limited {
  if (policy === lastPolicy) return lastLimited;
  let limited = limitedBy.get(policy);
  if (limited === undefined) {
    const { session, task } = policy.budget;
    limited = {
      session: RESOURCES.filter((r) => session[r] !== null),
      task: RESOURCES.filter((r) => task[r] !== null || r === "tokens"),
    };
    limitedBy.set(policy, limited);
  }
  lastPolicy = policy;
  lastLimited = limited;
  return limited;
}

function extendHint(ref: MeterRef, scope: string, resource: BudgetResource): string {
  const target = ref.meter === "session" ? scope : `${scope} --task`;
  return `\`reins budget extend ${target} <amount>${resource === "tokens" ? "" : ` --resource ${resource}`} --reason "..."\``;
}

/**
 * Tokens, USD, premium requests, wall time and tool calls per session and per task: advises at 80%, asks a
 * person to confirm once at 90% (a deny that asks), stops at 100% until a person extends the budget (`soft`
 * mode never stops: a spent budget asks again). Each threshold fires once per meter and resource.
 */
export const budget: Guard = {
  name,
  order: 110,
  category: "resource-limits",
  shortCircuit: true,
  grades: ["advise", "deny", "stop"],
  answers: spendingKinds,
  evaluate(state, event, policy) {
    if (!spending.has(event.kind)) return passed;
    let worst: GuardResult = passed;
    // Made only when a threshold is met: most events meet none.
    let effects: Effect[] | undefined;
    let messages: string[] | undefined;
    // A threshold at which a person is asked to confirm: it turns this answer's advice into a deny that asks.
    let asks = false;
    const limited = limitedOf(policy);
    for (const ref of activeMeters(state)) {
      const meter = ref.meter === "session" ? state.budget.session : state.budget.tasks[ref.task];
      if (meter === undefined) continue;
      if (meter.paused !== null) {
        const limit = limitOf(meter, ref, meter.paused, policy) ?? 0;
        (messages ??= []).push(
          `The ${meterLabel(ref, state.scope)} budget is paused: ${amount(meter.paused, usedOf(meter, meter.paused, event.at))} used of ${amount(meter.paused, limit)}. Stop and wait until a person extends it with ${extendHint(ref, state.scope, meter.paused)}.`,
        );
        // Go on to the other meter: its thresholds must fire now, not be lost until this one is extended.
        if (worst.grade !== "stop") worst = stop(name, "");
        continue;
      }
      for (const resource of ref.meter === "session" ? limited.session : limited.task) {
        const limit = limitOf(meter, ref, resource, policy);
        if (limit === null) continue;
        const used = usedOf(meter, resource, event.at);
        const ratio = utilization(used, limit);
        const level = levelOf(ratio, policy);
        if (level <= (meter.fired[resource] ?? LEVEL.none)) continue;
        const where = `The ${meterLabel(ref, state.scope)} has used ${formatPercent(ratio)} of its ${nouns[resource]} budget (${amount(resource, used)} of ${amount(resource, limit)})`;
        const target = { meter: ref.meter, task: ref.task, resource };
        if (level === LEVEL.pause && policy.budget.mode === "hard") {
          (effects ??= []).push({ kind: "budget.paused", ...target });
          (messages ??= []).push(
            `${where}. Work is paused until a person extends it with ${extendHint(ref, state.scope, resource)}.`,
          );
          worst = stop(name, "", { alert: "budget_paused" });
        } else {
          (effects ??= []).push({ kind: "budget.fired", ...target, level });
          if (level >= LEVEL.ask) asks = true;
          const advice =
            level === LEVEL.warn
              ? "Finish the current step with as few tokens as possible."
              : level === LEVEL.ask
                ? "A person must confirm before work goes on."
                : "The budget is spent; soft mode lets work go on.";
          (messages ??= []).push(`${where}. ${advice}`);
          if (worst.grade === "allow") {
            worst = advise(name, "", {
              alert: level === LEVEL.ask ? "budget_confirmation" : "budget_warning",
            });
          } else if (worst.grade === "advise" && level === LEVEL.ask)
            worst = { ...worst, alert: "budget_confirmation" };
        }
      }
    }
    if (worst.grade === "allow") return worst;
    return {
      ...worst,
      message: (messages ?? []).join(" "),
      ...(effects !== undefined ? { effects } : {}),
      ...(asks && worst.grade === "advise" ? { grade: "deny", ask: true } : {}),
    };
  },
};
