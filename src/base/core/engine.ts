/** The engine: applies an event to a scope's state, asks the guards, returns their decision. */
import { sendProbe, tripBreaker } from "./breaker.js";
import { draftOf, inPlace, mine, writable, type Draft } from "./cow.js";
import { EMPTY } from "./empty.js";
import { decisionWith, hasEffects, summed, type Decision, type GuardVerdict, type Sum } from "./decision.js";
import { pass, type Effect, type Guard, type GuardResult } from "./guard.js";
import { isHumanEvent, type ReinsEvent } from "./reins-event.js";
import { pushCapped } from "./capped.js";
import { ReinsError, assertNever } from "./errors.js";
import { defaultGuards } from "./guards/index.js";
import { pipeline, type Pipeline } from "./pipeline.js";
import type { Policy } from "./policy.js";
import { recorded, recordedPass } from "./recorded.js";
import { applyEvent, fold, noteDenial, writableMeter } from "./reduce.js";
import type { Own } from "./own.js";
import { tally } from "./tally.js";
import { CAPS, LEVEL, initialState, type State } from "./state.js";

const standard = pipeline(defaultGuards);

/** The sum of a human event's decision: no guard is asked. */
const UNASKED: Sum = summed(EMPTY);

/**
 * Applies `event` to `state` in place and returns the decision. For callers that own the state (a store
 * transaction that just parsed it, a replay); everyone else uses `decide`.
 */
export function advance(
  state: State,
  event: ReinsEvent,
  policy: Policy,
  guards: Pipeline = standard,
): Decision {
  return step(state, mine(inPlace, state), event, policy, guards, inPlace);
}

/**
 * `advance`, writing below the top level of `state` only through `draft` (see cow.ts): the reducer and the
 * effects write `own`, the guards read `state` (the same object).
 */
function step(
  state: State,
  own: Own<State>,
  event: ReinsEvent,
  policy: Policy,
  guards: Pipeline,
  draft: Draft,
): Decision {
  if (event.scope !== state.scope) {
    throw new ReinsError("scope_mismatch", `event for ${event.scope} applied to the state of ${state.scope}`);
  }
  const seq = own.seq;
  const tripsBefore = own.breaker.trips;
  fold(own, event, policy, draft);
  const sum = isHumanEvent(event) ? UNASKED : evaluate(guards, state, event, policy);
  const decision = decisionWith(seq, sum);
  settle(own, event, decision, sum.effects, tripsBefore, draft);
  return decision;
}

/**
 * Applies a logged event to `state` in place exactly as `advance` did when it decided it, without asking
 * any guard: the facts from the event, the state changes from the recorded decision's effects. `policy`
 * must be the one the event was decided under (the reducer sizes windows with it). Rebuilds a state from
 * a snapshot and the log records after it, whatever guards decided them.
 */
export function reapply(state: State, event: ReinsEvent, decision: Decision, policy: Policy): void {
  if (event.scope !== state.scope || decision.seq !== state.seq) {
    throw new ReinsError(
      "scope_mismatch",
      `record ${event.scope}#${decision.seq} applied to the state of ${state.scope} at ${state.seq}`,
    );
  }
  const tripsBefore = state.breaker.trips;
  applyEvent(state, event, policy);
  settle(mine(inPlace, state), event, decision, hasEffects(decision.results), tripsBefore, inPlace);
}

/**
 * The guards whose deny is evidence of a loop (the same change written again, calls alternating or repeated
 * with unchanged results), not a rule of thumb: only their denials count toward the breaker's
 * `ignored_denials`, so a rule of thumb (calls per second, edits without a check, a cap) never stops alone.
 */
const LOOP_EVIDENCE: ReadonlySet<string> = new Set(["circular", "loop-patterns"]);

/** Whether `decision` denied its call on evidence of a loop. */
function loopDenied(decision: Decision): boolean {
  return (
    decision.verdict === "block" &&
    decision.results.some((r) => r.verdict === "block" && LOOP_EVIDENCE.has(r.guard))
  );
}

/**
 * The decision's effects on the state (`effects`: whether any result has some), and its count in the tally:
 * the part of `advance` after the guards.
 */
function settle(
  state: Own<State>,
  event: ReinsEvent,
  decision: Decision,
  effects: boolean,
  tripsBefore: number,
  draft: Draft,
): void {
  if (effects)
    for (const result of decision.results)
      if (result.effects !== undefined)
        for (const effect of result.effects) {
          // A blocked call never runs, so it cannot be the half-open breaker's probe.
          if (effect.kind === "circuit.probe" && decision.verdict === "block") continue;
          applyEffect(draft, state, effect, event.at);
        }
  if (event.kind === "tool.requested") noteDenial(draft, state, event, loopDenied(decision));
  const tripped = state.breaker.trips > tripsBefore ? state.breaker.reason : null;
  tally(state, event, decision, tripped, draft);
}

/**
 * The pure engine: the state after `event` and the decision for it. `state` is left untouched; the new
 * state shares every part the event did not change with it (copy-on-write, see cow.ts), so neither may be
 * changed in place afterwards except through `decide`.
 */
export function decide(
  state: State,
  event: ReinsEvent,
  policy: Policy,
  guards: Pipeline = standard,
): { state: State; decision: Decision } {
  const { next, own, draft } = draftOf(state);
  const decision = step(next, own, event, policy, guards, draft);
  return { state: next, decision };
}

/** Runs events through fresh states, one per scope, and returns a decision per event in order. */
export function replay(
  policy: Policy,
  events: Iterable<ReinsEvent>,
  guards: Pipeline = standard,
): Decision[] {
  const states = new Map<string, State>();
  // Walked by index, and the decisions' list made at its length: no iterator steps, no growing and copying.
  const list: readonly ReinsEvent[] = Array.isArray(events) ? events : [...events];
  const decisions = new Array<Decision>(list.length);
  let last: State | undefined;
  for (let i = 0; i < list.length; i++) {
    const event = list[i]!;
    // Most logs are one scope: the same state as the event before needs no lookup.
    let state = last !== undefined && last.scope === event.scope ? last : states.get(event.scope);
    if (state === undefined) {
      state = initialState(event.scope);
      states.set(event.scope, state);
    }
    last = state;
    decisions[i] = advance(state, event, policy, guards);
  }
  return decisions;
}

/** How a pipeline answers one kind of event: which guards it asks, and the last results list it kept. */
interface KindPlan {
  /** Per guard in order: null to ask it, or its pass as recorded, taken without asking (see Guard.answers). */
  answered: readonly (GuardVerdict | null)[];
  /** The positions of the guards asked, in order. */
  asked: readonly number[];
  /**
   * Per guard in order: its `pass(name)`, and that pass as a decision records it. A guard's pass is one
   * object, so telling it by identity and taking its shared record allocates nothing per allowed event.
   */
  passes: readonly GuardResult[];
  passed: readonly GuardVerdict[];
  /**
   * The last list of results a decision of this kind kept, with its sum. Most events are answered the same
   * way by every guard (each guard's pass is recorded as one object), so their decisions share one frozen
   * list instead of each keeping a copy (a long replay keeps a decision per event), and it is added up once.
   */
  last: Sum | undefined;
}

/** Per pipeline, its plan for each event kind, made the first time it sees the kind. */
const plans = new WeakMap<Pipeline, Map<string, KindPlan>>();

/** The plans of the pipeline asked last: most callers ask one pipeline, so the lookup is skipped. */
let lastPipeline: Pipeline | undefined;
let lastPlans: Map<string, KindPlan> | undefined;

function planFor(guards: Pipeline, kind: string): KindPlan {
  let byKind = guards === lastPipeline ? lastPlans : plans.get(guards);
  if (byKind === undefined) plans.set(guards, (byKind = new Map<string, KindPlan>()));
  lastPipeline = guards;
  lastPlans = byKind;
  let plan = byKind.get(kind);
  if (plan === undefined) {
    const passed = guards.map((g) => recordedPass(g.name));
    const answered = guards.map((g, i) =>
      g.answers === undefined || (g.answers as readonly string[]).includes(kind) ? null : passed[i]!,
    );
    const asked = answered.flatMap((answer, i) => (answer === null ? [i] : []));
    const passes = guards.map((g) => pass(g.name));
    plan = { answered, asked, passes, passed, last: undefined };
    byKind.set(kind, plan);
  }
  return plan;
}

function evaluate(guards: Pipeline, state: State, event: ReinsEvent, policy: Policy): Sum {
  const plan = planFor(guards, event.kind);
  const sum = plan.last;
  const last = sum?.results;
  const asked = plan.asked;
  // The common case: every guard asked answers as it did to the last event of this kind (a whole list, so
  // no guard cut it short), and the decision shares that list.
  let same = 0;
  let next: GuardVerdict | undefined;
  if (last !== undefined && last.length === guards.length) {
    while (same < asked.length) {
      const i = asked[same]!;
      next = resultOf(guards[i]!, plan, i, state, event, policy);
      if (next !== last[i]) break;
      same += 1;
    }
    if (same === asked.length) return sum!;
  }
  // Otherwise the list is made in order with the answers already had: the first `same` guards asked
  // answered as last time, and the next one answered `next`.
  const results: GuardVerdict[] = [];
  let k = 0;
  for (let i = 0; i < guards.length; i++) {
    const guard = guards[i]!;
    let result = plan.answered[i] ?? null;
    if (result === null) {
      result =
        k < same
          ? last![i]!
          : k === same && next !== undefined
            ? next
            : resultOf(guard, plan, i, state, event, policy);
      k += 1;
    }
    results.push(result);
    if (result.verdict === "block" && guard.shortCircuit) break;
  }
  return (plan.last = summed(Object.freeze(results)));
}

/**
 * The result of the guard at `i`, held to its grades and recorded (recorded.ts); a guard that throws is
 * skipped with advice (fail open).
 */
function resultOf(
  guard: Guard,
  plan: KindPlan,
  i: number,
  state: State,
  event: ReinsEvent,
  policy: Policy,
): GuardVerdict {
  try {
    const result = guard.evaluate(state, event, policy);
    return result === plan.passes[i] ? plan.passed[i]! : recorded(guard, result);
  } catch (error) {
    // Fail open: a broken guard must never stop an agent or crash the caller.
    const reason = error instanceof Error ? error.message : String(error);
    return {
      guard: guard.name,
      verdict: "warn",
      message: `The ${guard.name} guard failed (${reason}); it was skipped for this event.`,
      alert: "guard_failed",
    };
  }
}

function applyEffect(draft: Draft, state: Own<State>, effect: Effect, at: number): void {
  switch (effect.kind) {
    case "budget.fired": {
      const meter = writableMeter(draft, state, effect);
      if (meter !== undefined) {
        const fired = writable(draft, meter, "fired");
        fired[effect.resource] = Math.max(fired[effect.resource] ?? 0, effect.level);
      }
      break;
    }
    case "budget.paused": {
      const meter = writableMeter(draft, state, effect);
      if (meter !== undefined) {
        meter.paused = effect.resource;
        writable(draft, meter, "fired")[effect.resource] = LEVEL.pause;
      }
      break;
    }
    case "rate.fired":
      writable(draft, state, "rate").firedWindow = effect.window;
      break;
    case "circuit.opened":
      state.breaker = tripBreaker(state.breaker, effect.reason, effect.detail, at);
      break;
    case "completion.refused":
      state.refusedClaims += 1;
      break;
    case "completion.accepted":
      state.refusedClaims = 0;
      break;
    case "protection.used":
      state.protectionGrants = Math.max(0, state.protectionGrants - 1);
      break;
    case "pricing.noted": {
      const priced = writable(draft, state, "priced");
      if (priced === undefined) state.priced = [effect.model];
      else pushCapped(priced, effect.model, CAPS.priced);
      break;
    }
    case "circuit.probe":
      state.breaker = sendProbe(state.breaker, at);
      break;
    default:
      assertNever(effect);
  }
}
